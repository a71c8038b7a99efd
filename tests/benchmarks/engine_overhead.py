"""Engine overhead (issue 13): ``Engine.search`` against the raw LanceDB full-text call it wraps.

Run from the repository root:
    python tests/benchmarks/engine_overhead.py [--db PATH] [--table documents] [--queries 200]
        [--rounds 3] [--limit 10]

1. Table: with ``--db``, an existing lancelot database (e.g. a known-items index under
   results/known_items/); otherwise the BEIR SciFact abstracts (``../shared/data/scifact``) written
   as one row per abstract by ``TableWriter`` into a temporary folder (text only, no vectors).
2. Queries: the SciFact claims (the first ``--queries``), words as ``textmatch.query_words`` gives them.
3. For every query, in alternating order, ``--rounds`` times each:
   - raw text: ``table.search(words, query_type="fts", fts_columns="text").limit(L).to_list()``
     on one open LanceDB table: the plain call, text column only, every column of the rows;
   - raw as sent: the full-text query the engine sends for it (``reader.fts_query``: the text column,
     and the title, heading and path columns with their boosts when the table indexes them), with
     the engine's candidate depth and selected columns, ``to_arrow()``;
   - engine: ``Engine(settings).search(query, limit=L, search_type="text")`` (opens the table, reads
     its facts, ranks, caps chunks per document, builds hits and snippets).
   Medians over all calls (ms) and the engine's ratio to each raw call (target: <= 1.3x the raw
   call it wraps). Results are checked too: the engine's top hit must be among the raw call's rows.

Prints a Markdown table and writes tests/benchmarks/results/engine_overhead.json (git-ignored).
About 1 minute (most of it writing the SciFact table).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
try:  # PYTHONPATH=<a git archive> measures other code; else this checkout
    import lancelot_cli  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO))

DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "engine_overhead.json"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def scifact_table(db: Path) -> None:
    import hashlib

    from lancelot_cli.storage.write.table import TableWriter

    rows = []
    with open(DATA / "corpus.jsonl", encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            doc = json.loads(line)
            title, text = doc.get("title") or doc["_id"], doc.get("text") or ""
            path = f"{doc['_id']}.md"
            rows.append(
                {
                    "id": f"{path}#0",
                    "path": path,
                    "title": title,
                    "chunk": 0,
                    "text": f"# {title}\n\n{text}",
                    "hash": hashlib.sha256(text.encode()).hexdigest()[:16],
                    "file_size": len(text),
                    "file_mtime": n,
                    "file_hash": str(n),
                    "heading": title,
                }
            )
    t0 = time.perf_counter()
    TableWriter(str(db), "documents").write(rows)
    log(f"wrote {len(rows)} SciFact abstracts in {time.perf_counter() - t0:.1f} s")


def claims(limit: int) -> list[str]:
    with open(DATA / "queries.jsonl", encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle][:limit]


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="an existing lancelot database (default: SciFact in a temp folder)")
    parser.add_argument("--table", default="documents")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--output", type=Path, default=RESULTS)
    opts = parser.parse_args()

    import lancedb

    from lancelot_cli import settings as settings_module
    from lancelot_cli.engine import Engine
    from lancelot_cli.textmatch import query_words

    with tempfile.TemporaryDirectory(prefix="engine-overhead-") as tmp:
        db = opts.db
        if db is None:
            db = Path(tmp) / "db"
            scifact_table(db)
        config = Path(tmp) / "config"
        config.mkdir()
        settings = settings_module.load(
            environ={"LANCEDB_PATH": str(db), "LANCELOT_CONFIG_DIR": str(config), "LANCEDB_TABLE": opts.table}
        )
        engine = Engine(settings)
        table = lancedb.connect(str(db)).open_table(opts.table)
        try:  # the query the engine sends (absent before the weighted multi-column search)
            from lancelot_cli.engine.ranking import candidate_depth, field_boosts, reply_columns
            from lancelot_cli.storage.read.database import ReadOnlyTable, fts_query

            facts = ReadOnlyTable(opts.table, table).facts
            boosts = field_boosts(facts, "text")
            as_sent_columns = reply_columns(facts)
            depth = candidate_depth(opts.limit)
        except ImportError:
            fts_query = None
        queries = [q for q in claims(opts.queries) if query_words(q)]
        raw_text: list[float] = []
        raw_sent: list[float] = []
        engine_calls: list[float] = []
        misses = 0
        for query in queries[:5]:  # warm up: open files, caches
            engine.search(query, limit=opts.limit, search_type="text")
        for query in queries:
            words = " ".join(query_words(query))
            for _ in range(opts.rounds):
                t0 = time.perf_counter()
                raw_rows = table.search(words, query_type="fts", fts_columns="text").limit(opts.limit).to_list()
                raw_text.append(time.perf_counter() - t0)
                if fts_query is not None:
                    t0 = time.perf_counter()
                    sent = fts_query(words, "text", boosts)
                    table.search(sent, query_type="fts").limit(depth).select([*as_sent_columns, "_score"]).to_arrow()
                    raw_sent.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = engine.search(query, limit=opts.limit, search_type="text")
                engine_calls.append(time.perf_counter() - t0)
            if result.hits and raw_rows and fts_query is None and result.hits[0].id != raw_rows[0]["id"]:
                misses += 1
    rows = [(f"raw LanceDB FTS call, text column, limit {opts.limit:d}, all columns", median_ms(raw_text))]
    if raw_sent:
        rows.append(
            (
                f"raw LanceDB FTS call as the engine sends it (boosted columns, depth {depth}, reply columns)",
                median_ms(raw_sent),
            )
        )
    engine_ms = median_ms(engine_calls)
    out = {
        "db": str(opts.db or "SciFact (temp)"),
        "queries": len(queries),
        "rounds": opts.rounds,
        "limit": opts.limit,
        "raw_text_ms": rows[0][1],
        "raw_sent_ms": rows[1][1] if raw_sent else None,
        "engine_ms": engine_ms,
        "top_hit_differs": misses,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(out, indent=1))
    print(f"## Engine overhead ({out['db']}, {len(queries)} queries x {opts.rounds} rounds, limit {opts.limit})\n")
    print("| call | median ms | engine / call |\n|---|---:|---:|")
    for label, ms in rows:
        print(f"| {label} | {ms:.2f} | {engine_ms / ms:.2f}x |")
    print(f"| Engine.search(search_type='text') | {engine_ms:.2f} | 1.00x |")
    if fts_query is None:
        print(f"\nTop hit differs from the raw call's in {misses} of {len(queries)} queries.")
    log(f"wrote {opts.output}")


if __name__ == "__main__":
    main()
