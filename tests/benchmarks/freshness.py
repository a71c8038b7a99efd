"""Freshness benchmark: incremental re-runs and `lancelot index --watch` on a large folder, seen
through a running `lancelot serve` (stdio, the MCP SDK's client).

Run from the repository root:
    python tests/benchmarks/freshness.py [--files 5000] [--chunks 25000] [--edits 30] [--batches 300] [--no-watch]

1. Writes --files Markdown files (50 folders) of BEIR SciFact abstracts (`../shared/data/scifact/`,
   --corpus to override): each file a random mix of abstracts, sentences shuffled, as `## title`
   sections, grown until it makes a drawn number of chunks (mean --chunks / --files).
2. In this process (imports warm): a full `index_folder`, then the median of 3 no-change re-runs
   and of 3 runs after one file changed (and whether each ran optimize(): storage.policy.
   OptimizePolicy leaves a small change to the search's scan of unindexed rows); also one no-change
   `lancelot index` (wall clock, so with interpreter start). Targets: no-change <= 5 % of the full
   index, one file <= 3 %.
3. Starts `lancelot index SRC DB --watch` and `lancelot serve` (stdio). Search latency of the
   server (SciFact claims, limit 10) while idle, then --edits edits: each appends a paragraph with
   a new word to a random file and polls `lancedb_search` for the word every ~20 ms until the
   edited file is a hit (save -> searchable; target p95 <= 2 s), one edit at a time.
4. Searches (claims) while edits keep the watcher busy; a call counts as "during a batch" when it
   starts inside a batch's interval (end = when the watcher's batch line arrived, start = end minus
   the seconds the line reports). Compared with the idle calls.
5. Drives --batches batches by rewriting one small file (waiting for each batch line) and reads the
   watcher's VmRSS after 10 batches and at checkpoints up to --batches; the batch durations at the
   start and end; then the idle search latency again (the table now has ~2 versions per batch more).
6. Stops the watcher with SIGTERM (exit code, "Stopped watching"), prints Markdown tables and writes
   tests/benchmarks/results/freshness.json (git-ignored).

The machine's cores are shared by this script, the watcher and the server.

Real-folder mode (issue 25), instead of the steps above:
    python tests/benchmarks/freshness.py --folder PATH [--folder PATH ...] [--copies 3] [--runs 5]
        [--full-runs N] [--base REV] [--no-embed-arg]

copies each folder --copies times (shutil.copytree: file times kept) into one source folder and
runs whole `lancelot index SRC DB --json` processes, paired run by run: with --base REV, the
package as committed at REV (a `git archive`, as known_items.py --code-at) against the working
tree, A B then B A in alternate rounds. Per round: a full index into a fresh database (the first
--full-runs rounds; default all), a no-change re-run, and a run after one file changed (a line
appended, the same file for both). For each: wall clock, CPU (user + system) and peak RSS of the
process (wait4), and the seconds `index` prints (`seconds` of --json). Ratios are per round (the
no-change run over that round's full run of the same code; B over A), then min and median. Each
round ends with `importFloor`: a process that only imports lancedb as the writer does, its
printed seconds the import's own (a run that commits cannot print less than that).
`cat /proc/loadavg` is read before and after. Writes results/freshness-folder.json.

With --qmd "COMMAND" (e.g. --qmd "node /path/to/qmd/dist/cli/qmd.js"), qmd runs in the same rounds
as the label Q, on the same files and edits, with its own HOME and XDG folders (so its own index):
a full index is `qmd collection add SRC --name docs` into a fresh folder, a re-run `qmd update`.
qmd prints no seconds, so its printed seconds are its wall clock. qmd stores a document's text once
per content hash, so with --qmd every copy after the first gets one line naming the copy in each
of its text files: both tools index the same number of distinct documents. Ratios B / Q are paired
run by run as B / A is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "freshness.json"
FOLDERS = 50
LIMIT = 10
POLL_S = 0.02  # between two searches while waiting for an edit to show
EDIT_TIMEOUT = 30.0  # seconds for one edit to become searchable before it counts as lost
BATCH_TIMEOUT = 60.0  # seconds to wait for one batch line
RSS_CHECKPOINTS = (10, 50, 100, 200, 300, 500, 750, 1000)
TARGETS = {"noChange": 0.05, "oneFile": 0.03, "watchP95": 2.0}


# -- data ----------------------------------------------------------------------------------------


def read_corpus(path: Path) -> list[tuple[str, str]]:
    docs = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                if str(row.get("text") or "").strip():
                    docs.append((str(row.get("title") or "").strip(), str(row["text"]).strip()))
    return docs


def read_queries(path: Path) -> list[str]:
    """The claims' text only (``metadata`` names relevant documents and is never read)."""
    with path.open(encoding="utf-8") as handle:
        return [str(json.loads(line)["text"]).strip() for line in handle if line.strip()]


def write_corpus(src: Path, abstracts: list[tuple[str, str]], files: int, chunks: int, seed: int = 6) -> dict[str, Any]:
    """``files`` Markdown files; returns the file and chunk counts as the indexer will see them."""
    from lancelot_cli.indexer.chunking import chunk_text

    rng = random.Random(seed)
    mean = chunks / files
    made = 0
    for i in range(files):
        # A file grows by whole abstracts (about 1.2 chunks each), so it overshoots its target by about 0.6.
        target = max(1, round(rng.gauss(mean - 0.6, mean / 3)))
        title, _ = abstracts[rng.randrange(len(abstracts))]
        parts = [f"# {title or f'Notes {i}'}"]
        n = 0
        while n < target:
            head, text = abstracts[rng.randrange(len(abstracts))]
            sentences = re.split(r"(?<=[.!?])\s+", text)
            rng.shuffle(sentences)
            parts.append(f"## {head}\n\n{' '.join(sentences)}")
            n = len(chunk_text("\n\n".join(parts)))
        made += n
        path = src / f"topic-{i % FOLDERS:02d}" / f"doc-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return {"files": files, "chunks": made}


def word(n: int, prefix: str) -> str:
    """A made-up word no abstract contains: the prefix, then n in letters."""
    letters = ""
    n += 26 * 26
    while n:
        n, r = divmod(n, 26)
        letters = chr(97 + r) + letters
    return f"{prefix}{letters}q"


# -- helpers -------------------------------------------------------------------------------------


def lancelot_command() -> list[str]:
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "OPENAI_", "EMBEDDING_"))}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def stats(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": pct(values, 0.5),
        "p95": pct(values, 0.95),
        "max": max(values, default=float("nan")),
    }


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Watcher:
    """`lancelot index SRC DB --watch`; stderr lines kept with their arrival time."""

    BATCH = re.compile(r" (\d+) file\(s\) read: .* (\d+) in table, ([\d.]+) s")

    def __init__(self, src: Path, db: Path, config: Path) -> None:
        self.proc = subprocess.Popen(
            [*lancelot_command(), "index", str(src), str(db), "--watch"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(LANCELOT_CONFIG_DIR=str(config), COLUMNS="400"),
        )
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.perf_counter(), line.rstrip("\n")))

    def batches(self) -> list[tuple[float, float, float]]:
        """(start, end, seconds) of every batch line: end = arrival, start = end - reported seconds."""
        found = []
        for at, line in list(self.lines):
            match = self.BATCH.search(line)
            if match:
                seconds = float(match.group(3))
                found.append((at - seconds, at, seconds))
        return found

    def wait_batches(self, count: int, timeout: float = BATCH_TIMEOUT) -> None:
        deadline = time.perf_counter() + timeout
        while len(self.batches()) < count:
            if self.proc.poll() is not None:
                raise SystemExit(f"the watcher exited ({self.proc.returncode}):\n{self.stderr()[-3000:]}")
            if time.perf_counter() > deadline:
                raise SystemExit(f"no batch {count} within {timeout} s:\n{self.stderr()[-3000:]}")
            time.sleep(0.01)

    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def stop(self) -> dict[str, Any]:
        start = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
            code = None
        self._thread.join(timeout=5)
        return {
            "returncode": code,
            "stop_s": time.perf_counter() - start,
            "stoppedWatching": "Stopped watching" in self.stderr(),
        }


# -- phases --------------------------------------------------------------------------------------


def incremental(src: Path, db: Path) -> dict[str, Any]:
    import lancedb  # noqa: F401  (warm imports: time the work, not the interpreter)

    from lancelot_cli.indexer import index_folder

    started = time.perf_counter()
    full = index_folder(src, str(db))
    full_s = time.perf_counter() - started
    no_change = []
    for _ in range(3):
        started = time.perf_counter()
        report = index_folder(src, str(db))
        no_change.append(time.perf_counter() - started)
        assert report.read == 0 and not report.committed, report.as_dict()
    one, optimized = [], []
    files = sorted(src.rglob("*.md"))
    for n in range(3):
        path = files[(n * 997) % len(files)]
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\nAn added paragraph that mentions {word(n, 'rerun')}.\n")
        started = time.perf_counter()
        report = index_folder(src, str(db))
        one.append(time.perf_counter() - started)
        optimized.append(report.optimized)  # storage.policy.OptimizePolicy: a small change is left to the scan
        assert report.read == 1 and report.committed, report.as_dict()
    started = time.perf_counter()
    cli = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db)], capture_output=True, text=True, env=child_env(COLUMNS="400")
    )
    cli_s = time.perf_counter() - started
    assert cli.returncode == 0, cli.stderr
    return {
        "rows": full.chunks,
        "files": full.files,
        "full_s": full_s,
        "noChange_s": statistics.median(no_change),
        "noChangeRuns_s": no_change,
        "oneFile_s": statistics.median(one),
        "oneFileRuns_s": one,
        "oneFileOptimized": optimized,
        "cliNoChangeWall_s": cli_s,
    }


async def served(src: Path, db: Path, config: Path, queries: list[str], edits: int, batches: int) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    out: dict[str, Any] = {}
    watcher = Watcher(src, db, config)
    rng = random.Random(66)
    files = sorted(p for p in src.rglob("*.md"))
    try:
        # Ready: rewrite a sentinel until the watcher reports a batch (it subscribes after its first pass).
        sentinel = src / "watcher-ready.md"
        deadline = time.perf_counter() + 120
        check = 0
        while not watcher.batches():
            check += 1
            sentinel.write_text(f"# Ready\n\nThe watcher is ready, check {check}.\n")
            settle = time.perf_counter() + 1.0
            while not watcher.batches() and time.perf_counter() < settle:
                time.sleep(0.02)
            if time.perf_counter() > deadline or watcher.proc.poll() is not None:
                raise SystemExit(f"the watcher never reported a batch:\n{watcher.stderr()[-3000:]}")
        time.sleep(1.5)
        command = lancelot_command()
        params = StdioServerParameters(
            command=command[0],
            args=[*command[1:], "serve"],
            env=child_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(config)),
        )
        async with Client(params) as client:
            errors: list[str] = []

            async def search(query: str) -> tuple[float, float, dict[str, Any]]:
                started = time.perf_counter()
                result = await client.call_tool("lancedb_search", {"query": query, "limit": LIMIT})
                ended = time.perf_counter()
                if result.is_error:
                    errors.append(str(result.content)[:300])
                    return started, ended, {"hits": []}
                return started, ended, result.structured_content

            async def idle(n: int) -> list[float]:
                times = []
                for k in range(n):
                    started, ended, _ = await search(queries[k % len(queries)])
                    times.append(ended - started)
                return times

            for k in range(10):  # warm-up
                await search(queries[k])
            note("idle searches ...")
            out["searchIdle"] = stats(await idle(200))

            note(f"{edits} edits, save -> searchable ...")
            # Save -> searchable, one edit at a time.
            latencies, batch_s, during = [], [], []
            for n in range(edits):
                path = files[rng.randrange(len(files))]
                rel = path.relative_to(src).as_posix()
                probe = word(n, "fresh")
                seen = len(watcher.batches())
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"\n\nA freshly saved paragraph about {probe}.\n")
                saved = time.perf_counter()
                while True:
                    started, ended, reply = await search(probe)
                    during.append((started, ended - started))
                    if any(hit["source"] == rel for hit in reply["hits"]):
                        latencies.append(ended - saved)
                        break
                    if ended - saved > EDIT_TIMEOUT:
                        latencies.append(float("inf"))
                        break
                    await _sleep(POLL_S)
                watcher.wait_batches(seen + 1)
                batch_s.append(watcher.batches()[-1][2])
                await _sleep(0.3)
            out["watchLatency"] = {
                **stats(latencies),
                "lost": sum(1 for x in latencies if x == float("inf")),
                "all_s": latencies,
                "batch_s": stats(batch_s),
            }

            note("searches while batches run ...")
            # Claims searched while edits keep the watcher busy.
            calls: list[tuple[float, float]] = []
            stop_at = time.perf_counter() + max(20.0, edits * 0.7)
            edits_made = 0
            next_edit = time.perf_counter()
            k = 0
            while time.perf_counter() < stop_at:
                if time.perf_counter() >= next_edit:
                    path = files[rng.randrange(len(files))]
                    with path.open("a", encoding="utf-8") as handle:
                        handle.write(f"\n\nAnother paragraph about {word(1000 + edits_made, 'busy')}.\n")
                    edits_made += 1
                    next_edit = time.perf_counter() + 1.2
                started, ended, _ = await search(queries[k % len(queries)])
                calls.append((started, ended - started))
                k += 1
            time.sleep(2.0)
            intervals = watcher.batches()
            inside = [d for s, d in calls if any(a <= s <= b for a, b, _ in intervals)]
            outside = [d for s, d in calls if not any(a - 0.2 <= s <= b + 0.2 for a, b, _ in intervals)]
            out["searchDuringBatch"] = stats(inside)
            out["searchBetweenBatches"] = stats(outside)

            note(f"{batches} batches for the RSS run ...")
            # Many batches: RSS of the watcher.
            rss: dict[int, int | None] = {}
            small = src / "rss-driver.md"
            base = len(watcher.batches())
            durations = []
            started_phase = time.perf_counter()
            for n in range(1, batches + 1):
                small.write_text(f"# Driver\n\nBatch {n} of the memory run, {word(n, 'rss')}.\n")
                watcher.wait_batches(base + n)
                durations.append(watcher.batches()[-1][2])
                if n in RSS_CHECKPOINTS or n == batches:
                    rss[n] = rss_kib(watcher.proc.pid)
                    note(f"  batch {n}: watcher RSS {rss[n]} KiB")
                time.sleep(0.02)
            out["rss"] = {
                "batches": batches,
                "kib": rss,
                "phase_s": time.perf_counter() - started_phase,
                "batchFirst10_s": stats(durations[:10]),
                "batchLast10_s": stats(durations[-10:]),
            }
            out["searchIdleAfter"] = stats(await idle(200))
            out["searchErrors"] = len(errors)
            out["searchErrorSamples"] = errors[:3]
    finally:
        out["stop"] = watcher.stop() if watcher.proc.poll() is None else {"returncode": watcher.proc.returncode}
        out["watcherWarnings"] = [line for _, line in watcher.lines if "warning" in line.lower()][:5]
    return out


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


# -- report --------------------------------------------------------------------------------------


def ms(value: float) -> str:
    return "lost" if value == float("inf") else f"{value * 1000:.0f} ms"


def report(meta: dict[str, Any], inc: dict[str, Any], live: dict[str, Any] | None) -> str:
    full = inc["full_s"]
    lines = [
        (
            f"Corpus: {inc['files']:,} Markdown files, {inc['rows']:,} chunks (SciFact abstracts). "
            f"{meta['cpus']} cores, Python {meta['python']}, lancedb {meta['lancedb']}."
        ),
        "",
        "| Indexing (in-process, warm imports) | seconds | share of full | target | ok |",
        "| --- | ---: | ---: | ---: | :---: |",
        f"| full index | {full:.2f} | 100 % | | |",
        (
            f"| no-change re-run (median of 3) | {inc['noChange_s']:.3f} | {inc['noChange_s'] / full:.1%} | <= 5 % | "
            f"{'yes' if inc['noChange_s'] / full <= TARGETS['noChange'] else 'NO'} |"
        ),
        (
            f"| one file changed (median of 3; optimize() ran {sum(inc.get('oneFileOptimized', []))} of 3) | "
            f"{inc['oneFile_s']:.3f} | {inc['oneFile_s'] / full:.1%} | <= 3 % | "
            f"{'yes' if inc['oneFile_s'] / full <= TARGETS['oneFile'] else 'NO'} |"
        ),
        (
            f"| `lancelot index` no change, CLI wall clock | {inc['cliNoChangeWall_s']:.2f} | "
            f"{inc['cliNoChangeWall_s'] / full:.1%} | | |"
        ),
        "",
    ]
    if live is None:  # --no-watch
        return "\n".join(lines)
    w = live["watchLatency"]
    lines += [
        "| Watch, through `lancelot serve` (stdio) | p50 | p95 | max | n | target | ok |",
        "| --- | ---: | ---: | ---: | ---: | ---: | :---: |",
        (
            f"| save -> searchable | {ms(w['p50'])} | {ms(w['p95'])} | {ms(w['max'])} | {w['n']} (lost {w['lost']}) | "
            f"p95 <= 2 s | {'yes' if w['p95'] <= TARGETS['watchP95'] and not w['lost'] else 'NO'} |"
        ),
        (
            f"| watcher batch duration (its own report) | {ms(w['batch_s']['p50'])} | {ms(w['batch_s']['p95'])} | "
            f"{ms(w['batch_s']['max'])} | {w['batch_s']['n']} | | |"
        ),
        "",
        "| Server `lancedb_search` (claims, limit 10) | p50 | p95 | calls |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, key in (
        ("idle", "searchIdle"),
        ("during a watch batch", "searchDuringBatch"),
        ("between batches (same run)", "searchBetweenBatches"),
        (f"idle after {live['rss']['batches']} more batches", "searchIdleAfter"),
    ):
        s = live[key]
        lines.append(f"| {label} | {ms(s['p50'])} | {ms(s['p95'])} | {s['n']} |")
    rss = live["rss"]
    kib = {int(k): v for k, v in rss["kib"].items()}
    first, last = kib.get(10), kib.get(rss["batches"])
    growth = (last - first) / first if first and last else float("nan")
    lines += [
        f"| search errors | | | {live['searchErrors']} |",
        "",
        "| Watcher RSS after N batches | " + " | ".join(f"{n}" for n in sorted(kib)) + " |",
        "| --- | " + " | ".join("---:" for _ in kib) + " |",
        "| MiB | " + " | ".join(f"{(kib[n] or 0) / 1024:.1f}" for n in sorted(kib)) + " |",
        "",
        (
            f"RSS growth from batch 10 to {rss['batches']}: {growth:+.1%}; batch duration p50 first 10 "
            f"{ms(rss['batchFirst10_s']['p50'])}, last 10 {ms(rss['batchLast10_s']['p50'])}; "
            f"{rss['batches']} batches took {rss['phase_s']:.0f} s."
        ),
        (
            f"Watcher stop (SIGTERM): exit {live['stop'].get('returncode')}, "
            f'"Stopped watching" {"printed" if live["stop"].get("stoppedWatching") else "MISSING"}, '
            f"{live['stop'].get('stop_s', float('nan')):.2f} s."
        ),
    ]
    return "\n".join(lines)


# -- real-folder mode (issue 25) -------------------------------------------------------------------


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def timed_process(
    argv: list[str], cwd: Path, env: dict[str, str], stderr: Any = None
) -> tuple[bytes, dict[str, float], int]:
    """Run ``argv`` to its end: its stdout, {wall_s, cpu_s, rss_mib} of the whole process (wait4,
    not proc.wait(): wait4 gives the child's rusage) and its exit code."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=str(cwd), stdout=subprocess.PIPE, stderr=stderr, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    measured = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024}
    return out, measured, proc.returncode


def run_index(code: Path, src: Path, db: Path, config: Path) -> dict[str, float]:
    """One whole `lancelot index SRC DB --json` process of the package under ``code``: wall, CPU,
    peak RSS (wait4) and the seconds it prints."""
    env = child_env(LANCELOT_CONFIG_DIR=str(config), COLUMNS="400")
    env["PYTHONPATH"] = str(code) + os.pathsep + str(REPO)
    with tempfile.TemporaryFile() as err:
        argv = [sys.executable, "-m", "lancelot_cli", "index", str(src), str(db), "--json"]
        out, measured, exit_code = timed_process(argv, code, env, stderr=err)
        if exit_code != 0:
            err.seek(0)
            raise SystemExit(f"lancelot index failed under {code}:\n{err.read().decode()[-2000:]}")
    summary = json.loads(out.decode().strip().splitlines()[-1])
    return {
        **measured,
        "printed_s": float(summary["seconds"]),
        "read": summary["read"],
        "files": summary["files"],
        "chunks": summary["chunks"],
    }


# The writer's imports as a run sets them up: since issue 48 #4 the lancedb import deferral is
# installed by startup.start() (an older checkout installs it when lancelot_cli.storage loads).
IMPORT_FLOOR = """
import time
began = time.perf_counter()
import lancelot_cli.storage
try:
    from lancelot_cli.startup import start
except ImportError:
    pass
else:
    start()
import lancedb
print(time.perf_counter() - began)
"""


def run_import_floor(code: Path, config: Path) -> dict[str, float]:
    """The floor of a run that commits: a process that only imports lancedb as the writer does
    (through ``lancelot_cli.storage``, so with its deferred imports); ``printed_s`` is the import's
    own seconds, measured inside the process as ``index`` measures its run."""
    env = child_env(LANCELOT_CONFIG_DIR=str(config))
    env["PYTHONPATH"] = str(code) + os.pathsep + str(REPO)
    out, measured, exit_code = timed_process([sys.executable, "-c", IMPORT_FLOOR], code, env)
    if exit_code != 0:
        raise SystemExit(f"importing lancedb failed under {code}")
    return {**measured, "printed_s": float(out.decode().strip())}


TEXT_SUFFIXES = {".md", ".html", ".htm", ".txt"}  # the files a round edits (and --qmd tells apart)
QMD_FILES = re.compile(r"Indexed: (\d+) new, (\d+) updated, (\d+) unchanged")


def run_qmd(command: list[str], kind: str, src: Path, home: Path) -> dict[str, float]:
    """One whole qmd process: ``collection add`` into a fresh HOME for a full index, else ``update``;
    wall, CPU and peak RSS (wait4), its wall as its printed seconds, and the files it counted."""
    if kind == "full":
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
    args = ["collection", "add", str(src), "--name", "docs"] if kind == "full" else ["update"]
    env = child_env(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), XDG_CONFIG_HOME=str(home / "config"))
    raw, measured, exit_code = timed_process([*command, *args], home, env, stderr=subprocess.STDOUT)
    out = raw.decode(errors="replace")
    if exit_code != 0:
        raise SystemExit(f"qmd {' '.join(args)} failed (exit {exit_code}):\n{out[-2000:]}")
    found = QMD_FILES.findall(out)
    counted = [int(n) for n in found[-1]] if found else [0, 0, 0]
    return {
        **measured,
        "printed_s": measured["wall_s"],
        "read": counted[0] + counted[1],
        "files": sum(counted),
        "chunks": 0,
    }


def distinguish_copies(src: Path) -> None:
    """One line naming the copy at the end of each text file of every copy after the first (qmd
    keeps one text per content hash; the copies must be distinct documents for both tools)."""
    for folder in sorted(src.iterdir()):
        n = int(folder.name.rsplit("-", 1)[1])
        if n == 1:
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.suffix.lower() in TEXT_SUFFIXES:
                stat = path.stat()
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"\n\nCopy {n} of this page.\n")
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # file times kept, as copytree keeps them


def folder_rounds(opts: argparse.Namespace, root: Path) -> dict[str, Any]:
    """The paired rounds of the real-folder mode; returns every run and the code each label ran."""
    from tests.benchmarks.known_items import code_root

    codes = {"B": code_root(None)}
    if opts.base:
        codes["A"] = code_root(opts.base)
    src = root / "src"
    for folder in opts.folder:
        for n in range(1, opts.copies + 1):
            shutil.copytree(folder, src / f"{Path(folder).name}-{n}", symlinks=True)
    qmd = shlex.split(opts.qmd) if opts.qmd else None
    if qmd:
        codes["Q"] = (root / "qmd-home", "qmd: " + opts.qmd)
        distinguish_copies(src)
    docs = sorted(p for p in src.rglob("*") if p.suffix.lower() in TEXT_SUFFIXES)
    config = root / "config"
    config.mkdir()
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in codes}
    full_runs = opts.full_runs if opts.full_runs is not None else opts.runs
    dbs = {label: root / f"db-{label}" for label in codes}

    def run(label: str, kind: str) -> dict[str, float]:
        if label == "Q":
            return run_qmd(qmd or [], kind, src, codes["Q"][0])
        return run_index(codes[label][0], src, dbs[label], config)

    for n in range(opts.runs):
        order = sorted(codes) if n % 2 == 0 else sorted(codes, reverse=True)
        record: dict[str, dict[str, Any]] = {label: {"load": loadavg()} for label in codes}
        if n < full_runs or not dbs["B"].exists():
            for label in order:
                shutil.rmtree(dbs[label], ignore_errors=True)
                record[label]["full"] = run(label, "full")
        for label in order:
            record[label]["noChange"] = run(label, "noChange")
        changed = docs[(n * 97) % len(docs)]
        with changed.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\nA line added in round {n}, {word(n, 'round')}.\n")
        for label in order:
            record[label]["oneFile"] = run(label, "oneFile")
        for label in order:
            if label != "Q":
                record[label]["importFloor"] = run_import_floor(codes[label][0], config)
        for label in codes:
            runs[label].append(record[label])
        note(f"round {n + 1}/{opts.runs}: " + "; ".join(_round_line(record[label], label) for label in order))
    return {"codes": {label: described for label, (_, described) in codes.items()}, "runs": runs}


def _round_line(record: dict[str, Any], label: str) -> str:
    parts = [
        f"{kind} {record[kind]['wall_s']:.2f}/{record[kind]['printed_s']:.3f} s"
        for kind in FOLDER_KINDS
        if kind in record
    ]
    return f"{label}: " + ", ".join(parts)


FOLDER_KINDS = ("full", "noChange", "oneFile", "importFloor")


def min_median(values: list[float]) -> str:
    return f"{min(values):.3g} / {statistics.median(values):.3g}" if values else "—"


def folder_report(result: dict[str, Any]) -> str:
    """Markdown: per code, min / median of each measure and of the shares of the full run (paired
    within a round); then B over A, paired run by run."""
    runs = result["runs"]
    first = next(iter(runs.values()))[0]
    lines = [
        f"Folder: {first['full']['files']:,} documents, {first['full']['chunks']:,} chunks; "
        f"{len(next(iter(runs.values())))} rounds; load at the rounds: "
        + ", ".join(r["load"].split()[0] for r in next(iter(runs.values()))),
        "",
        "| code | run | wall s | CPU s | peak RSS MiB | printed s | share of full: whole process | printed |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, records in runs.items():
        for kind in FOLDER_KINDS:
            rows = [r for r in records if kind in r]
            paired = [r for r in rows if "full" in r]
            share_wall = [r[kind]["wall_s"] / r["full"]["wall_s"] for r in paired]
            share_printed = [r[kind]["printed_s"] / r["full"]["printed_s"] for r in paired]
            lines.append(
                f"| {label}: {result['codes'][label]} | {kind} | "
                + " | ".join(
                    min_median([r[kind][key] for r in rows]) for key in ("wall_s", "cpu_s", "rss_mib", "printed_s")
                )
                + f" | {min_median([100 * x for x in share_wall])} %"
                + f" | {min_median([100 * x for x in share_printed])} % |"
            )
    for other in sorted(set(runs) - {"B"}):
        lines += [
            "",
            f"| B / {other}, paired run by run | wall | CPU | peak RSS | printed |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for kind in FOLDER_KINDS:
            pairs = [(a[kind], b[kind]) for a, b in zip(runs[other], runs["B"], strict=True) if kind in a and kind in b]
            cells = [
                min_median([b[key] / a[key] for a, b in pairs if a[key]])
                for key in ("wall_s", "cpu_s", "rss_mib", "printed_s")
            ]
            lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("(min / median; a share is a run over the same round's full run of the same code)")
    return "\n".join(lines)


def folder_main(opts: argparse.Namespace) -> None:
    meta = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loadBefore": loadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="lancelot-freshness-folder-") as tmp:
        result = folder_rounds(opts, Path(tmp))
    meta["loadAfter"] = loadavg()
    text = folder_report(result)
    print(text)
    print(f"\nload before: {meta['loadBefore']}; after: {meta['loadAfter']}")
    output = opts.output.with_name("freshness-folder.json") if opts.output == RESULTS else opts.output
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"meta": meta, **result, "markdown": text}, indent=2, default=str) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--chunks", type=int, default=25000, help="about this many rows in all")
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--batches", type=int, default=300, help="watch batches for the RSS run (1000 takes longer)")
    parser.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    parser.add_argument("--queries", type=Path, default=DATA / "queries.jsonl")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="the in-process re-runs only (step 2; about a minute), no watcher or server",
    )
    parser.add_argument("--folder", action="append", type=Path, help="real-folder mode: a folder to copy and index")
    parser.add_argument("--copies", type=int, default=1, help="real-folder mode: copies of each --folder")
    parser.add_argument("--runs", type=int, default=5, help="real-folder mode: rounds")
    parser.add_argument("--full-runs", type=int, default=None, help="real-folder mode: rounds with a full index")
    parser.add_argument("--base", metavar="REV", help="real-folder mode: also run the package as committed at REV")
    parser.add_argument("--qmd", metavar="COMMAND", help="real-folder mode: also run qmd (its command line), paired")
    opts = parser.parse_args()
    if opts.folder:
        folder_main(opts)
        return

    import anyio
    import lancedb

    meta = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "lancedb": lancedb.__version__,
        "args": {k: str(v) for k, v in vars(opts).items()},
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lancelot-freshness-") as tmp:
        root = Path(tmp)
        src, db, config = root / "src", root / "db", root / "config"
        config.mkdir()
        note(f"writing {opts.files} files ...")
        corpus = write_corpus(src, read_corpus(opts.corpus), opts.files, opts.chunks)
        note(f"{corpus}; indexing ...")
        inc = incremental(src, db)
        live = None
        if not opts.no_watch:
            note(f"full {inc['full_s']:.1f} s; watch + serve ...")
            queries = read_queries(opts.queries)
            live = anyio.run(served, src, db, config, queries, opts.edits, opts.batches)
    meta["total_s"] = round(time.perf_counter() - began, 1)
    text = report(meta, inc, live)
    print(text)
    print(f"\n(total {meta['total_s']} s)")
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(
        json.dumps(
            {"meta": meta, "corpus": corpus, "incremental": inc, "watch": live, "targets": TARGETS, "markdown": text},
            indent=2,
            default=str,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
