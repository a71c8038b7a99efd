"""Warm terminal path, two code trees paired: CPU and wall of `lancelot search|query|show|status`
answered by a running background server, tree A against tree B, run A B A B (issue 49 item 1).

Each tree runs as `python -P -m lancelot_cli ...` with PYTHONPATH set to it, with its own
XDG_RUNTIME_DIR (each keeps its own background server: one per folder is alive at most), piped
(stdout to a pipe, as a script or `| less` reads it). A bare `python -c "import typer"` runs in the
same rounds as the floor issue 49 names. Per case: min and median of wall seconds and of CPU
seconds (user + system of the child, from wait4), and B/A ratios.

Run:  python tests/benchmarks/warm_client.py --a /path/to/old/tree --b . --db DB [--runs 15]
(a tree is a folder holding lancelot_cli/; DB an indexed database, e.g. the FastAPI docs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "search": ["search", "dependency injection"],
    "search --limit 10": ["search", "dependency injection", "--limit", "10"],
    "search --json": ["search", "dependency injection", "--json"],
    "query": ["query", "dependency injection", "--budget", "2000"],
    "show": ["show", "tutorial/first-steps.md"],
    "status": ["status"],
}


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = os.times()
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="tree A (holds lancelot_cli/)")
    parser.add_argument("--b", required=True, help="tree B (holds lancelot_cli/)")
    parser.add_argument("--db", required=True, help="an indexed database")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cases", nargs="*", default=list(CASES), help="which cases (default: all)")
    args = parser.parse_args()
    trees = {"A": str(Path(args.a).resolve()), "B": str(Path(args.b).resolve())}
    envs = {}
    for name, tree in trees.items():
        runtime = tempfile.mkdtemp(prefix=f"warm-{name}-")
        envs[name] = {**os.environ, "PYTHONPATH": tree, "XDG_RUNTIME_DIR": runtime, "LANCELOT_WARM": "10"}
        envs[name]["LANCEDB_PATH"] = args.db
    python = sys.executable
    for name in trees:  # start each tree's server, and wait until it answers
        for _ in range(2):
            run_once([python, "-P", "-m", "lancelot_cli", *CASES["search --json"]], envs[name])
        time.sleep(3)
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    floor = [python, "-c", "import typer"]
    for _ in range(args.runs):
        for case in args.cases:
            for name in trees:  # A then B, every round
                argv = [python, "-P", "-m", "lancelot_cli", *CASES[case]]
                results.setdefault((case, name), []).append(run_once(argv, envs[name]))
        results.setdefault(("import typer", "-"), []).append(run_once(floor, envs["A"]))
    print(f"{'case':<20} {'tree':<4} {'wall min':>9} {'wall med':>9} {'cpu min':>8} {'cpu med':>8}")
    summary: dict[tuple[str, str], tuple[float, float, float, float]] = {}
    for (case, name), runs in results.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        row = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
        summary[(case, name)] = row
        print(f"{case:<20} {name:<4} {row[0]:9.3f} {row[1]:9.3f} {row[2]:8.3f} {row[3]:8.3f}")
    typer_cpu = summary[("import typer", "-")][3]
    print("\nB/A ratios (min / median), and B's median CPU over `import typer`'s:")
    for case in args.cases:
        a, b = summary[(case, "A")], summary[(case, "B")]
        print(
            f"{case:<20} wall {b[0] / a[0]:.2f} / {b[1] / a[1]:.2f}   cpu {b[2] / a[2]:.2f} / {b[3] / a[3]:.2f}"
            f"   cpu vs import typer {b[3] / typer_cpu:.2f} (A: {a[3] / typer_cpu:.2f})"
        )


if __name__ == "__main__":
    main()
