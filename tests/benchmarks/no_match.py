"""How well the "no good match" signal (lancelot_cli/engine/strength.py) tells questions a table can
answer from questions it cannot: each tuning table is asked its own questions (in-domain) and the
other corpora's (off-topic), by text search with 10 hits, and the best hit's ``strength`` is scored.

Run from the repository root (``apt-get install postgresql-doc-15`` first):
    python tests/benchmarks/no_match.py [--db DIR]
    python tests/benchmarks/no_match.py --type vector --embed-model local:DIR [--tables fastapi]

With ``--type vector`` the tables are built with vectors of ``--embed-model`` (in DIR-vector) and
searched by vector (a hit's strength: its share of terms or its closeness, engine/strength.py).

Tables (built in DIR, text only, unless there): ``scifact`` (one Markdown file per SciFact abstract,
``--chunk-size 12000``), ``fastapi`` (the FastAPI docs) and ``pg`` (the PostgreSQL 15 manual).
Questions: SciFact train claims (never test), and the ``tune`` questions of known_items/ for FastAPI,
PostgreSQL, Django and Redux (never ``heldout``); 200 train claims (seed 1) are the off-topic
questions of the two manuals. Prints, per table, ROC AUC of the best hit's strength and of its
``matched`` and BM25 score, and for floors 0.3-0.7 the share of in-domain questions that pass and
of off-topic ones flagged. The held-out corpora (python3-doc, git-doc, gimp-help-ja,
debian-reference-zh-cn) are not used, and must not be.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from lancelot_cli.engine import Engine  # noqa: E402
from lancelot_cli.engine.strength import MATCH_FLOOR  # noqa: E402
from lancelot_cli.settings import load  # noqa: E402

SCIFACT = REPO.parent / "shared" / "data" / "scifact"
KNOWN = Path(__file__).resolve().parent / "known_items"
SOURCES = {
    "fastapi": REPO.parent / "shared" / "data" / "fastapi-docs" / "docs" / "en" / "docs",
    "pg": Path("/usr/share/doc/postgresql-doc-15/html"),
}
FLOORS = (0.3, 0.4, 0.5, 0.6, 0.7)


def tune(name: str) -> list[str]:
    rows = [json.loads(line) for line in (KNOWN / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["query"] for r in rows if r["split"] == "tune"]


def claims() -> list[str]:
    train = {line.split("\t")[0] for line in (SCIFACT / "qrels" / "train.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r["text"] for r in rows if r["_id"] in train]


def build(db: Path, tables: list[str], model: str | None = None) -> None:
    from lancelot_cli.indexer import index_folder

    vectors: dict[str, Any] = {"embed": False}
    if model:
        from lancelot_cli.local_embed import LocalEmbedder

        embedder = LocalEmbedder(model)
        vectors = {"embed": embedder.embed, "model": embedder.model}
    have = {p.name[: -len(".lance")] for p in db.glob("*.lance")} if db.exists() else set()
    if "scifact" in tables and "scifact" not in have:
        with tempfile.TemporaryDirectory() as folder:
            for line in (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
                doc = json.loads(line)
                Path(folder, f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")
            index_folder(folder, str(db), table="scifact", chunk_size=12000, **vectors)
    for table, src in SOURCES.items():
        if table in tables and table not in have:
            index_folder(str(src), str(db), table=table, **vectors)


def auc(pos: list[float], neg: list[float]) -> float:
    """The chance that an in-domain question's value beats an off-topic one's (ties count half)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best(engine: Engine, table: str, question: str, search_type: str = "text") -> dict[str, float]:
    found = engine.search(question, table=table, limit=10, search_type=search_type)
    if not found.hits:
        return {"strength": 0.0, "matched": 0.0, "bm25": 0.0, "flagged": 1.0}
    return {
        "strength": max(h.strength or 0.0 for h in found.hits),
        "matched": max(h.matched for h in found.hits),
        "bm25": found.hits[0].score if search_type == "text" else -found.hits[0].score,  # distance: lower is closer
        "flagged": float(found.no_good_match),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "lancelot-no-match-db")
    parser.add_argument("--type", choices=("text", "vector"), default="text", help="the search type asked")
    parser.add_argument("--embed-model", help="with --type vector: the local model (local:DIR) to embed with")
    parser.add_argument("--tables", default="scifact,fastapi,pg", help="comma-separated: scifact, fastapi, pg")
    args = parser.parse_args()
    if args.type == "vector":
        if not args.embed_model:
            parser.error("--type vector needs --embed-model local:DIR")
        args.db = args.db.with_name(args.db.name + "-vector")
    tables = args.tables.split(",")
    build(args.db, tables, args.embed_model if args.type == "vector" else None)
    engine = Engine(load(environ={**os.environ, "LANCEDB_PATH": str(args.db)}))
    sample = random.Random(1).sample(claims(), 200)
    fa, pg, dj, rx = (tune(f) for f in ("fastapi.jsonl", "postgresql15.jsonl", "django32.jsonl", "redux.jsonl"))
    sets = {"scifact": (claims(), fa + pg + dj + rx), "fastapi": (fa, sample + pg), "pg": (pg, sample + fa + rx)}
    load_average = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load {load_average}; floor shipped: {MATCH_FLOOR}; search type: {args.type}\n")
    print("| table | in / off | AUC strength | AUC matched | AUC score | " + " | ".join(f"@{f}" for f in FLOORS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(FLOORS))
    for table, (inside, outside) in sets.items():
        if table not in tables:
            continue
        pos: list[dict[str, Any]] = [best(engine, table, q, args.type) for q in inside]
        neg: list[dict[str, Any]] = [best(engine, table, q, args.type) for q in outside]
        aucs = [auc([p[k] for p in pos], [n[k] for n in neg]) for k in ("strength", "matched", "bm25")]
        passed = [sum(p["strength"] >= f for p in pos) / len(pos) for f in FLOORS]
        flagged = [sum(n["strength"] < f for n in neg) / len(neg) for f in FLOORS]
        cells = [f"{a:.2f} / {b:.2f}" for a, b in zip(passed, flagged, strict=True)]
        print(
            f"| {table} | {len(pos)} / {len(neg)} | "
            + " | ".join(f"{a:.3f}" for a in aucs)
            + " | "
            + " | ".join(cells)
            + " |"
        )
    print("\n@floor: share of in-domain questions whose best hit passes / share of off-topic ones flagged")


if __name__ == "__main__":
    main()
