"""What several phrasings cost (issue 38): one `lancedb_search` with four phrasings against the same
search of the question alone, in process (``Engine.search``) and over stdio (a spawned `lancelot
serve`, the MCP SDK's client). Target: p50 with four phrasings at most 2x the single search's.

Run from the repository root:
    python tests/benchmarks/phrasing_latency.py [--calls 120] [--embed-model local:DIR]
        [--data ../shared/data/scifact]

Corpora: the FastAPI docs (its known-item questions with their phrasings, written by a separate
model: known_items/README.md) and the BEIR SciFact abstracts (one Markdown file each; a claim's
four "phrasings" are four other claims, which cost what real ones would: the same length and
kind of words). Each is indexed once with ``index_folder`` (text only, or with ``--embed-model``
vectors, when searches are hybrid). Calls alternate single / four phrasings (A B A B) so drift
hits both alike; the table gives p50 and p95 per side, the ratio of the p50s and the median of the
per-question ratios.
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from tests.benchmarks.quality import DATA, load_corpus, load_queries, markdown, percentile  # noqa: E402
from tests.benchmarks.roundtrip import serve_env  # noqa: E402

FASTAPI = REPO.parent / "shared" / "data" / "fastapi-docs" / "docs" / "en" / "docs"
PHRASINGS = 4


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fastapi_questions() -> list[tuple[str, list[str]]]:
    rows = [json.loads(line) for line in (HERE / "known_items" / "fastapi.jsonl").read_text().splitlines() if line]
    return [(row["query"], row["queries"][:PHRASINGS]) for row in rows if len(row.get("queries", [])) >= PHRASINGS]


def scifact_questions(data: Path, count: int) -> list[tuple[str, list[str]]]:
    claims = list(load_queries(data).values())[: count + PHRASINGS]
    return [(claims[i], claims[i + 1 : i + 1 + PHRASINGS]) for i in range(count)]


def build(folder: Path, db: Path, env: dict[str, str], model: str | None) -> None:
    """`lancelot index` as a user runs it (with ``--embed-model``, or text only)."""
    import subprocess

    started = time.perf_counter()
    embed = ["--embed-model", model] if model else ["--no-embed"]
    subprocess.run(
        [sys.executable, "-m", "lancelot_cli", "index", str(folder), str(db), *embed],
        env=env,
        check=True,
        capture_output=True,
    )
    log(f"indexed {folder.name} in {time.perf_counter() - started:.1f} s")


def environment(db: Path, config: Path, model: str | None) -> dict[str, str]:
    env = {**serve_env(db, config), "LANCELOT_WARM": "0"}
    if model:
        env["EMBEDDING_MODEL"] = model
    return env


def in_process(env: dict[str, str], questions: list[tuple[str, list[str]]], calls: int) -> dict[str, list[float]]:
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    engine = Engine(load(environ=env), find_key=lambda: None)
    times: dict[str, list[float]] = {"single": [], "four": []}
    for i in range(calls + 10):
        query, others = questions[i % len(questions)]
        for side, queries in (("single", None), ("four", others)):
            started = time.perf_counter()
            engine.search(query, queries=queries)
            if i >= 10:  # the first calls warm the caches and the model
                times[side].append((time.perf_counter() - started) * 1000)
    return times


async def over_stdio(env: dict[str, str], questions: list[tuple[str, list[str]]], calls: int) -> dict[str, list[float]]:
    import mcp

    params = mcp.StdioServerParameters(command=sys.executable, args=["-m", "lancelot_cli", "serve"], env=env)
    times: dict[str, list[float]] = {"single": [], "four": []}
    async with mcp.Client(params) as client:
        for i in range(calls + 10):
            query, others = questions[i % len(questions)]
            for side, arguments in (("single", {"query": query}), ("four", {"query": query, "queries": others})):
                started = time.perf_counter()
                result = await client.call_tool("lancedb_search", arguments)
                if result.is_error:
                    raise SystemExit(f"lancedb_search failed: {result.content}")
                if i >= 10:
                    times[side].append((time.perf_counter() - started) * 1000)
    return times


def row(corpus: str, where: str, times: dict[str, list[float]]) -> list[str]:
    single, four = times["single"], times["four"]
    ratios = [b / a for a, b in zip(single, four, strict=True)]
    return [
        corpus,
        where,
        f"{statistics.median(single):.1f} / {percentile(single, 0.95):.1f}",
        f"{statistics.median(four):.1f} / {percentile(four, 0.95):.1f}",
        f"{statistics.median(four) / statistics.median(single):.2f}x",
        f"{statistics.median(ratios):.2f}x",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=120, help="calls per side after 10 warm-up calls")
    parser.add_argument("--embed-model", metavar="MODEL", help="index with vectors (local:DIR): searches are hybrid")
    parser.add_argument("--data", type=Path, default=DATA, help="the BEIR SciFact folder")
    opts = parser.parse_args()
    import anyio

    lines = []
    with tempfile.TemporaryDirectory(prefix="phrasing-latency-") as work:
        root = Path(work)
        scifact = root / "scifact"
        scifact.mkdir()
        for doc_id, (title, text) in load_corpus(opts.data).items():
            (scifact / f"{doc_id}.md").write_text(markdown(title, text), encoding="utf-8")
        corpora = {
            "FastAPI docs": (FASTAPI, fastapi_questions()),
            "SciFact": (scifact, scifact_questions(opts.data, 100)),
        }
        for name, (folder, questions) in corpora.items():
            db = root / f"db-{folder.name}"
            env = environment(db, root / "config", opts.embed_model)
            build(folder, db, env, opts.embed_model)
            lines.append(row(name, "in process", in_process(env, questions, opts.calls)))
            lines.append(row(name, "stdio", anyio.run(over_stdio, env, questions, opts.calls)))
            log(" | ".join(lines[-1]))
    mode = "local hybrid" if opts.embed_model else "text"
    print(f"{mode} search, {opts.calls} calls per side, alternating; p50 / p95 in ms\n")
    header = ["corpus", "where", "question alone", "with 4 phrasings", "ratio of p50s", "median ratio"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for line in lines:
        print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    main()
