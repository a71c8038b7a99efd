"""Big and hostile files: chunking time of one long paragraph (the old quadratic `split_long` next to
the current one), a whole `index_folder` run on a single-paragraph file, and the front-matter alias
bombs (time and peak memory of reading the file).

Run from the repository root:
    python tests/benchmarks/big_files.py [--sizes 8,16,50,100] [--old-up-to 16] [--index-sizes 10,50]
Each case runs in its own child process (peak RSS is per case); the old implementation is the
reference kept in tests/test_chunking.py, swapped in for that case only (a labelled experiment,
never a package change). Prints a Markdown table and writes results/big_files.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results" / "big_files.json"

WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "

CHUNK = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from lancelot_cli.indexer import chunking
if {old}:
    from tests.test_chunking import split_long_reference
    chunking.split_long = split_long_reference
text = ({words!r} * ({mb} * 1024 * 1024 // {n}))
started = time.perf_counter()
chunks = chunking.chunk_text(text)
print(json.dumps({{"seconds": time.perf_counter() - started, "chunks": len(chunks),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""

INDEX = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from lancelot_cli.indexer import index_folder
root = Path({folder!r})
(root / "docs").mkdir()
(root / "docs" / "one-paragraph.txt").write_text({words!r} * ({mb} * 1024 * 1024 // {n}))
started = time.perf_counter()
report = index_folder(root / "docs", str(root / "db"), max_file_size=10**9)
print(json.dumps({{"seconds": time.perf_counter() - started, "chunks": report.chunks,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""

BOMB = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from lancelot_cli.indexer.sources import SourceError, read_document
lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
lines += [f"a{{i}}: &a{{i}} [" + ",".join([f"*a{{i - 1}}"] * 9) + "]" for i in range(1, {levels} + 1)]
root = Path({folder!r})
(root / "bomb.md").write_text("---\\n" + "\\n".join(lines) + "\\n---\\n# Bomb\\n\\nbody\\n")
started = time.perf_counter()
try:
    read_document(root, "bomb.md")
    outcome = "read"
except SourceError as exc:
    outcome = "skipped: " + str(exc)[:60]
print(json.dumps({{"seconds": time.perf_counter() - started, "outcome": outcome,
                  "bytes": (root / "bomb.md").stat().st_size,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def child(code: str, timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"error": f"not done in {timeout:.0f} s"}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="8,16,50,100", help="MB of one paragraph for chunk_text")
    parser.add_argument("--old-up-to", type=int, default=16, help="also time the old split_long up to this size")
    parser.add_argument("--index-sizes", default="10,50", help="MB of one paragraph for a whole index_folder run")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    rows = []
    for mb in [int(s) for s in args.sizes.split(",") if s]:
        for old in [True, False] if mb <= args.old_up_to else [False]:
            code = CHUNK.format(repo=str(REPO), old=old, words=WORDS, n=len(WORDS), mb=mb)
            rows.append(
                {
                    "case": f"chunk_text, one {mb} MB paragraph",
                    "code": "old" if old else "now",
                    **child(code, args.timeout),
                }
            )
            print(rows[-1], file=sys.stderr)
    for mb in [int(s) for s in args.index_sizes.split(",") if s]:
        with tempfile.TemporaryDirectory() as folder:
            code = INDEX.format(repo=str(REPO), folder=folder, words=WORDS, n=len(WORDS), mb=mb)
            rows.append(
                {"case": f"index_folder, one {mb} MB paragraph (.txt)", "code": "now", **child(code, args.timeout)}
            )
            print(rows[-1], file=sys.stderr)
    for levels in (7, 8):
        with tempfile.TemporaryDirectory() as folder:
            code = BOMB.format(repo=str(REPO), folder=folder, levels=levels)
            rows.append(
                {"case": f"read_document, {levels}-level YAML alias bomb", "code": "now", **child(code, args.timeout)}
            )
            print(rows[-1], file=sys.stderr)
    print("| case | code | seconds | peak RSS MB | result |\n|---|---|---|---|---|")
    for row in rows:
        seconds = f"{row['seconds']:.2f}" if "seconds" in row else "-"
        peak = f"{row['peak_mb']:.0f}" if "peak_mb" in row else "-"
        result = row.get("error") or row.get("outcome") or f"{row.get('chunks', '')} chunks"
        print(f"| {row['case']} | {row['code']} | {seconds} | {peak} | {result} |")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
