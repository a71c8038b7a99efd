"""Where `lancelot serve` (stdio) spends its memory: RSS by phase on a table of SciFact chunks.

Run from the repository root:
    python tests/benchmarks/server_memory.py [--rows 10000] [--searches 200] [--db DIR]
                                             [--env NAME=VALUE ...] [--imports]

Makes a table of --rows chunks the way ``scale.py`` does (its ``make_rows`` and the indexer's
``TableWriter``; or reuses --db DIR, a database with a ``documents`` table made that way), starts
``lancelot serve`` on pipes with ../shared/tools/embed_server.py on loopback for query vectors,
and reads /proc/PID/status and /proc/PID/smaps_rollup at each phase:

  spawned        the process has answered nothing yet (0.3 s after the start)
  initialize     after the `initialize` reply
  warmed         3 s later, idle: the background import of lancedb has run
  first text     after one lancedb_search with searchType text
  first hybrid   after one with searchType auto (hybrid: BM25 + a flat vector search)
  after N        after --searches calls, half text, half auto

Columns: VmRSS and its anonymous part (heap, arenas, thread stacks), file-backed part (shared
libraries, mapped index files), VmHWM (peak) and thread count. ``--env`` sets variables in the
server's environment, to compare e.g. ``MALLOC_ARENA_MAX=2``. ``--imports`` also prints the RSS of
a bare interpreter after importing each heavy library alone. Prints Markdown tables and writes
tests/benchmarks/results/server_memory.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.benchmarks.quality import (  # noqa: E402 - after the path set-up
    DATA,
    DIMENSION,
    EMBED_SERVER,
    MODEL,
    EmbedServerProcess,
    load_corpus,
    load_queries,
    percentile,
)
from tests.benchmarks.scale import StdioServer, load_vectors, make_rows  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "server_memory.json"
IMPORTS = ("numpy", "pyarrow", "pydantic", "mcp.server.mcpserver", "lancedb", "openai")


def memory(pid: int) -> dict[str, float]:
    """MiB figures (and the thread count) of a running process, from /proc."""
    out: dict[str, float] = {}
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    for line in status:
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) / 1024
        elif key == "Threads":
            out[key] = int(value)
    return out


def make_table(rows: int, tmp: Path) -> Path:
    from lancelot_cli.storage.write import table as writer

    db = tmp / f"db{rows}"
    corpus = load_corpus(DATA)
    doc_vectors, _ = load_vectors(DATA)
    made, _ = make_rows(corpus, doc_vectors, rows, 0.5)
    writer.TableWriter(str(db), "documents").write(made, model=MODEL, dimension=DIMENSION)
    return db


def import_costs() -> dict[str, float]:
    """RSS (MiB) of a fresh interpreter after importing each library alone, and of a bare one."""
    probe = (
        "import importlib, sys, pathlib\n"
        "name = sys.argv[1]\n"
        "if name: importlib.import_module(name)\n"
        "for line in pathlib.Path('/proc/self/status').read_text().splitlines():\n"
        "    if line.startswith('VmRSS:'): print(int(line.split()[1]) / 1024)\n"
    )
    costs = {}
    for name in ("", *IMPORTS):
        done = subprocess.run([sys.executable, "-c", probe, name], capture_output=True, text=True, timeout=120)
        costs[name or "(bare python)"] = float(done.stdout.strip() or "nan")
    return costs


def run_server(
    db: Path,
    url: str,
    queries: list[str],
    searches: int,
    extra_env: dict[str, str],
    tmp: Path,
    latencies: dict[str, list[float]],
) -> list[tuple[str, dict[str, float]]]:
    """RSS figures by phase; ``latencies`` gets each search's seconds by search type."""
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_"))}
    env.update(
        LANCEDB_PATH=str(db),
        LANCELOT_CONFIG_DIR=str(config),
        OPENAI_BASE_URL=url,
        OPENAI_API_KEY="sk-bench",
        EMBEDDING_MODEL=MODEL,
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        PYTHONPATH=str(REPO),
    )
    env.update(extra_env)
    server = StdioServer(env, config)
    phases: list[tuple[str, dict[str, float]]] = []
    pid = server.proc.pid
    try:
        time.sleep(0.3)
        phases.append(("spawned", memory(pid)))
        server.initialize()
        phases.append(("initialize", memory(pid)))
        time.sleep(3.0)
        phases.append(("warmed (idle 3 s)", memory(pid)))
        kinds: dict[str, int] = {}

        def search(i: int) -> None:
            kind = "text" if i % 2 == 0 else "auto"
            t0 = time.perf_counter()
            reply = server.search(queries[i % len(queries)], kind)
            if i >= 2:  # the first two load code and open the table
                latencies.setdefault(reply["searchType"], []).append(time.perf_counter() - t0)
            kinds[reply["searchType"]] = kinds.get(reply["searchType"], 0) + 1

        search(0)
        phases.append(("first text search", memory(pid)))
        search(1)
        phases.append(("first hybrid search", memory(pid)))
        for i in range(2, searches):
            search(i)
            if i + 1 in (20, 50, 100):
                phases.append((f"after {i + 1} searches", memory(pid)))
        if searches not in (20, 50, 100):
            phases.append((f"after {searches} searches", memory(pid)))
        if kinds.get("hybrid", 0) == 0:
            raise SystemExit(f"no hybrid search ran: {kinds}")
    finally:
        server.stop()
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10000, help="chunks in the table (default 10000)")
    parser.add_argument("--searches", type=int, default=200, help="mixed searches (default 200)")
    parser.add_argument("--db", type=Path, help="reuse this database (a `documents` table as scale.py makes)")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="set a variable for the server (repeatable)"
    )
    parser.add_argument("--imports", action="store_true", help="also measure each heavy import alone")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    opts = parser.parse_args()
    extra_env = dict(item.split("=", 1) for item in opts.env)
    queries = [text for _, text in sorted(load_queries(DATA).items())]
    results: dict[str, Any] = {"rows": opts.rows, "searches": opts.searches, "env": extra_env}
    with tempfile.TemporaryDirectory(prefix="lancelot-mem-") as tmp_name, EmbedServerProcess(EMBED_SERVER) as embed:
        tmp = Path(tmp_name)
        db = opts.db or make_table(opts.rows, tmp)
        latencies: dict[str, list[float]] = {}
        phases = run_server(db, embed.url, queries, opts.searches, extra_env, tmp, latencies)
    results["phases"] = [{"phase": name, **figures} for name, figures in phases]
    results["p50_ms"] = {kind: percentile(seconds, 0.5) * 1000 for kind, seconds in latencies.items()}
    env_note = " ".join(f"{k}={v}" for k, v in extra_env.items()) or "default environment"
    print(f"\n## `lancelot serve` memory, {opts.rows:,} chunks, {env_note}\n")
    print("| phase | VmRSS MiB | anon MiB | file MiB | VmHWM MiB | threads |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, f in phases:
        print(
            f"| {name} | {f['VmRSS']:.0f} | {f['RssAnon']:.0f} | {f['RssFile']:.0f} | {f['VmHWM']:.0f} | "
            f"{f['Threads']:.0f} |"
        )
    print(
        "\nround trip p50 (stdio, after the first two): "
        + ", ".join(f"{kind} {ms:.1f} ms" for kind, ms in sorted(results["p50_ms"].items()))
    )
    if opts.imports:
        results["imports"] = import_costs()
        print("\n| import alone | VmRSS MiB |\n|---|---:|")
        for name, mib in results["imports"].items():
            print(f"| {name} | {mib:.0f} |")
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
