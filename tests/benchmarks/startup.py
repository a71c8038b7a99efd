"""Startup benchmark: how long `lancelot serve` takes to answer an MCP initialize over stdio, next to a
bare hello-world MCPServer; the first `lancedb_search` call after connecting, and spawn → first search
result next to spawn → the hello server's first tool result (target ≤ 1.5×, paired run by run:
issue 25), also with the lancedb import deferral off (`LANCELOT_NO_FAST_IMPORT=1`, issue 13); and
`lancelot --help` next to `python -c "import typer"`.

Run from the repository root:  python tests/benchmarks/startup.py [--runs 7] [--warmup 1]
    [--folder PATH --query TEXT] [--base CHECKOUT]

``--folder`` indexes that folder (any folder: a real documentation tree) instead of the sample
documents, and the first search asks ``--query`` (default "install"); the search must answer
without an error. Besides the ratio of medians, the spawn → first result ratio is also given
paired run by run (lancelot's run i over the hello server's run i, which ran right after it):
min and median of those ratios (issue 25). ``--base`` also runs the `lancelot serve` of another
checkout (e.g. ``git archive main | tar -x -C /tmp/base``; the same Python and console script, its
code first on PYTHONPATH) in the same rounds, right after this one's, and gives this checkout's
spawn → first result over the base's, paired run by run: an A/B of a change.

Each measurement runs --runs times (after --warmup discarded runs, so the first run's cold file
cache and bytecode compilation do not count); the table shows median and min. Results are written
to tests/benchmarks/results/startup.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

SAMPLE_DOCS = REPO / "examples" / "sample-docs"
RESULTS = Path(__file__).resolve().parent / "results" / "startup.json"

HELLO = """\
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("hello")


@mcp.tool()
def hello() -> str:
    return "hi"


mcp.run()
"""

# Reference for `lancelot --help`: a one-command Typer app whose help is drawn by rich, as lancelot's is.
TYPER_HELLO = '''\
import typer

app = typer.Typer(rich_markup_mode="rich")


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    print(f"hello {name}")


app()
'''


def lancelot_command() -> list[str]:
    """The console script next to this Python when installed, else `python -m lancelot_cli`."""
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def stats(runs: list[float]) -> dict[str, Any]:
    return {"runs_s": [round(r, 6) for r in runs], "median_s": statistics.median(runs), "min_s": min(runs)}


async def connect_once(
    command: str, args: list[str], env: dict[str, str], call: str | None, query: str = "refund"
) -> tuple[float, float | None]:
    """Seconds from before `async with Client(...)` to inside the block; then, if `call` names a tool,
    the seconds of that first tools/call (``lancedb_search`` for "refund", or the hello tool)."""
    import mcp

    params = mcp.StdioServerParameters(command=command, args=args, env=env)
    start = time.perf_counter()
    async with mcp.Client(params, mode="legacy") as client:
        connected = time.perf_counter() - start
        called = None
        if call is not None:
            t0 = time.perf_counter()
            hello = call == "hello"
            result = await client.call_tool(call, {} if hello else {"query": query, "limit": 5})
            called = time.perf_counter() - t0
            text = "".join(getattr(block, "text", "") for block in result.content)
            expected = "hi" if hello else ("policies/refunds.md" if query == "refund" else "")
            if result.is_error or expected not in text:
                raise SystemExit(f"unexpected {call} result: {text[:500]}")
    return connected, called


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited with {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def repeat(fn: Callable[[], Any], runs: int, warmup: int) -> list[Any]:
    for _ in range(warmup):
        fn()
    return [fn() for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured runs per item (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded runs before measuring (default 1)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results file (default {RESULTS})")
    parser.add_argument("--folder", type=Path, help="index this folder instead of the sample documents")
    parser.add_argument("--query", default=None, help='the first search (default "refund"; "install" with --folder)')
    parser.add_argument("--base", type=Path, help="also time the `lancelot serve` of this checkout, paired")
    opts = parser.parse_args()
    query = opts.query or ("install" if opts.folder else "refund")

    import anyio

    from lancelot_cli import __version__
    from lancelot_cli.indexer import index_folder

    with tempfile.TemporaryDirectory(prefix="lancelot-bench-") as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "db"
        index_folder(opts.folder or SAMPLE_DOCS, str(db))
        hello = tmp / "hello_server.py"
        hello.write_text(HELLO)
        typer_hello = tmp / "typer_hello.py"
        typer_hello.write_text(TYPER_HELLO)
        config = tmp / "config"
        config.mkdir()

        # The same variables for every child; the stdio client adds HOME, PATH, SHELL, TERM, USER, LOGNAME.
        base = {
            "LANCELOT_CONFIG_DIR": str(config),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "PYTHONPATH": str(REPO),
        }
        serve_env = {**base, "LANCEDB_PATH": str(db)}
        cli_env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_"))}
        cli_env.update(base, COLUMNS="100")
        lancelot = lancelot_command()

        lancelot_connect: list[float] = []
        first_search: list[float] = []
        hello_connect: list[float] = []
        first_result: list[float] = []
        first_result_slow: list[float] = []
        base_first_result: list[float] = []
        base_env = {**serve_env, "PYTHONPATH": str(opts.base.resolve())} if opts.base else None
        hello_first_result: list[float] = []
        slow_env = {**serve_env, "LANCELOT_NO_FAST_IMPORT": "1"}
        for i in range(opts.warmup + opts.runs):
            # Alternate the servers so drift in machine load hits them alike.
            serve = [*lancelot[1:], "serve"]
            conn, call = anyio.run(connect_once, lancelot[0], serve, serve_env, "lancedb_search", query)
            hconn, hcall = anyio.run(connect_once, sys.executable, [str(hello)], base, "hello")
            sconn, scall = anyio.run(connect_once, lancelot[0], serve, slow_env, "lancedb_search", query)
            if base_env is not None:
                bconn, bcall = anyio.run(connect_once, lancelot[0], serve, base_env, "lancedb_search", query)
            if i >= opts.warmup:
                assert call is not None and hcall is not None and scall is not None
                lancelot_connect.append(conn)
                first_search.append(call)
                hello_connect.append(hconn)
                first_result.append(conn + call)
                first_result_slow.append(sconn + scall)
                hello_first_result.append(hconn + hcall)
                if base_env is not None:
                    assert bcall is not None
                    base_first_result.append(bconn + bcall)

        help_runs = repeat(lambda: wall([*lancelot, "--help"], cli_env), opts.runs, opts.warmup)
        typer_runs = repeat(lambda: wall([sys.executable, "-c", "import typer"], cli_env), opts.runs, opts.warmup)
        typer_help_runs = repeat(
            lambda: wall([sys.executable, str(typer_hello), "--help"], cli_env), opts.runs, opts.warmup
        )
        python_runs = repeat(lambda: wall([sys.executable, "-c", "pass"], cli_env), opts.runs, opts.warmup)

    results = {
        "lancelot_serve_initialize": stats(lancelot_connect),
        "hello_server_initialize": stats(hello_connect),
        "lancelot_first_search_call": stats(first_search),
        "lancelot_spawn_to_first_result": stats(first_result),
        "lancelot_spawn_to_first_result_no_fast_import": stats(first_result_slow),
        "hello_spawn_to_first_result": stats(hello_first_result),
        "lancelot_help": stats(help_runs),
        "python_import_typer": stats(typer_runs),
        "typer_app_help": stats(typer_help_runs),
        "python_pass": stats(python_runs),
    }
    if base_first_result:
        results["base_spawn_to_first_result"] = stats(base_first_result)

    def ratio(a: str, b: str) -> dict[str, float]:
        return {
            "median": results[a]["median_s"] / results[b]["median_s"],
            "min": results[a]["min_s"] / results[b]["min_s"],
        }

    def paired(a: str, b: str) -> dict[str, float]:
        """Run i over run i (the two ran back to back), then min and median of those ratios."""
        each = [x / y for x, y in zip(results[a]["runs_s"], results[b]["runs_s"], strict=True)]
        return {"median": statistics.median(each), "min": min(each)}

    ratios = {
        "first_result_over_hello_paired": paired("lancelot_spawn_to_first_result", "hello_spawn_to_first_result"),
        **(
            {
                "base_first_result_over_hello_paired": paired(
                    "base_spawn_to_first_result", "hello_spawn_to_first_result"
                ),
                "first_result_over_base_paired": paired("lancelot_spawn_to_first_result", "base_spawn_to_first_result"),
            }
            if base_first_result
            else {}
        ),
        "lancelot_serve_over_hello_server": ratio("lancelot_serve_initialize", "hello_server_initialize"),
        "lancelot_help_over_import_typer": ratio("lancelot_help", "python_import_typer"),
        "first_result_over_hello": ratio("lancelot_spawn_to_first_result", "hello_spawn_to_first_result"),
        "first_result_no_fast_import_over_hello": ratio(
            "lancelot_spawn_to_first_result_no_fast_import", "hello_spawn_to_first_result"
        ),
    }
    import importlib.metadata as md

    meta = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "mcp": md.version("mcp"),
        "lancedb": md.version("lancedb"),
        "typer": md.version("typer"),
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "runs": opts.runs,
        "warmup": opts.warmup,
        "folder": str(opts.folder or SAMPLE_DOCS),
        "base": str(opts.base) if opts.base else None,
        "query": query,
        "loadavg": Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else None,
        "lancelot_command": lancelot,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps({"meta": meta, "results": results, "ratios": ratios}, indent=2) + "\n")

    labels = {
        "lancelot_serve_initialize": "`lancelot serve`: stdio spawn → initialize result",
        "hello_server_initialize": "hello-world MCPServer: stdio spawn → initialize result",
        "lancelot_first_search_call": "`lancelot serve`: first `lancedb_search` call after connect",
        "lancelot_spawn_to_first_result": "`lancelot serve`: stdio spawn → first search result",
        "lancelot_spawn_to_first_result_no_fast_import": "the same, `LANCELOT_NO_FAST_IMPORT=1`",
        "hello_spawn_to_first_result": "hello-world MCPServer: stdio spawn → first tool result",
        "lancelot_help": "`lancelot --help` (wall)",
        "python_import_typer": '`python -c "import typer"` (wall)',
        "typer_app_help": "one-command Typer app `--help` (wall, reference)",
        "python_pass": "`python -c pass` (wall, reference)",
    }
    if base_first_result:
        labels["base_spawn_to_first_result"] = f"base {opts.base}: stdio spawn → first search result"
    print(
        f"Startup benchmark — lancelot {__version__}, mcp {meta['mcp']}, Python {meta['python']}, "
        f"{meta['cpus']} CPUs, {opts.runs} runs (+{opts.warmup} warm-up) each\n"
    )
    print("| measurement | median (ms) | min (ms) |")
    print("|---|---:|---:|")
    for key, label in labels.items():
        print(f"| {label} | {results[key]['median_s'] * 1000:.0f} | {results[key]['min_s'] * 1000:.0f} |")
    rows = [
        ("lancelot_serve_over_hello_server", "ratio lancelot serve / hello server"),
        (
            "first_result_over_hello_paired",
            "ratio first search result / hello first result, paired run by run (median / min; target ≤ 1.5×)",
        ),
        ("first_result_over_hello", "the same, ratio of the medians / of the mins"),
        ("first_result_no_fast_import_over_hello", "the same, `LANCELOT_NO_FAST_IMPORT=1`"),
        ("lancelot_help_over_import_typer", "ratio `lancelot --help` / `import typer`"),
    ]
    if base_first_result:  # last, so that each "the same" above still follows the row it repeats
        rows += [
            ("base_first_result_over_hello_paired", "base: first search result / hello first result, paired"),
            ("first_result_over_base_paired", "this checkout / the base, first search result, paired run by run"),
        ]
    for key, label in rows:
        print(f"| {label} | {ratios[key]['median']:.2f}× | {ratios[key]['min']:.2f}× |")
    print(f"\nFolder {meta['folder']}, query {query!r}; load {meta['loadavg']}")
    print(f"Results written to {opts.output}")


if __name__ == "__main__":
    main()
