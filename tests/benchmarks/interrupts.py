"""How soon an interrupted `lancelot index` ends (issue 12, issue 16 #4): the timing targets that
tests/test_index_interrupts.py leaves out (its runs only have to end, cleanly).

Run from the repository root:
    python tests/benchmarks/interrupts.py [--random 20] [--commits 4]

* random: Ctrl-C and SIGTERM (alternately) to the process group of a `--rebuild` of 240 HTML
  pages, at a random moment up to 2 s after it took the writer lock or its workers appeared (the
  test's `interrupt_once`). Target: its one line within 2 s of the signal, the exit within 2.5 s.
* commit: the same signals as the first new data file of a re-run of 300 notes appears (the
  commit is being written; the test's `interrupt_commit`). Target: the exit within 2 s.

Runs that finished before the signal landed are counted apart. Prints a Markdown table and writes
results/interrupts.json.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
RESULTS = Path(__file__).resolve().parent / "results" / "interrupts.json"

from tests.test_index_interrupts import (  # noqa: E402
    _first_index_of,
    interrupt_commit,
    interrupt_once,
    make_pages,
)


def _row(name: str, seconds: list[float], target: float, other: int) -> str:
    if not seconds:
        return f"| {name} | 0 | - | - | - | {other} |"
    within = sum(s <= target for s in seconds)
    return (
        f"| {name} | {len(seconds)} | {statistics.median(seconds):.2f} | {max(seconds):.2f} | "
        f"{within}/{len(seconds)} within {target} s | {other} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=20, help="random-moment interrupts of a --rebuild")
    parser.add_argument("--commits", type=int, default=4, help="interrupts during the commit")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    rnd = random.Random(opts.seed or None)
    out: dict[str, list[dict]] = {"random": [], "commit": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pages = root / "pages"
        make_pages(pages, 240)
        db = root / "db"
        first = _first_index_of(pages, db, root)
        assert first.returncode == 0, first.stderr
        for attempt in range(opts.random):
            sig = signal.SIGINT if attempt % 2 == 0 else signal.SIGTERM
            after = "lock" if attempt % 4 < 2 else "workers"
            r = interrupt_once(pages, db, root, sig, rnd.uniform(0.0, 2.0), after=after)
            out["random"].append(
                {k: r[k] for k in ("signal", "delay", "finishedFirst", "code", "lineSeconds", "exitSeconds", "members")}
            )
        for attempt in range(opts.commits):
            sig = signal.SIGINT if attempt % 2 == 0 else signal.SIGTERM
            case = root / f"commit-{attempt}"
            case.mkdir()
            r = interrupt_commit(case / "src", case / "db", case, sig)
            out["commit"].append({"signal": signal.Signals(sig).name, "code": r["code"], "seconds": r["seconds"]})
    landed = [r for r in out["random"] if not r["finishedFirst"] and r["code"] not in (0, None)]
    print("| case | runs | median s | max s | target | finished first or no exit |")
    print("|---|---|---|---|---|---|")
    print(
        _row(
            "random: line after the signal",
            [r["lineSeconds"] for r in landed if r["lineSeconds"] is not None],
            2.0,
            len(out["random"]) - len(landed),
        )
    )
    print(
        _row("random: exit after the signal", [r["exitSeconds"] for r in landed], 2.5, len(out["random"]) - len(landed))
    )
    ended = [r["seconds"] for r in out["commit"] if r["code"] in (130, 143)]
    print(_row("commit: exit after the signal", ended, 2.0, len(out["commit"]) - len(ended)))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
