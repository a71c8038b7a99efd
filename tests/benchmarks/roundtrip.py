"""Round trip: `lancedb_search` through a spawned `lancelot serve` over stdio (the MCP SDK's client)
against the same search run by the engine in this process; plus the size of a default reply.

Run from the repository root:
    python tests/benchmarks/roundtrip.py [--calls 200] [--warmup 10] [--data ../shared/data/scifact]

1. Indexes examples/sample-docs and the BEIR SciFact abstracts (one Markdown file each, default
   chunk size, text only) with ``index_folder``.
2. Starts ``lancelot serve`` with ``mcp.Client(mcp.StdioServerParameters(...))`` (no API key, so
   search is BM25), and an ``Engine`` over the same database in this process.
3. For each query, one ``engine.search(query)`` then one ``call_tool("lancedb_search", {"query": query})``
   (default arguments: limit 20, searchType auto), alternating so drift hits both alike. The
   overhead is the p50 of the stdio calls minus the p50 of the in-process calls, and the median of
   the per-query differences (target: <= 3 ms). Then the same with a bare newline-delimited
   JSON-RPC client on a second server's pipes, which separates the SDK client's own cost.
   Then the SDK's floor, with the same client: ``echo_server.py`` over stdio, a bare MCPServer that
   answers each query with the reply lancelot gave (recorded in step 3; same output schema), and
   its ``hello`` tool ("hi"). Lancelot's own server code costs the overhead minus the echo's p50.
4. Reply size: characters of the tool result's text (the compact JSON an agent reads), hits per reply,
   and snippet characters per hit (mean and max), for SciFact claims and sample-docs questions.

Prints Markdown tables and writes tests/benchmarks/results/roundtrip.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from lancelot_cli.wire import to_wire  # noqa: E402 - the engine's replies in their JSON form
from tests.benchmarks.quality import DATA, load_corpus, load_queries, markdown, percentile  # noqa: E402

SAMPLE_DOCS = REPO / "examples" / "sample-docs"
RESULTS = Path(__file__).resolve().parent / "results" / "roundtrip.json"
TARGET_MS = 3.0
SAMPLE_QUERIES = [
    "refund policy",
    "lost parcel claim form",
    "MAX_SAVED",
    "gift cards",
    "worn or used gear",
    "sale items refund",
    "refunds for online orders",
    "end-of-day count",
    "repair workshop turnaround",
    "stock counts",
    "customer privacy data",
    "shipping and delivery times",
    "warranty claim",
    "price match",
    "rent a kayak deposit",
    "processing a refund at the till",
    "store credit",
    "what does the glossary say about SKU",
    "how long do repairs take",
    "can I return something bought online",
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def lancelot_command() -> list[str]:
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def reply_sizes(replies: list[dict[str, Any]], texts: list[str]) -> dict[str, Any]:
    snippets = [len(hit["snippet"]) for reply in replies for hit in reply["hits"]]
    hits = [len(reply["hits"]) for reply in replies]
    chars = [len(t) for t in texts]
    return {
        "replies": len(replies),
        "reply_chars_mean": statistics.fmean(chars),
        "reply_chars_max": max(chars),
        "hits_mean": statistics.fmean(hits),
        "hits_max": max(hits),
        "snippet_chars_mean": statistics.fmean(snippets) if snippets else 0.0,
        "snippet_chars_max": max(snippets) if snippets else 0,
        "chars_per_hit_mean": sum(chars) / max(1, sum(hits)),
    }


def serve_env(db: Path, config: Path) -> dict[str, str]:
    """The environment of a measured `lancelot serve` (and of the engine beside it): this checkout,
    the database, a config folder of its own, no key and none of the caller's Lancelot settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_"))}
    env.update(
        LANCEDB_PATH=str(db),
        LANCELOT_CONFIG_DIR=str(config),
        PYTHONPATH=str(REPO),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    return env


async def measure(db: Path, config: Path, queries: list[str], calls: int, warmup: int) -> dict[str, Any]:
    import mcp

    from lancelot_cli import settings as settings_module
    from lancelot_cli.engine import Engine

    env = serve_env(db, config)
    engine = Engine(settings_module.load(environ=env), find_key=lambda: None)
    command = lancelot_command()
    params = mcp.StdioServerParameters(command=command[0], args=[*command[1:], "serve"], env=env)
    local_ms: list[float] = []
    stdio_ms: list[float] = []
    replies: list[dict[str, Any]] = []
    texts: list[str] = []
    recorded: dict[str, Any] = {}
    mismatches = 0
    async with mcp.Client(params) as client:
        for i in range(warmup):
            engine.search(queries[i % len(queries)])
            await client.call_tool("lancedb_search", {"query": queries[i % len(queries)]})
        for i in range(calls):
            query = queries[i % len(queries)]
            t0 = time.perf_counter()
            local = to_wire(engine.search(query))
            local_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"query": query})
            stdio_ms.append((time.perf_counter() - t0) * 1000)
            if result.is_error:
                raise SystemExit(f"lancedb_search failed for {query!r}: {result.content}")
            text = "".join(getattr(block, "text", "") for block in result.content)
            reply = json.loads(text)
            if [h["id"] for h in reply["hits"]] != [h["id"] for h in local["hits"]]:
                mismatches += 1
            recorded.setdefault(query, result.model_dump(mode="json", by_alias=True, exclude_none=True))
            if i < len(queries):
                replies.append(reply)
                texts.append(text)
    diffs = [s - loc for s, loc in zip(stdio_ms, local_ms, strict=True)]
    raw = raw_pipe(env, config, engine, queries, calls, warmup)
    floor = await sdk_floor(env, config, recorded, queries, calls, warmup)
    return {
        "calls": calls,
        "in_process_p50_ms": percentile(local_ms, 0.5),
        "in_process_p95_ms": percentile(local_ms, 0.95),
        "stdio_p50_ms": percentile(stdio_ms, 0.5),
        "stdio_p95_ms": percentile(stdio_ms, 0.95),
        "overhead_p50_ms": percentile(stdio_ms, 0.5) - percentile(local_ms, 0.5),
        "overhead_median_of_pairs_ms": statistics.median(diffs),
        "overhead_p95_of_pairs_ms": percentile(diffs, 0.95),
        "hit_order_mismatches": mismatches,
        "raw_pipe": raw,
        "sdk_floor": floor,
        "search_type": replies[0]["searchType"] if replies else None,
        "sizes": reply_sizes(replies, texts),
    }


async def sdk_floor(
    env: dict[str, str], config: Path, recorded: dict[str, Any], queries: list[str], calls: int, warmup: int
) -> dict[str, Any]:
    """The same client calling ``echo_server.py`` over stdio: lancelot's recorded replies (no search)
    and the hello tool, alternating."""
    import mcp

    replies = config / "echo-replies.json"
    replies.write_text(json.dumps(recorded), encoding="utf-8")
    echo = Path(__file__).with_name("echo_server.py")
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(echo), str(replies)], env=env)
    echo_ms: list[float] = []
    hello_ms: list[float] = []
    async with mcp.Client(params) as client:
        for i in range(warmup):
            await client.call_tool("lancedb_search", {"query": queries[i % len(queries)]})
            await client.call_tool("hello", {})
        for i in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool("lancedb_search", {"query": queries[i % len(queries)]})
            echo_ms.append((time.perf_counter() - t0) * 1000)
            if result.is_error or result.structured_content != recorded[queries[i % len(queries)]].get(
                "structuredContent"
            ):
                raise SystemExit(f"echo_server did not give back the recorded reply: {result.content[:1]}")
            t0 = time.perf_counter()
            await client.call_tool("hello", {})
            hello_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "echo_p50_ms": percentile(echo_ms, 0.5),
        "echo_p95_ms": percentile(echo_ms, 0.95),
        "hello_p50_ms": percentile(hello_ms, 0.5),
        "hello_p95_ms": percentile(hello_ms, 0.95),
    }


def raw_pipe(
    env: dict[str, str], config: Path, engine: Any, queries: list[str], calls: int, warmup: int
) -> dict[str, Any]:
    """The same calls over the server's stdin/stdout with a bare newline-delimited JSON-RPC client
    (no SDK on the client side: no result model, no output-schema validation)."""
    from tests.benchmarks.scale import StdioServer

    server = StdioServer(env, config)
    local_ms: list[float] = []
    pipe_ms: list[float] = []
    try:
        server.initialize()
        for i in range(warmup):
            server.search(queries[i % len(queries)], "auto")
        for i in range(calls):
            query = queries[i % len(queries)]
            t0 = time.perf_counter()
            engine.search(query)
            local_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            server.search(query, "auto")
            pipe_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        server.stop()
    return {
        "in_process_p50_ms": percentile(local_ms, 0.5),
        "pipe_p50_ms": percentile(pipe_ms, 0.5),
        "pipe_p95_ms": percentile(pipe_ms, 0.95),
        "overhead_p50_ms": percentile(pipe_ms, 0.5) - percentile(local_ms, 0.5),
        "overhead_median_of_pairs_ms": statistics.median(p - loc for p, loc in zip(pipe_ms, local_ms, strict=True)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="measured calls per table (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="uncounted calls first (default 10)")
    parser.add_argument("--data", type=Path, default=DATA, help=f"SciFact folder (default {DATA})")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    opts = parser.parse_args()
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

    import anyio

    from lancelot_cli import __version__
    from lancelot_cli.indexer import index_folder

    data = opts.data.resolve()
    corpus = load_corpus(data)
    claims = list(load_queries(data).values())
    test_ids = [line.split("\t")[0] for line in (data / "qrels" / "test.tsv").read_text().splitlines()[1:] if line]
    all_queries = load_queries(data)
    test_claims = list(dict.fromkeys(all_queries[q] for q in test_ids)) or claims
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lancelot-roundtrip-") as tmp_name:
        tmp = Path(tmp_name)
        config = tmp / "config"
        config.mkdir()
        src = tmp / "scifact"
        src.mkdir()
        for doc_id, (title, text) in corpus.items():
            (src / f"{doc_id}.md").write_text(markdown(title, text), encoding="utf-8")
        for name, folder, queries in (("sample-docs", SAMPLE_DOCS, SAMPLE_QUERIES), ("scifact", src, test_claims)):
            db = tmp / f"db-{name}"
            report = index_folder(folder, str(db))
            log(f"{name}: {report.files} files, {report.chunks} chunks (default chunk size)")
            results[name] = {
                "chunks": report.chunks,
                **anyio.run(measure, db, config, queries, opts.calls, opts.warmup),
            }
            r = results[name]
            log(f"{name}: stdio p50 {r['stdio_p50_ms']:.2f} ms, in-process p50 {r['in_process_p50_ms']:.2f} ms")

    import importlib.metadata as md

    results["meta"] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "mcp": md.version("mcp"),
        "lancedb": md.version("lancedb"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_end": os.getloadavg(),
        "calls": opts.calls,
        "warmup": opts.warmup,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(results, indent=2) + "\n")

    meta = results["meta"]
    print(
        f"\n## Round trip — lancelot {meta['lancelot']}, mcp {meta['mcp']}, lancedb {meta['lancedb']}, "
        f"{meta['cpus']} CPUs; lancedb_search with default arguments (limit 20, auto → text)\n"
    )
    print(
        "| table | chunks | calls | in-process p50 / p95 ms | stdio p50 / p95 ms | overhead p50 ms "
        "| median of per-call differences ms | target ≤ 3 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in ("sample-docs", "scifact"):
        r = results[name]
        ok = r["overhead_p50_ms"] <= TARGET_MS
        print(
            f"| {name} | {r['chunks']} | {r['calls']} | "
            f"{r['in_process_p50_ms']:.2f} / {r['in_process_p95_ms']:.2f} | "
            f"{r['stdio_p50_ms']:.2f} / {r['stdio_p95_ms']:.2f} | {r['overhead_p50_ms']:.2f} | "
            f"{r['overhead_median_of_pairs_ms']:.2f} | {'met' if ok else 'MISSED'} |"
        )
    print(
        "\nThe same calls with a bare JSON-RPC client on the server's pipes (no SDK client, so no result "
        "model or output-schema validation on the client side):\n"
    )
    print("| table | in-process p50 ms | pipe p50 / p95 ms | overhead p50 ms | median of per-call differences ms |")
    print("|---|---:|---:|---:|---:|")
    for name in ("sample-docs", "scifact"):
        r = results[name]["raw_pipe"]
        print(
            f"| {name} | {r['in_process_p50_ms']:.2f} | {r['pipe_p50_ms']:.2f} / {r['pipe_p95_ms']:.2f} | "
            f"{r['overhead_p50_ms']:.2f} | {r['overhead_median_of_pairs_ms']:.2f} |"
        )
    print(
        "\nThe SDK's floor with the same client over stdio (`echo_server.py`: lancelot's recorded reply "
        'for the query, no search; `hello`: "hi"). Lancelot\'s own server code = overhead p50 minus '
        "the echo p50:\n"
    )
    print("| table | echo p50 / p95 ms | hello p50 / p95 ms | overhead p50 ms | lancelot's own ms |")
    print("|---|---:|---:|---:|---:|")
    for name in ("sample-docs", "scifact"):
        r = results[name]
        f = r["sdk_floor"]
        print(
            f"| {name} | {f['echo_p50_ms']:.2f} / {f['echo_p95_ms']:.2f} | {f['hello_p50_ms']:.2f} / "
            f"{f['hello_p95_ms']:.2f} | {r['overhead_p50_ms']:.2f} | {r['overhead_p50_ms'] - f['echo_p50_ms']:.2f} |"
        )
    print("\n### Default reply size (lancedb_search, limit 20)\n")
    print("| table | replies | reply chars mean / max | hits mean | chars per hit | snippet chars mean / max |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("sample-docs", "scifact"):
        s = results[name]["sizes"]
        print(
            f"| {name} | {s['replies']} | {s['reply_chars_mean']:.0f} / {s['reply_chars_max']} | "
            f"{s['hits_mean']:.1f} | {s['chars_per_hit_mean']:.0f} | {s['snippet_chars_mean']:.0f} / "
            f"{s['snippet_chars_max']} |"
        )
    mism = {n: results[n]["hit_order_mismatches"] for n in ("sample-docs", "scifact")}
    print(f"\nHit order stdio vs in-process differed in {mism} calls.")
    print(f"Results written to {opts.output}")


if __name__ == "__main__":
    main()
