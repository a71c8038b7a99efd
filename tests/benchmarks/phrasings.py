"""Several phrasings in one search (issue 38): how to fuse them, chosen on the tune splits.

Each question of a corpus's question file carries ``queries``: 3-4 other phrasings that a separate
language model wrote from the question and the tool description alone (known_items/README.md).
For every phrasing this runs the engine's own search once, in process, on the database that
``known_items.py`` cached for the corpus (text, or local hybrid with ``--embed-model``), keeping
its first ``DEPTH`` chunks unfused (``perDocument`` 0). The fusions are then computed from those
lists, so a grid of fusion settings costs no more searches:

* ``level``: reciprocal-rank fusion of chunk ranks, or of page ranks (a page ranked where its best
  chunk stands, its chunks then in their own fused order);
* ``k``: the RRF constant; ``w0``: the weight of the question as asked (every other phrasing 1).

Every fusion is scored as known_items.py scores a reply: at most 2 chunks per page, 10 hits, MRR@10
of the answer pages. Printed per corpus and split, for all questions and per kind (natural, keyword),
with query-only as the baseline row.

Run from the repository root, after known_items.py (or corpora.py) built the corpora's databases:
    python tests/benchmarks/phrasings.py [--only fastapi,pg,...] [--embed-model local:DIR]
        [--split tune] [--k 10 30 60] [--w0 1 1.5 2] [--level chunk page]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from corpora import CORPORA, QUESTIONS, source_folder  # noqa: E402
from known_items import CACHE, K, load_questions, norm  # noqa: E402

DEPTH = 50  # chunks kept per phrasing: the engine's candidate depth for 10 hits
PER_PAGE = 2


def cached_db(src: str, model: str) -> Path | None:
    """The newest database known_items.py built for ``src`` (and embedding model)."""
    found = []
    for info in CACHE.glob("db-*/known_items_index.json"):
        data = json.loads(info.read_text())
        if data["src"] == str(Path(src).resolve()) and data.get("embed_model", "") == model:
            found.append(info)
    return max(found, key=lambda p: p.stat().st_mtime).parent if found else None


def ranked_lists(db: Path, questions: list[dict[str, Any]], mode: str) -> list[list[list[tuple[str, str]]]]:
    """Per question, per phrasing (the question first): its (chunk id, page) ranking."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "OPENAI_", "EMBEDDING_"))}
    engine = Engine(load(environ={**environ, "LANCEDB_PATH": str(db)}))
    out = []
    for question in questions:
        lists = []
        for text in [question["query"], *question.get("queries", [])]:
            found = engine.search(text, limit=DEPTH, search_type=mode, per_document=0)  # type: ignore[arg-type]
            lists.append([(hit.id, norm(hit.source)) for hit in found.hits])
        out.append(lists)
    return out


def fuse(lists: Sequence[Sequence[tuple[str, str]]], level: str, k: float, w0: float) -> list[str]:
    """Pages in fused order, at most PER_PAGE chunks each, K hits (as a reply lists them)."""
    chunk_score: dict[str, float] = {}
    page_of: dict[str, str] = {}
    page_score: dict[str, float] = {}
    order: dict[str, int] = {}
    for n, ranking in enumerate(lists):
        weight = w0 if n == 0 else 1.0
        pages_seen: list[str] = []
        for rank, (chunk, page) in enumerate(ranking, start=1):
            order.setdefault(chunk, len(order))
            page_of[chunk] = page
            chunk_score[chunk] = chunk_score.get(chunk, 0.0) + weight / (k + rank)
            if page not in pages_seen:
                pages_seen.append(page)
                page_score[page] = page_score.get(page, 0.0) + weight / (k + len(pages_seen))
    if level == "chunk":
        chunks = sorted(chunk_score, key=lambda c: (-chunk_score[c], order[c]))
    else:  # a page's chunks take its place, best page first
        chunks = sorted(chunk_score, key=lambda c: (-page_score[page_of[c]], -chunk_score[c], order[c]))
    shown: list[str] = []
    per: dict[str, int] = {}
    held: list[str] = []
    for chunk in chunks:
        page = page_of[chunk]
        if per.get(page, 0) >= PER_PAGE:
            held.append(page)
            continue
        per[page] = per.get(page, 0) + 1
        shown.append(page)
        if len(shown) == K:
            break
    return (shown + held)[:K]


def reciprocal(pages: list[str], answers: list[str]) -> float:
    wanted = {norm(a) for a in answers}
    return next((1 / n for n, page in enumerate(pages, start=1) if page in wanted), 0.0)


def query_only(lists: Sequence[Sequence[tuple[str, str]]]) -> list[str]:
    return fuse(lists[:1], "chunk", 60, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated corpora (default: every one with phrasings and a database)")
    parser.add_argument("--embed-model", default="", metavar="MODEL", help="the hybrid databases (auto search)")
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    parser.add_argument("--k", type=float, nargs="+", default=[10, 30, 60])
    parser.add_argument("--w0", type=float, nargs="+", default=[1.0, 1.5, 2.0])
    parser.add_argument("--level", nargs="+", default=["chunk", "page"], choices=("chunk", "page"))
    parser.add_argument("--depth", type=int, default=DEPTH, help=f"chunks of each phrasing fused (at most {DEPTH})")
    parser.add_argument("--save", type=Path, help="write every corpus's lists here (JSON), to reuse with --load")
    parser.add_argument("--load", type=Path, help="lists written by --save instead of searching")
    opts = parser.parse_args()
    mode = "auto" if opts.embed_model else "text"
    saved: dict[str, Any] = json.loads(opts.load.read_text()) if opts.load else {}
    grid = [(level, k, w0) for level in opts.level for k in opts.k for w0 in opts.w0]
    rows: dict[str, dict[str, list[float]]] = {}  # corpus -> setting -> reciprocal ranks
    kinds: dict[str, list[str]] = {}
    for corpus in opts.only.split(",") if opts.only else CORPORA:
        questions = load_questions(QUESTIONS / CORPORA[corpus][1]) if (QUESTIONS / CORPORA[corpus][1]).exists() else []
        questions = [q for q in questions if q.get("queries") and (opts.split == "all" or q["split"] == opts.split)]
        if not questions:
            continue
        if corpus in saved and all(q["id"] in saved[corpus] for q in questions):
            lists = [saved[corpus][q["id"]] for q in questions]
        else:
            db = cached_db(source_folder(corpus), opts.embed_model)
            if db is None:
                print(f"{corpus}: no database cached by known_items.py; run it first", file=sys.stderr)
                continue
            print(f"{corpus}: {len(questions)} questions, {mode} search on {db.name}", file=sys.stderr, flush=True)
            lists = ranked_lists(db, questions, mode)
            saved.setdefault(corpus, {}).update({q["id"]: lst for q, lst in zip(questions, lists, strict=True)})
        lists = [[ranking[: opts.depth] if n else ranking for n, ranking in enumerate(lst)] for lst in lists]
        kinds[corpus] = [q.get("kind") or "?" for q in questions]
        pairs = list(zip(lists, questions, strict=True))
        rows[corpus] = {"query only": [reciprocal(query_only(lst), q["answers"]) for lst, q in pairs]}
        for level, k, w0 in grid:
            rows[corpus][f"{level} k={k:g} w0={w0:g}"] = [
                reciprocal(fuse(lst, level, k, w0), q["answers"]) for lst, q in zip(lists, questions, strict=True)
            ]
    if opts.save:
        opts.save.write_text(json.dumps(saved))
    print_table(rows, kinds, opts.split, mode)


def print_table(rows: dict[str, dict[str, list[float]]], kinds: dict[str, list[str]], split: str, mode: str) -> None:
    corpora = list(rows)
    settings = list(next(iter(rows.values()))) if rows else []
    print(f"MRR@10 on the {split} split, {mode} search; mean: the corpora's mean; natural / keyword: all questions\n")
    print("| fusion | " + " | ".join(corpora) + " | mean | natural | keyword |")
    print("|---" * (len(corpora) + 4) + "|")
    for setting in settings:
        cells = [statistics.fmean(rows[c][setting]) for c in corpora]
        by_kind = {
            kind: [r for c in corpora for r, k in zip(rows[c][setting], kinds[c], strict=True) if k == kind]
            for kind in ("natural", "keyword")
        }
        kind_cells = [f"{statistics.fmean(v):.3f}" if v else "—" for v in by_kind.values()]
        print(
            f"| {setting} | "
            + " | ".join(f"{v:.3f}" for v in cells)
            + f" | {statistics.fmean(cells):.3f} | "
            + " | ".join(kind_cells)
            + " |"
        )


if __name__ == "__main__":
    main()
