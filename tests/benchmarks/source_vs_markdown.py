"""A source tree against a folder of Markdown with as many files (issue 47): does `lancelot index`
read code, split by syntax, at the cost of prose? Whole processes, paired run by run.

Run from the repository root:
    python tests/benchmarks/source_vs_markdown.py [--files 3000] [--runs 3] [--code-at REV] [--keep DIR]

1. Two trees of --files files each, copied from real ones (the copies numbered, ``NAME-2/...``,
   until there are enough): the source tree a third each of Python (/work/corpora/raiden), Go
   (celestia-app) and Rust (tendermint-rs), the files `lancelot index` takes from those repositories
   (``scanning.scan``: no vendored, generated or empty ones) with a ``pyproject.toml`` at the top,
   so the tree is a project and its code is indexed with no flag; the Markdown tree the FastAPI
   documentation's pages (../shared/data/fastapi-docs). Bytes, files and chunks are printed.
2. Rounds, source (S) and Markdown (M) in turn, S M then M S: a full ``lancelot index SRC DB
   --no-embed --json`` into a fresh database, a re-run with no change, and a re-run after one file
   changed (a comment line appended to a source file, a sentence to a Markdown page; each round
   the next of the files nearest the tree's median size). Each is a whole process: wall clock,
   CPU (user + system) and peak RSS (wait4: the largest process of the tree), and the seconds the
   run prints (``seconds`` of --json). A throwaway config folder; no LANCEDB_/OPENAI_ variables.
3. Prints min / median of each figure per tree and S / M taken round by round (min / median),
   against the targets: full-index wall and peak RSS within 1.5x, the one-file re-run of a source
   file no slower than of a Markdown file. ``/proc/loadavg`` before and after. Writes
   tests/benchmarks/results/source_vs_markdown.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: `tests.benchmarks` and `lancelot_cli` from the checkout
    sys.path.insert(0, str(REPO))

CORPORA = Path("/work/corpora")
SOURCES = (("raiden", ".py"), ("celestia-app", ".go"), ("tendermint-rs", ".rs"))
MARKDOWN = (REPO / ".." / "shared" / "data" / "fastapi-docs").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "source_vs_markdown.json"
KINDS = ("full", "noChange", "oneFile")
TARGETS = {"full wall_s": 1.5, "full rss_mib": 1.5, "oneFile wall_s": 1.0}
COMMENT = {".py": "# ", ".go": "// ", ".rs": "// "}


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def indexed_files(root: Path, suffix: str) -> list[Path]:
    """The files with ``suffix`` that `lancelot index` takes from ``root`` (its own scan), not empty."""
    from lancelot_cli.indexer.scanning import scan

    found = [root / rel for rel in scan(root, code=True).paths if rel.endswith(suffix)]
    return [path for path in found if path.read_bytes().strip()]


def copy_cycled(files: list[Path], root: Path, name: str, count: int, target: Path) -> list[Path]:
    """``count`` of ``files`` (relative to ``root``) copied under ``target``: ``name-1/...`` first,
    then ``name-2/...`` and on, as many copies as it takes."""
    copied = []
    for n in range(count):
        source = files[n % len(files)]
        destination = target / f"{name}-{n // len(files) + 1}" / source.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
        copied.append(destination)
    return copied


def build(work: Path, files: int) -> dict[str, list[Path]]:
    """The two trees under ``work``: ``source`` and ``markdown``, ``files`` files each."""
    source = work / "source"
    source.mkdir()
    (source / "pyproject.toml").write_text('[project]\nname = "mixed"\n')  # a project: code by default
    made: list[Path] = []
    for n, (name, suffix) in enumerate(SOURCES):
        share = files // len(SOURCES) + (1 if n < files % len(SOURCES) else 0)
        found = indexed_files(CORPORA / name, suffix)
        made += copy_cycled(found, CORPORA / name, name, share, source)
    pages = sorted(p for p in MARKDOWN.rglob("*.md") if p.read_bytes().strip())
    markdown = copy_cycled(pages, MARKDOWN, "fastapi", files, work / "markdown")
    return {"S": made, "M": markdown}


def near_median(paths: list[Path], count: int) -> list[Path]:
    """The ``count`` files whose size is nearest the median (one per round to edit)."""
    sizes = {path: path.stat().st_size for path in paths}
    middle = statistics.median(sizes.values())
    return sorted(paths, key=lambda path: (abs(sizes[path] - middle), str(path)))[:count]


def edit(path: Path, round_: int) -> None:
    """One line appended: a comment to a source file, a sentence to a Markdown page."""
    line = f"{COMMENT[path.suffix]}edited in round {round_}" if path.suffix in COMMENT else f"Edited in round {round_}."
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"\n{line}\n")


def run_index(code: Path, src: Path, db: Path, config: Path) -> dict[str, float]:
    """One whole `lancelot index SRC DB --no-embed --json` process: wall, CPU, peak RSS, and what it prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_"))}
    env.update(PYTHONPATH=str(code), LANCELOT_CONFIG_DIR=str(config), COLUMNS="400")
    argv = [sys.executable, "-m", "lancelot_cli", "index", str(src), str(db), "--no-embed", "--json"]
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=str(code), stdout=subprocess.PIPE, stderr=err, env=env)
        assert process.stdout is not None
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.stdout.close()
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"lancelot index {src} failed:\n{err.read().decode()[-2000:]}")
    summary = json.loads(out.decode().strip().splitlines()[-1])
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "printed_s": float(summary["seconds"]),
        "read": summary["read"],
        "files": summary["files"],
        "chunks": summary["chunks"],
    }


def rounds(code: Path, work: Path, trees: dict[str, list[Path]], runs: int) -> list[dict[str, Any]]:
    config = work / "config"
    config.mkdir(exist_ok=True)
    folders = {"S": work / "source", "M": work / "markdown"}
    edited = {label: near_median(paths, runs) for label, paths in trees.items()}
    records = []
    for n in range(runs):
        order = ("S", "M") if n % 2 == 0 else ("M", "S")
        record: dict[str, Any] = {"load": loadavg()}
        for label in order:
            db = work / f"db-{label}"
            shutil.rmtree(db, ignore_errors=True)
            record[label] = {"full": run_index(code, folders[label], db, config)}
        for label in order:
            record[label]["noChange"] = run_index(code, folders[label], work / f"db-{label}", config)
        for label in order:
            edit(edited[label][n], n)
            record[label]["oneFile"] = run_index(code, folders[label], work / f"db-{label}", config)
            assert record[label]["oneFile"]["read"] == 1, record[label]["oneFile"]
        records.append(record)
        line = "; ".join(
            f"{label}: " + ", ".join(f"{kind} {record[label][kind]['wall_s']:.2f} s" for kind in KINDS)
            for label in order
        )
        print(f"round {n + 1}/{runs} (load {record['load'].split()[0]}): {line}", file=sys.stderr, flush=True)
    return records


def min_median(values: list[float]) -> str:
    return f"{min(values):.3g} / {statistics.median(values):.3g}"


def report(records: list[dict[str, Any]], trees: dict[str, list[Path]]) -> str:
    first = records[0]
    sizes = {label: sum(path.stat().st_size for path in paths) for label, paths in trees.items()}
    lines = [
        "| tree | files | MiB | chunks |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {full['files']} | {sizes[label] / 2**20:.1f} | {full['chunks']} |"
            for label, name in (("S", "source (Python, Go, Rust)"), ("M", "Markdown (FastAPI docs)"))
            for full in [first[label]["full"]]
        ),
        "",
        "| run | figure | source min / median | Markdown min / median | S / M min / median (round by round) | target |",
        "|---|---|---:|---:|---:|---|",
    ]
    for kind in KINDS:
        for figure in ("wall_s", "cpu_s", "rss_mib", "printed_s"):
            s = [record["S"][kind][figure] for record in records]
            m = [record["M"][kind][figure] for record in records]
            ratios = [a / b for a, b in zip(s, m, strict=True) if b]
            target = TARGETS.get(f"{kind} {figure}")
            met = ""
            if target is not None:
                met = f"<= {target}: " + ("met" if statistics.median(ratios) <= target else "NOT met")
            paired = min_median(ratios) if ratios else "-"
            lines.append(f"| {kind} | {figure} | {min_median(s)} | {min_median(m)} | {paired} | {met} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=3000, help="files in each tree")
    parser.add_argument("--runs", type=int, default=3, help="rounds (each: full, no change, one file; both trees)")
    parser.add_argument("--code-at", metavar="REV", help="run the package as committed at REV (known_items.py)")
    parser.add_argument("--keep", type=Path, help="build the trees in DIR and keep them (default: a temporary folder)")
    args = parser.parse_args()
    from tests.benchmarks.known_items import code_root

    code, described = code_root(args.code_at)
    print(f"load before: {loadavg()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; code: {described}")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        if args.keep:
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
        trees = build(work, args.files)
        records = rounds(code, work, trees, args.runs)
        print(report(records, trees))
    print(f"load after: {loadavg()}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"code": described, "files": args.files, "rounds": records}, indent=1))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
