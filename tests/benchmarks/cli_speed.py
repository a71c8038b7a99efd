"""CLI speed benchmark: wall time of `lancelot --help`, `lancelot <cmd> --help` and shell completion,
next to `python -c "import typer"` measured in the same run (target: at most 1.5x); and a whole
`lancelot search "refund policy"` on the indexed sample (target: at most 0.3 s and 2.5x `import typer`):
answered by the background server (`LANCELOT_WARM`, background/; one already running, started by a
search before the timed rounds, in a private XDG_RUNTIME_DIR), and in-process (`LANCELOT_WARM=0`)
with and without the lancedb import deferral (`LANCELOT_NO_FAST_IMPORT=1`, issue 13), next to a bare
`import lancedb` both ways. Every other command runs with `LANCELOT_WARM=0`.

Run from the repository root:  python tests/benchmarks/cli_speed.py [--runs 21] [--warmup 2] [--importtime]

All commands are run round-robin (one run of each, then the next round), so a change in machine load
affects them alike; the table shows median and min of --runs rounds after --warmup discarded ones.
Help is measured twice: piped (stdout is a pipe, plain text) and on a pseudo-terminal (colours, the
width of a 100-column terminal), since rich takes different paths. Completion uses the real protocol
(`COMP_WORDS=... _LANCELOT_COMPLETE=complete_bash lancelot`), for a command name and for a table name
(`--table <TAB>` lists the `*.lance` folders of a temporary database folder).

--importtime also prints the slowest imports (`python -X importtime`) of `lancelot --help`.
Results are written to tests/benchmarks/results/cli_speed.json (git-ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import pty
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

RESULTS = Path(__file__).resolve().parent / "results" / "cli_speed.json"
TARGET = 1.5
SEARCH_TARGET_S = 0.3
SEARCH_TARGET_RATIO = 2.5
SEARCH_CASES = ("search_warm", "search", "search_slow", "lancedb_fast", "lancedb_plain")
WARM_MINUTES = "10"


def lancelot_command() -> list[str]:
    """The console script next to this Python when installed, else `python -m lancelot_cli`."""
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def wall(argv: list[str], env: dict[str, str], tty: bool = False) -> float:
    """Seconds from spawn to exit; stdout to a pipe, or to a pseudo-terminal when ``tty``."""
    if tty:
        leader, follower = pty.openpty()
        try:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.DEVNULL)
            os.close(follower)
            follower = -1
            while True:  # drain the terminal so the child never blocks on a full buffer
                try:
                    if not os.read(leader, 65536):
                        break
                except OSError:
                    break
            proc.wait()
            return time.perf_counter() - start
        finally:
            os.close(leader)
            if follower != -1:
                os.close(follower)
    start = time.perf_counter()
    subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False
    )
    return time.perf_counter() - start


def stats(runs: list[float]) -> dict[str, Any]:
    return {"runs_s": [round(r, 6) for r in runs], "median_s": statistics.median(runs), "min_s": min(runs)}


def import_profile(lancelot: list[str], env: dict[str, str], top: int = 15) -> list[tuple[int, str]]:
    """(cumulative µs, module) of the slowest top-level imports of `lancelot --help`."""
    code = (
        "import sys; sys.argv = ['lancelot', '--help']\n"
        "from lancelot_cli.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True, check=False
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def background_socket(sample: Path, env: dict[str, str]) -> str:
    """Where the background server for the sample database listens with ``env``."""
    from unittest import mock

    from lancelot_cli.background import daemon
    from lancelot_cli.settings import load

    with mock.patch.dict(os.environ, env, clear=True):  # its folder and fingerprint read os.environ
        path = daemon.socket_path(load(flags={"LANCEDB_PATH": str(sample)}))
    if path is None:
        raise SystemExit("no background server on this system (POSIX only, LANCELOT_WARM above 0)")
    return path


def start_background(argv: list[str], env: dict[str, str], path: str, timeout: float = 120.0) -> None:
    """Run ``argv`` once (it starts the background server) and wait until the server listens."""
    subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"no background server started within {timeout:.0f} s (see {path[:-5]}.log)")
        time.sleep(0.05)


def searches_served(path: str) -> int:
    """How many lancedb_search calls the background server has answered (its `lancelot://stats`)."""
    import socket

    from lancelot_cli.background.client import initialize_request

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(path)
        lines = sock.makefile("rb")
        for message in (
            initialize_request(1, "bench"),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "lancelot://stats"}},
        ):
            sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            reply = json.loads(lines.readline())
            if reply.get("id") == 2:
                stats = json.loads(reply["result"]["contents"][0]["text"])
                return int(stats["tools"].get("lancedb_search", {}).get("calls", 0))


def searches_served_safe(path: str, before: int) -> int:
    """Searches answered since ``before`` (0 when the server has gone)."""
    try:
        return searches_served(path) - before
    except (OSError, ValueError):
        return 0


def stop_background(path: str) -> None:
    """SIGTERM the background server listening on ``path`` (its pid is in the lock file beside it)."""
    import signal

    with contextlib.suppress(OSError, ValueError):
        os.kill(int(Path(f"{path}.lock").read_text().strip()), signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="measured rounds (default 21)")
    parser.add_argument("--warmup", type=int, default=2, help="discarded rounds first (default 2)")
    parser.add_argument("--importtime", action="store_true", help="also print the slowest imports of --help")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results file (default {RESULTS})")
    opts = parser.parse_args()

    lancelot = lancelot_command()
    tmp = Path(tempfile.mkdtemp(prefix="lancelot-cli-speed-"))
    db = tmp / "db"
    for name in ("documents", "notes"):
        (db / f"{name}.lance").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "OPENAI_", "_LANCELOT"))}
    env.update(
        {
            "LANCELOT_CONFIG_DIR": str(tmp / "config"),
            "COLUMNS": "100",
            "LINES": "40",
            "LANCELOT_WARM": "0",
            "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        }
    )

    from lancelot_cli.indexer import index_folder

    sample = tmp / "sample-db"
    index_folder(REPO / "examples" / "sample-docs", str(sample))
    slow = {**env, "LANCELOT_NO_FAST_IMPORT": "1"}
    warm = {**env, "LANCELOT_WARM": WARM_MINUTES, "XDG_RUNTIME_DIR": str(tmp / "run")}
    (tmp / "run").mkdir(mode=0o700)
    server = background_socket(sample, warm)
    start_background([*lancelot, "search", "refund policy", "--db", str(sample)], warm, server)
    fast_lancedb = "import lancelot_cli.startup as s; s.start(); import lancedb"

    def completion(words: str, cword: int) -> dict[str, str]:
        return {**env, "COMP_WORDS": words, "COMP_CWORD": str(cword), "_LANCELOT_COMPLETE": "complete_bash"}

    cases: dict[str, tuple[str, list[str], dict[str, str], bool]] = {
        "import_typer": ('`python -c "import typer"` (reference)', [sys.executable, "-c", "import typer"], env, False),
        "python_pass": ("`python -c pass` (interpreter alone)", [sys.executable, "-c", "pass"], env, False),
        "help": ("`lancelot --help`, piped", [*lancelot, "--help"], env, False),
        "help_tty": ("`lancelot --help`, on a terminal", [*lancelot, "--help"], env, True),
        "search_help": ("`lancelot search --help`, piped", [*lancelot, "search", "--help"], env, False),
        "search_help_tty": ("`lancelot search --help`, on a terminal", [*lancelot, "search", "--help"], env, True),
        "index_help": ("`lancelot index --help`, piped", [*lancelot, "index", "--help"], env, False),
        "complete_command": ("completion `lancelot se<TAB>`", lancelot, completion("lancelot se", 1), False),
        "complete_table": (
            "completion `lancelot search x --db DB --table <TAB>`",
            lancelot,
            completion(f"lancelot search x --db {db} --table ", 6),
            False,
        ),
        "search_warm": (
            '`lancelot search "refund policy"` (sample DB), answered by the background server',
            [*lancelot, "search", "refund policy", "--db", str(sample)],
            warm,
            False,
        ),
        "search": (
            "the same, in-process (`LANCELOT_WARM=0`)",
            [*lancelot, "search", "refund policy", "--db", str(sample)],
            env,
            False,
        ),
        "search_slow": (
            "the same, `LANCELOT_NO_FAST_IMPORT=1` (lancedb imported as shipped)",
            [*lancelot, "search", "refund policy", "--db", str(sample)],
            slow,
            False,
        ),
        "lancedb_fast": (
            "`lancelot_cli.startup.start()`, then `import lancedb` (the deferral)",
            [sys.executable, "-c", fast_lancedb],
            env,
            False,
        ),
        "lancedb_plain": ("the same, `LANCELOT_NO_FAST_IMPORT=1`", [sys.executable, "-c", fast_lancedb], slow, False),
    }
    rounds: dict[str, list[float]] = {key: [] for key in cases}
    served_before = searches_served(server)
    served = 0
    try:
        for round_no in range(opts.warmup + opts.runs):
            for key, (_, argv, case_env, tty) in cases.items():
                if key == "search_warm" and not os.path.exists(server):
                    served += searches_served_safe(server, served_before)
                    start_background(argv, warm, server)  # the code changed meanwhile: a new server, not timed
                    served_before = searches_served(server)
                seconds = wall(argv, case_env, tty)
                if round_no >= opts.warmup:
                    rounds[key].append(seconds)
    finally:
        served += searches_served_safe(server, served_before)
        stop_background(server)

    results = {key: stats(runs) for key, runs in rounds.items()}
    base = results["import_typer"]
    ratios = {
        key: {"median": r["median_s"] / base["median_s"], "min": r["min_s"] / base["min_s"]}
        for key, r in results.items()
        if key not in ("import_typer", "python_pass")
    }

    import importlib.metadata as md

    from lancelot_cli import __version__

    meta = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "typer": md.version("typer"),
        "rich": md.version("rich"),
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "runs": opts.runs,
        "warmup": opts.warmup,
        "lancelot_command": lancelot,
        "target_ratio": TARGET,
        "warm_answered": served,
        "warm_runs": opts.warmup + opts.runs,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps({"meta": meta, "results": results, "ratios": ratios}, indent=2) + "\n")

    print(
        f"CLI speed — lancelot {__version__}, typer {meta['typer']}, Python {meta['python']}, {meta['cpus']} CPUs, "
        f"load {meta['load_average'][0]:.2f}, {opts.runs} rounds (+{opts.warmup} warm-up)\n"
    )
    print("| measurement | median (ms) | min (ms) | ratio to import typer (median / min) |")
    print("|---|---:|---:|---:|")
    for key, (label, *_) in cases.items():
        r = results[key]
        ratio = f"{ratios[key]['median']:.2f}× / {ratios[key]['min']:.2f}×" if key in ratios else "–"
        print(f"| {label} | {r['median_s'] * 1000:.0f} | {r['min_s'] * 1000:.0f} | {ratio} |")
    worst = max((r for key, r in ratios.items() if key not in SEARCH_CASES), key=lambda r: r["median"])["median"]
    print(
        f"\nTarget: at most {TARGET}× `import typer` for help and completion; worst median ratio {worst:.2f}× "
        f"({'met' if worst <= TARGET else 'not met'})."
    )
    search, ratio = results["search_warm"]["median_s"], ratios["search_warm"]["median"]
    met = search <= SEARCH_TARGET_S and ratio <= SEARCH_TARGET_RATIO
    print(
        f"Search target: at most {SEARCH_TARGET_S} s and {SEARCH_TARGET_RATIO:g}× `import typer`; warm median "
        f"{search:.3f} s, {ratio:.2f}× ({'met' if met else 'not met'}; {served} of "
        f"{opts.warmup + opts.runs} warm runs answered by the background server); in-process "
        f"{results['search']['median_s']:.3f} s, {ratios['search']['median']:.2f}×; without the deferral "
        f"{results['search_slow']['median_s']:.3f} s, {ratios['search_slow']['median']:.2f}×."
    )
    if opts.importtime:
        print("\nSlowest imports of `lancelot --help` (cumulative, µs):")
        for micros, module in import_profile(lancelot, env):
            print(f"  {micros:>8}  {module}")
    print(f"\nResults written to {opts.output}")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)  # the sample database, config and the warm process's folder


if __name__ == "__main__":
    main()
