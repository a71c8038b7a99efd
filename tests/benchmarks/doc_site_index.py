"""`lancelot index` of a documentation build: wall time and peak RSS of the whole process tree.

    python tests/benchmarks/doc_site_index.py [SRC ...] [--runs 1] [--extra-args "--no-site-detection"]

SRC defaults to the Django HTML docs (`apt-get install python-django-doc`) and the PostgreSQL manual
(`postgresql-doc-15`). Each run indexes into a fresh temporary database. The peak RSS is the largest
sum, over the parent and every descendant (the reader workers), of VmRSS sampled every 20 ms from
/proc (Linux only); the CPU time is user + system of the process and its workers (from wait4: on a
machine shared with other work it is steadier than the wall time). Prints a Markdown table and writes
`results/doc_site_index.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DEFAULT = ["/usr/share/doc/python-django-doc/html", "/usr/share/doc/postgresql-doc-15/html"]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kb(root: int) -> int:
    tree = _children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kb(pid)
        todo.extend(tree.get(pid, ()))
    return total


def measure(src: str, extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(Path(sys.executable).with_name("lancelot")), "index", src, str(Path(tmp, "db")), "--json", *extra]
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = 0
        cpu = 0.0
        out_chunks: list[str] = []
        reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:  # the rusage of a reaped process includes its reaped children (the workers)
                cpu = usage.ru_utime + usage.ru_stime
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            peak = max(peak, tree_rss_kb(proc.pid))
            time.sleep(0.02)
        wall = time.perf_counter() - started
        reader.join()
        out, err = "".join(out_chunks), proc.stderr.read()  # type: ignore[union-attr]
    if proc.returncode != 0:
        raise SystemExit(f"index failed ({proc.returncode}): {err[-2000:]}")
    report = json.loads(out)
    return {
        "source": src,
        "args": extra,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 1),
        "peak_rss_mb": round(peak / 1024),
        "files": report["files"],
        "chunks": report["chunks"],
        "skipped": len(report["skipped"]),
        "summary": err.strip().splitlines()[-1] if err.strip() else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--extra-args", default="")
    args = parser.parse_args()
    rows = [measure(src, shlex.split(args.extra_args)) for src in args.sources for _ in range(args.runs)]
    print("| source | files | chunks | wall (s) | CPU of the tree (s) | peak RSS of the tree (MB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['source']} {' '.join(row['args'])} | {row['files']} | {row['chunks']} | {row['wall_s']} | "
            f"{row['cpu_s']} | {row['peak_rss_mb']} |"
        )
    for row in rows:
        print(row["summary"])
    out = Path(__file__).parent / "results" / "doc_site_index.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
