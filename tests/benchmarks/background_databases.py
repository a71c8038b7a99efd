"""The CLI's background server across databases (issue 39 #3): servers left, their memory, and the
time of a search after switching database.

Run from the repository root:
    python tests/benchmarks/background_databases.py [--searches 100] [--folder PATH ...]
                                                    [--code-at REV] [--in-a-row 1] [--pause 0]

Indexes three folders (default: examples/sample-docs, ../shared/data/fastapi-docs when present,
docs/) with ``--no-embed`` into temporary databases, then runs --searches whole `lancelot search`
processes in a private XDG_RUNTIME_DIR with LANCELOT_WARM on, --in-a-row on each database before
the next (1: a switch every time), --pause seconds between them (a person types). The first search
of each database is followed by 6 s for a server it started to come up. Reported: median wall time
of a database's first search, of a search after a switch and of a search on the same database; the
background servers alive at the end (the pid first in each lock file) and their VmRSS.
``--code-at REV`` runs the package as committed at REV (a `git
archive` copy first on PYTHONPATH) to compare with an earlier design. Every server it started is
stopped at the end. Writes tests/benchmarks/results/background_databases.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results" / "background_databases.json"
FASTAPI = REPO.parent / "shared" / "data" / "fastapi-docs"
WORDS = (
    "refund warranty path parameters dependency security install request response query body header "
    "cookie form file router test docker deploy websocket middleware cors database async settings"
).split()


def servers(root: str) -> list[tuple[int, int]]:
    """(pid, VmRSS MiB) of every live server of ``root``: the pid is the first line of its lock file."""
    found = []
    for lock in Path(root, "lancelot").glob("*.lock"):
        try:
            pid = int(lock.read_text(encoding="utf-8").split()[0])
            status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
        rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
        found.append((pid, int(rss[0]) // 1024 if rss else 0))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--folder", action="append", type=Path)
    parser.add_argument("--code-at", metavar="REV")
    parser.add_argument("--in-a-row", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.0)
    args = parser.parse_args()
    folders = args.folder or [
        REPO / "examples" / "sample-docs",
        *([FASTAPI] if FASTAPI.is_dir() else []),
        REPO / "docs",
    ]
    work = Path(tempfile.mkdtemp(prefix="bgdb-", dir="/tmp"))  # AF_UNIX paths must stay short
    root = str(work / "rt")
    os.mkdir(root, 0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": root, "LANCELOT_WARM": "5", "LANCELOT_CONFIG_DIR": str(work / "cfg")}
    if args.code_at:
        code = work / "code"
        code.mkdir()
        archive = subprocess.run(["git", "archive", args.code_at], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(code), env.get("PYTHONPATH", "")) if p)
    lancelot = [sys.executable, "-m", "lancelot_cli"]  # run in `work`: -m puts the working folder first on sys.path
    dbs = []
    for n, folder in enumerate(folders):
        db = str(work / f"db{n}")
        cold = {**env, "LANCELOT_WARM": "0"}
        subprocess.run(
            [*lancelot, "index", str(folder), db, "--no-embed"], env=cold, cwd=work, capture_output=True, check=True
        )
        dbs.append(db)
    times: dict[str, list[float]] = {"first": [], "switch": [], "same": []}
    seen: set[str] = set()
    previous = None
    try:
        for n in range(args.searches):
            db = dbs[(n // args.in_a_row) % len(dbs)]
            query = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(1 + n % 3))
            started = time.perf_counter()
            subprocess.run(
                [*lancelot, "search", query, "--db", db], env=env, cwd=work, capture_output=True, check=False
            )
            took = time.perf_counter() - started
            kind = "first" if db not in seen else ("same" if db == previous else "switch")
            times[kind].append(took)
            seen.add(db)
            previous = db
            time.sleep(6.0 if kind == "first" else args.pause)
        alive = servers(root)
    finally:
        for pid, _ in servers(root):
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "code": args.code_at or "working tree",
        "databases": [str(f) for f in folders],
        "searches": args.searches,
        "median_seconds": {k: round(statistics.median(v), 3) if v else None for k, v in times.items()},
        "counts": {k: len(v) for k, v in times.items()},
        "servers": len(alive),
        "rss_mib": [rss for _, rss in alive],
        "rss_mib_total": sum(rss for _, rss in alive),
    }
    print("| code | searches | servers left | RSS MiB | first on a database | after a switch | same database |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    med = result["median_seconds"]
    print(
        f"| {result['code']} | {args.searches} | {len(alive)} | {result['rss_mib_total']} | "
        f"{med['first']} s | {med['switch']} s | {med['same']} s |"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
