"""A one-file re-index with a `lancelot index --watch` running (handed off to it, issue 49 #2) against
the same re-index without one: the CPU (user + system) and wall time of the `lancelot index` client
process alone, paired A B Q A B Q, against qmd's 0.31 s of CPU for the same job (issue 49).

    python tests/benchmarks/index_handoff.py [SRC] [--pairs 5]

SRC defaults to the FastAPI docs (/tmp/corpora/fastapi, else /work/shared/data/fastapi-docs). Two
copies of SRC are indexed into two databases under one short temporary folder (a Unix socket's path
is short); a watcher is started on the first. Each pair appends a line to one file of each copy and
runs `lancelot index COPY DB` on each: A goes to the watcher, B runs by itself as before, Q goes to
the watcher through `lancelot` itself (cli/app.py tries cli/quick_index.py first), A through
the Typer command alone (``TYPER_MAIN``). CPU and
wall come from wait4 for the client process only (the watcher's pass is the watcher's CPU, measured
separately as its own change over the run). The load is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QMD_CPU_S = 0.31  # qmd 2.8.3, one file changed, whole process (issue 49)
DEFAULTS = ["/tmp/corpora/fastapi", "/work/shared/data/fastapi-docs"]
HERE = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(HERE), "LANCELOT_WARM": "0"}


def lancelot(*args: str) -> list[str]:
    return [sys.executable, "-m", "lancelot_cli", *args]


# The Typer command alone, without the quick path cli/app.py ``main`` tries first (arm A).
TYPER_MAIN = """
import os, sys
from lancelot_cli.startup import start
start(sys.argv[1:])
from lancelot_cli.cli import commands
code = commands.run()
sys.stdout.flush(); sys.stderr.flush()
os._exit(code or 0)
"""


def client(src: Path, db: Path, quick: bool = False) -> tuple[float, float]:
    """CPU and wall seconds of one `lancelot index SRC DB` (``quick``: `lancelot` itself, which tries
    cli/quick_index.py first; else the Typer command alone)."""
    start = time.perf_counter()
    command = (
        lancelot("index", str(src), str(db))
        if quick
        else [sys.executable, "-c", TYPER_MAIN, "index", str(src), str(db)]
    )
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        err = process.stderr.read().decode() if process.stderr else ""
        sys.exit(f"lancelot index {src} {db} failed: {err}")
    return usage.ru_utime + usage.ru_stime, wall


def touched(src: Path) -> Path:
    """The file each pair changes: the first Markdown file in sorted order."""
    return sorted(src.rglob("*.md"))[0]


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", nargs="?", default=next((d for d in DEFAULTS if Path(d).is_dir()), DEFAULTS[-1]))
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lh-", dir="/tmp"))
    watcher = None
    try:
        copies = {}
        for name in ("a", "b"):
            src, db = work / f"src-{name}", work / f"db-{name}"
            shutil.copytree(args.src, src)
            subprocess.run(lancelot("index", str(src), str(db)), env=ENV, check=True, capture_output=True)
            copies[name] = (src, db)
        watcher = subprocess.Popen(
            lancelot("index", str(copies["a"][0]), str(copies["a"][1]), "--watch"),
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        sock = copies["a"][1] / ".lancelot-index-documents.sock"
        while not sock.exists():
            if watcher.poll() is not None:
                sys.exit("the watcher exited")
            time.sleep(0.1)
        time.sleep(3)  # its first passes
        print(f"SRC {args.src}; load before {os.getloadavg()[0]:.2f}")
        results: dict[str, list[tuple[float, float]]] = {"a": [], "b": [], "q": []}
        watcher_before = process_cpu(watcher.pid)
        for pair in range(args.pairs):
            for name in ("a", "b", "q"):
                src, db = copies["a" if name == "q" else name]
                with touched(src).open("a") as handle:
                    handle.write(f"\nChanged in pair {pair}.\n")
                results[name].append(client(src, db, quick=name == "q"))
        watcher_cpu = (process_cpu(watcher.pid) - watcher_before) / (2 * args.pairs)
        print(f"load after {os.getloadavg()[0]:.2f}")
        arms = (("a", "handed to the watcher"), ("q", "handed, quick path"), ("b", "run by itself"))
        for name, what in arms:
            cpu = [c for c, _ in results[name]]
            wall = [w for _, w in results[name]]
            print(
                f"{what}: client CPU min {min(cpu):.3f} / median {statistics.median(cpu):.3f} s "
                f"({min(cpu) / QMD_CPU_S:.2f} / {statistics.median(cpu) / QMD_CPU_S:.2f}x qmd's {QMD_CPU_S} s); "
                f"wall min {min(wall):.3f} / median {statistics.median(wall):.3f} s"
            )
        for name, what in (("a", "handed"), ("q", "handed, quick path")):
            ratios = [x[0] / b[0] for x, b in zip(results[name], results["b"], strict=True)]
            print(
                f"{what} / by itself, CPU pair by pair: min {min(ratios):.2f} / median {statistics.median(ratios):.2f}"
            )
        print(f"the watcher's own CPU per handed run (its event batch and the handed pass): {watcher_cpu:.3f} s")
    finally:
        if watcher is not None:
            watcher.terminate()
            watcher.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
