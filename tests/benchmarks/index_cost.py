"""A full `lancelot index --no-embed` of the working tree against another tree of the package (issue 49
item 3): CPU (user + system, the reader workers included), wall time and peak RSS, paired A B A B,
and whether the two wrote the same rows.

    git archive HEAD | tar -x -C /tmp/base      # the tree to compare with (any copy of the package)
    python tests/benchmarks/index_cost.py --base /tmp/base [SRC ...] [--pairs 3]

SRC defaults to the PostgreSQL manual (`apt-get install postgresql-doc-15`). Each run indexes into a
fresh temporary database, the package taken from the working tree (A) or from ``--base`` (B) by
PYTHONPATH. CPU and peak RSS come from wait4 (the peak is the largest single process: the parent,
which imports lancedb). Ratios are taken pair by pair, so a shared machine's drift cancels; the load
is printed before and after. The rows are compared column by column (all but ``file_mtime`` and
vectors), sorted by id: a speed-up must leave them byte for byte as they were.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = ["/usr/share/doc/postgresql-doc-15/html"]
HERE = Path(__file__).resolve().parents[2]
DUMP = """
import json, sys
import lancedb
t = lancedb.connect(sys.argv[1]).open_table("documents").to_arrow()
cols = [c for c in t.column_names if c not in ("vector", "file_mtime")]
rows = sorted(zip(*[t.column(c).to_pylist() for c in cols]), key=lambda r: r[0])
for r in rows:
    print(json.dumps(dict(zip(cols, r)), ensure_ascii=False, sort_keys=True))
"""


def run(tree: Path, src: str, db: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "lancelot_cli", "index", src, str(db), "--no-embed"]
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        sys.exit(f"{tree}: exit {process.returncode}: {process.stderr.read().decode() if process.stderr else ''}")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mib": usage.ru_maxrss / 1024}


def rows(tree: Path, db: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", DUMP, str(db)], env=env, capture_output=True, text=True, check=True
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", nargs="*", default=DEFAULT)
    parser.add_argument("--base", type=Path, required=True, help="the other tree (holding lancelot_cli/)")
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for src in args.src:
        figures: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
        with tempfile.TemporaryDirectory() as tmp:
            for pair in range(args.pairs):
                for name, tree in (("A", HERE), ("B", args.base)):
                    db = Path(tmp) / f"{name}{pair}"
                    figures[name].append(run(tree, src, db))
            same = rows(HERE, Path(tmp) / "A0") == rows(args.base, Path(tmp) / "B0")
        print(f"\n{src}: rows identical: {same}")
        print("| figure | A min | A median | B min | B median | A/B median of pairs |")
        print("|---|---|---|---|---|---|")
        for key in ("cpu", "wall", "rss_mib"):
            a, b = [f[key] for f in figures["A"]], [f[key] for f in figures["B"]]
            ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
            print(
                f"| {key} | {min(a):.2f} | {statistics.median(a):.2f} | {min(b):.2f} | "
                f"{statistics.median(b):.2f} | {ratio:.2f} |"
            )
        print(json.dumps(figures))
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
