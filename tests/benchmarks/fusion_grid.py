"""Fusion variants scored offline (issue 47 #4): for each question, the text and vector rankings
(first 50 chunks, no per-document cap) of a database known_items.py built, fused several ways (RRF k,
a top-rank bonus as qmd adds, the text leg weighing more), each scored as known_items.py scores a
reply (2 chunks a page, 10 hits, MRR@10), per question kind.

Run from the repository root:
    python tests/benchmarks/fusion_grid.py DB QUESTIONS.jsonl hybrid      # a table with local vectors
    python tests/benchmarks/fusion_grid.py DB QUESTIONS.jsonl phrasings   # text, with each question's queries
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.settings import load

DEPTH = 50
Ranking = list[tuple[str, str]]  # (chunk id, source)


def reciprocal_rank(sources: Sequence[str], answers: Sequence[str]) -> float:
    """1/rank of the first answer among 10 hits of at most 2 chunks a page (0 when none)."""
    seen: dict[str, int] = {}
    kept: list[str] = []
    for source in sources:
        if seen.get(source, 0) >= 2:
            continue
        seen[source] = seen.get(source, 0) + 1
        kept.append(source)
        if len(kept) == 10:
            break
    wanted = [a.strip("/") for a in answers]
    for rank, source in enumerate(kept, 1):
        if any(source.strip("/") == a or source.strip("/").endswith("/" + a) for a in wanted):
            return 1 / rank
    return 0.0


def rrf(
    lists: Sequence[Ranking], k: float, top: float = 0.0, next_two: float = 0.0, weights: Sequence[float] = ()
) -> list[str]:
    """Reciprocal rank fusion, with ``top`` added for a rank 1 and ``next_two`` for ranks 2-3."""
    score: dict[str, float] = {}
    source: dict[str, str] = {}
    for n, ranking in enumerate(lists):
        weight = weights[n] if weights else 1.0
        for rank, (chunk, where) in enumerate(ranking, 1):
            bonus = top if rank == 1 else next_two if rank <= 3 else 0.0
            score[chunk] = score.get(chunk, 0.0) + weight / (k + rank) + bonus
            source[chunk] = where
    return [source[c] for c in sorted(score, key=lambda c: -score[c])]


def rankings(engine: Engine, question: dict[str, Any], mode: str) -> tuple[list[Ranking], list[Ranking]]:
    said = [question["query"], *(question.get("queries") or [] if mode == "phrasings" else [])]
    text, vector = [], []
    for query in said:
        text.append(
            [(h.id, h.source) for h in engine.search(query, limit=DEPTH, search_type="text", per_document=0).hits]
        )
        if mode == "hybrid":
            try:
                hits = engine.search(query, limit=DEPTH, search_type="vector", per_document=0).hits
            except LancelotError:
                hits = ()
            vector.append([(h.id, h.source) for h in hits])
    return text, vector


def main(db: str, questions_file: str, mode: str) -> None:
    engine = Engine(load({"LANCEDB_PATH": db}))
    questions = [json.loads(line) for line in Path(questions_file).read_text(encoding="utf-8").splitlines() if line]
    found = [(q, *rankings(engine, q, mode)) for q in questions]
    variants: dict[str, Callable[[list[Ranking], list[Ranking]], list[str]]] = {}
    if mode == "hybrid":
        variants["text"] = lambda t, v: [s for _, s in t[0]]
        variants["vector"] = lambda t, v: [s for _, s in v[0]]
        for text_weight in (1.5, 2.0):
            for top, two in ((0, 0), (0.05, 0.02), (0.1, 0.04)):
                name = f"rrf k=10 text x{text_weight} bonus {top}/{two}"
                variants[name] = lambda t, v, w=text_weight, a=top, b=two: rrf([t[0], v[0]], 10, a, b, (w, 1.0))
        for k in (10, 20, 60):
            for top, two in ((0, 0), (0.02, 0.01), (0.05, 0.02), (0.1, 0.04)):
                variants[f"rrf k={k} bonus {top}/{two}"] = lambda t, v, k=k, a=top, b=two: rrf([t[0], v[0]], k, a, b)
    else:
        variants["query only"] = lambda t, v: [s for _, s in t[0]]
        for k in (10, 20):
            for top, two in ((0, 0), (0.02, 0.01), (0.05, 0.02)):
                variants[f"rrf k={k} bonus {top}/{two}"] = lambda t, v, k=k, a=top, b=two: rrf(t, k, a, b)
    for name, fuse in variants.items():
        by_kind: dict[str, list[float]] = {}
        scores = []
        for question, text, vector in found:
            score = reciprocal_rank(fuse(text, vector), question["answers"])
            scores.append(score)
            by_kind.setdefault(question.get("kind", "?"), []).append(score)
        kinds = " ".join(f"{kind}={statistics.mean(v):.3f}" for kind, v in sorted(by_kind.items()))
        print(f"{name:36s} all={statistics.mean(scores):.3f} {kinds}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
