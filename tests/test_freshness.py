"""Freshness with real processes (issue 6): a `lancelot index --watch` process keeps a table in step
with its folder while a `lancelot serve` process answers over stdio; `lancelot index` killed with
SIGKILL at any moment leaves a table that opens, searches, and holds each file's old or new rows,
never a mix; re-runs read and commit only what changed; two indexers never race.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from lancelot_cli.indexer import index_folder, rows_for
from lancelot_cli.indexer.sources import read_document, walk
from lancelot_cli.storage.write.policy import OPTIMIZE_POLICY
from tests.conftest import lancelot_command, subprocess_env
from tests.support.calls import text_of as _text
from tests.support.engines import engine_for, wired

pytestmark = pytest.mark.slow

STEP_TIMEOUT = 10.0  # seconds for one change to become searchable
STOP_TIMEOUT = 8.0  # seconds for the watcher to exit after SIGTERM/SIGINT


# -- helpers ---------------------------------------------------------------------------------------


class Watcher:
    """A real `lancelot index SRC DB --watch` process; its stderr lines are collected by a thread."""

    def __init__(self, src: Path, db: Path, config: Path) -> None:
        self.proc = subprocess.Popen(
            [*lancelot_command(), "index", str(src), str(db), "--watch"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(LANCELOT_CONFIG_DIR=str(config), COLUMNS="400"),
        )
        self.lines: list[str] = []
        self.out: list[str] = []
        self._threads = [
            threading.Thread(target=self._drain, args=(self.proc.stderr, self.lines), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.out), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _drain(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def batches(self) -> list[str]:
        return [line for line in self.lines if " file(s) read: " in line]

    def wait_for(self, predicate: Callable[[list[str]], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self.lines):
            if self.proc.poll() is not None:
                for thread in self._threads:  # until the reader threads saw the end of its output
                    thread.join(timeout=5)
                pytest.fail(f"the watcher exited ({self.proc.returncode}) while waiting for {what}:\n{self.stderr}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {timeout} s; watcher stderr:\n{self.stderr}")
            time.sleep(0.02)

    def wait_watching(self) -> None:
        self.wait_for(lambda lines: any(line.startswith("Watching ") for line in lines), 60, "'Watching' line")

    def wait_ready(self, src: Path) -> None:
        """Wait until the watcher has subscribed to file events. It prints "Watching", subscribes,
        then runs one more pass (indexer/watch.py), so one new file saved after the line is indexed
        by that pass or by an event batch, either way with exactly one batch line. The file is
        renamed into place whole, so no pass can read it half written (and then again)."""
        self.wait_watching()
        draft = src / ".watcher-ready.md.tmp"  # dot-named: not indexed, and its events are ignored
        draft.write_text("# Ready\n\nThe watcher is ready.\n")
        os.replace(draft, src / "watcher-ready.md")
        self.wait_for(lambda _lines: len(self.batches()) == 1, 60, "batch line for watcher-ready.md")

    def stop(self, sig: int) -> int | None:
        """Send ``sig``; the exit code, or None if it is still running after STOP_TIMEOUT (then killed)."""
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for thread in self._threads:
            thread.join(timeout=5)


def _stdio_params(db: Path, config: Path) -> StdioServerParameters:
    command = lancelot_command()
    return StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve"],
        env=subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(config)),
    )


def _sources(reply: dict[str, Any]) -> set[str]:
    return {hit["source"] for hit in reply["hits"]}


def folder_rows(root: Path) -> set[tuple[str, str]]:
    """(id, text) of every row the folder's documents make, as `index_folder` would write them."""
    return {(row["id"], row["text"]) for rel in walk(root) for row in rows_for(read_document(root, rel))}


def table_rows(db: Path, table: str = "documents") -> set[tuple[str, str]]:
    import lancedb

    tbl = lancedb.connect(str(db), read_consistency_interval=dt.timedelta(0)).open_table(table)
    data = tbl.search().select(["id", "text"]).limit(None).to_arrow()
    return set(zip(data.column("id").to_pylist(), data.column("text").to_pylist(), strict=True))


# -- 1. a watcher and a server, every kind of change ---------------------------------------------


@pytest.mark.anyio
async def test_watch_keeps_a_running_stdio_server_fresh_through_every_kind_of_change(
    docs: Path, tmp_path: Path
) -> None:
    """Create, modify, rename, delete a file; rename a folder, move one in and out; an editor's
    atomic save; dot-named writes that must stay out. After each, `lancedb_search` on a running
    `lancelot serve` shows the change within STEP_TIMEOUT, and no call ever fails meanwhile (a
    second task searches an untouched file all along and must always find it). SIGTERM ends it."""
    db = tmp_path / "db"
    config = tmp_path / "config"
    config.mkdir()
    for name in ("point-of-sale.md", "repairs.md", "stock-counts.md"):
        with (docs / "guides" / name).open("a") as handle:
            handle.write("\n\nThis guide is part of the guidebookword series.\n")
    outside = tmp_path / "outside" / "imported"
    outside.mkdir(parents=True)
    (outside / "a.md").write_text("# Imported A\n\nThe importedword arrives from another folder.\n")
    (outside / "b.txt").write_text("Plain text with importedword too.\n")

    watcher = Watcher(docs, db, config)
    searches: list[tuple[str, bool]] = []  # (query, is_error) of every call
    problems: list[str] = []
    try:
        watcher.wait_ready(docs)
        async with Client(_stdio_params(db, config)) as client:

            async def search(query: str) -> dict[str, Any]:
                result = await client.call_tool("lancedb_search", {"query": query, "limit": 50})
                searches.append((query, bool(result.is_error)))
                if result.is_error:
                    problems.append(f"{query!r}: {_text(result)}")
                    return {"hits": [], "count": 0}
                return result.structured_content

            async def until(query: str, ok: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
                deadline = time.monotonic() + STEP_TIMEOUT
                while True:
                    reply = await search(query)
                    if ok(reply):
                        return reply
                    if time.monotonic() > deadline:
                        pytest.fail(
                            f"{what}: not searchable after {STEP_TIMEOUT} s (last sources "
                            f"{sorted(_sources(reply))}); watcher stderr:\n{watcher.stderr}"
                        )
                    await anyio.sleep(0.05)

            done = anyio.Event()

            async def steady() -> None:
                """An untouched file must be found by every search while batches come and go."""
                n = 0
                while not done.is_set():
                    reply = await search("warranty")
                    if "policies/warranty.md" not in _sources(reply):
                        problems.append(f"untouched policies/warranty.md missing from a search: {reply}")
                    n += 1
                    if n % 10 == 0:
                        status = await client.call_tool("lancedb_status", {})
                        if status.is_error:
                            problems.append(f"lancedb_status: {_text(status)}")
                    await anyio.sleep(0.02)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(steady)
                try:
                    # A new file in a new folder.
                    (docs / "notes").mkdir()
                    (docs / "notes" / "ideas.md").write_text("# Ideas\n\nA quokkaberry orchard by the sea.\n")
                    await until("quokkaberry", lambda r: _sources(r) == {"notes/ideas.md"}, "created file")
                    # Modified: the new word is found, the old one is gone.
                    (docs / "notes" / "ideas.md").write_text("# Ideas\n\nA zebrafinchlet aviary instead.\n")
                    await until("zebrafinchlet", lambda r: _sources(r) == {"notes/ideas.md"}, "modified file")
                    await until("quokkaberry", lambda r: r["count"] == 0, "old words of the modified file")
                    # Renamed file: only the new path.
                    os.rename(docs / "notes" / "ideas.md", docs / "notes" / "plans.md")
                    await until("zebrafinchlet", lambda r: _sources(r) == {"notes/plans.md"}, "renamed file")
                    # Deleted.
                    (docs / "notes" / "plans.md").unlink()
                    await until("zebrafinchlet", lambda r: r["count"] == 0, "deleted file")
                    # A renamed folder: every file under it moves.
                    guides = {"point-of-sale.md", "repairs.md", "stock-counts.md"}
                    assert _sources(await search("guidebookword")) == {f"guides/{n}" for n in guides}
                    os.rename(docs / "guides", docs / "manuals")
                    await until(
                        "guidebookword", lambda r: _sources(r) == {f"manuals/{n}" for n in guides}, "renamed folder"
                    )
                    # A folder moved in from outside SRC, then one moved out.
                    os.rename(outside, docs / "imported")
                    await until(
                        "importedword", lambda r: _sources(r) == {"imported/a.md", "imported/b.txt"}, "folder moved in"
                    )
                    os.rename(docs / "manuals", tmp_path / "outside" / "manuals")
                    await until("guidebookword", lambda r: r["count"] == 0, "folder moved out")
                    # Dot-named folder and file: never indexed.
                    (docs / ".drafts").mkdir(exist_ok=True)
                    (docs / ".drafts" / "freshness-secret.md").write_text("# Secret\n\nThe dotfolderword stays out.\n")
                    (docs / "policies" / ".note.md").write_text("# Note\n\nThe dotfolderword stays out.\n")
                    # An editor's atomic save: write a hidden temporary file, then rename it over the original.
                    refunds = docs / "policies" / "refunds.md"
                    temporary = docs / "policies" / ".refunds.md.tmp"
                    temporary.write_text(refunds.read_text() + "\n\nThe atomicsaveword clause applies.\n")
                    os.replace(temporary, refunds)
                    await until("atomicsaveword", lambda r: _sources(r) == {"policies/refunds.md"}, "atomic save")
                    assert (await search("dotfolderword"))["count"] == 0
                    assert "policies/refunds.md" in _sources(await search("refund"))
                finally:
                    done.set()
        # After all that, the table holds exactly the folder's content.
        assert table_rows(db) == folder_rows(docs)
        code = watcher.stop(signal.SIGTERM)
    finally:
        watcher.close()
    assert problems == [], problems[:5]
    assert len(searches) > 20 and not any(is_error for _, is_error in searches)
    assert code == 0, f"watcher did not exit 0 on SIGTERM (got {code}):\n{watcher.stderr}"
    assert "Stopped watching" in watcher.stderr
    assert "warning" not in watcher.stderr.lower() and "Traceback" not in watcher.stderr
    assert len(watcher.batches()) >= 1 + 8, watcher.stderr  # the sentinel's, then one per change


# -- 5. status follows the batches; Ctrl-C stops the watcher -------------------------------------


def test_status_after_each_watch_batch(docs: Path, tmp_path: Path) -> None:
    """After every batch `status` shows the new row count, a later updatedAt, and full-text indexes
    that cover every row, counting the rows left for the next optimize() (searched by a scan; see
    storage.policy.OptimizePolicy and tests/test_deferred_optimize.py)."""
    db = tmp_path / "db"
    watcher = Watcher(docs, db, tmp_path)
    try:
        watcher.wait_ready(docs)
        engine = wired(engine_for(db, keyless=True))

        def table_status() -> dict[str, Any]:
            (table,) = engine.status()["tables"]
            return table

        before = table_status()
        assert before["fullTextCoverage"]["unindexed"] == 0
        long_text = "\n\n".join(f"Paragraph {n}. " + "statusword " * 150 for n in range(4))
        changes: list[Callable[[], None]] = [
            lambda: (docs / "added.md").write_text("# Added\n\n" + long_text),
            lambda: (docs / "added.md").write_text("# Added\n\nNow short.\n"),
            lambda: (docs / "policies" / "shipping.md").unlink(),
            lambda: (docs / "faq.txt").write_text((docs / "faq.txt").read_text() + "\n\n" + long_text),
        ]
        for change in changes:
            seen = len(watcher.batches())
            change()
            expected = len(folder_rows(docs))
            watcher.wait_for(
                lambda _lines, seen=seen, expected=expected: (
                    len(watcher.batches()) > seen
                    and watcher.batches()[-1].split(" chunks, ")[1].startswith(f"{expected} in table")
                ),
                STEP_TIMEOUT,
                f"batch leaving {expected} rows",
            )
            after = table_status()
            assert after["rows"] == expected != before["rows"]
            assert after["updatedAt"] > before["updatedAt"]
            assert after["version"] > before["version"]
            coverage = after["fullTextCoverage"]
            assert coverage["unindexed"] < max(
                OPTIMIZE_POLICY.unindexed_rows, OPTIMIZE_POLICY.unindexed_share * expected
            )
            assert coverage["indexed"] + coverage["unindexed"] >= expected, after
            before = after
        code = watcher.stop(signal.SIGTERM)
    finally:
        watcher.close()
    assert code == 0 and "Stopped watching" in watcher.stderr


def test_ctrl_c_stops_an_idle_watcher(docs: Path, tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) while the watcher waits for changes: exit 0 and "Stopped watching"."""
    db = tmp_path / "db"
    watcher = Watcher(docs, db, tmp_path)
    try:
        watcher.wait_ready(docs)  # a batch has run; idle now, back in the file-event wait
        code = watcher.stop(signal.SIGINT)
    finally:
        watcher.close()
    assert code == 0, f"watcher still running {STOP_TIMEOUT} s after SIGINT (exit {code}):\n{watcher.stderr}"
    assert "Stopped watching" in watcher.stderr


def test_a_file_created_during_the_watchers_first_pass_is_indexed(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file saved while the watcher's first pass runs (after that pass looked at the folder) must
    still reach the table: the watcher has to be subscribed to file events before the pass looks.
    (In-process, so the moment is exact: the file is written as the first pass returns.)"""
    import lancelot_cli.indexer.watch as watch

    db = tmp_path / "db"
    index_folder(docs, str(db))
    real = watch.index_job
    passes: list[Any] = []

    def first_pass_then_a_save(*args: Any, **kwargs: Any) -> Any:
        report = real(*args, **kwargs)
        if not passes:
            (docs / "late.md").write_text("# Late\n\nA latecomerword saved during the first pass.\n")
        passes.append(report)
        return report

    monkeypatch.setattr(watch, "index_job", first_pass_then_a_save)
    stop = threading.Event()
    errors: list[str] = []
    thread = threading.Thread(
        target=watch.watch_folder,
        args=(docs, str(db)),
        daemon=True,
        kwargs={"on_batch": lambda _report: None, "on_error": errors.append, "stop": stop},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and not any(key.startswith("late.md#") for key, _ in table_rows(db)):
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=15)
    assert not thread.is_alive()
    assert errors == []
    assert table_rows(db) == folder_rows(docs), (
        f"late.md, saved during the watcher's first pass, was never indexed ({len(passes)} pass(es) ran)"
    )


# -- 2. SIGKILL at any moment --------------------------------------------------------------------

CRASH_FILES = 400
_WORDS = (
    "harbor ledger copper lantern meadow orbit pencil quarry saddle timber velvet walnut basket candle "
    "dragon ember falcon glacier hollow island jasmine kettle river stone market signal garden bridge "
    "cabinet desert engine forest granite helmet jacket kitchen ladder mirror needle orange pepper "
    "rabbit silver tunnel valley window yellow anchor butter cotton donkey feather hammer insect"
).split()


def _crash_doc(i: int, version: int) -> str:
    """File ``i`` at ``version``: two paragraphs (three on odd versions) of about 900 characters, so
    one chunk each; every chunk carries the version's and the file's marker words."""
    rng = random.Random(i * 7919 + version)
    paragraphs = []
    for _ in range(2 + version % 2):
        words = [f"vermark{version}", f"filemark{i}"]
        while sum(len(w) + 1 for w in words) < 900:
            words.append(rng.choice(_WORDS))
        paragraphs.append(" ".join(words))
    return f"# Note {i}\n\n" + "\n\n".join(paragraphs) + "\n"


def _crash_path(i: int) -> str:
    return f"part{i % 10}/note-{i:03d}.md"


def _write_version(root: Path, version: int) -> None:
    for i in range(CRASH_FILES):
        path = root / _crash_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_crash_doc(i, version))


def _count(folder: Path) -> int:
    try:
        return len(os.listdir(folder))
    except FileNotFoundError:
        return 0


def _check_table(reader: Any, old: int, new: int) -> tuple[str, list[str]]:
    """Open the table the way the server does and check every file's rows: all at version ``old``
    or all at ``new`` (ids, chunk count, markers), and the whole table at one of the two. Returns
    the table's version ("old"/"new"/"mixed") and the inconsistencies found."""
    table = reader.table("documents")
    rows = table.rows(["id", "path", "text"])
    problems = []
    by_path: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_path.setdefault(row["path"], []).append(row)
    if set(by_path) != {_crash_path(i) for i in range(CRASH_FILES)}:
        problems.append(f"table holds {len(by_path)} files, not the {CRASH_FILES} of the folder")
    states = set()
    for i in range(CRASH_FILES):
        path = _crash_path(i)
        found = by_path.get(path, [])
        versions = {int(m) for row in found for m in re.findall(r"\bvermark(\d+)\b", row["text"])}
        marks = {m for row in found for m in re.findall(r"\bfilemark(\d+)\b", row["text"])}
        ids = sorted(row["id"] for row in found)
        state = None
        for name, version in (("old", old), ("new", new)):
            if versions == {version} and ids == [f"{path}#{n}" for n in range(2 + version % 2)]:
                state = name
        if state is None or marks != {str(i)} or any(len(re.findall(r"\bvermark\d+\b", r["text"])) != 1 for r in found):
            problems.append(f"{path}: versions {sorted(versions)} ids {ids} (old {old}, new {new})")
        else:
            states.add(state)
    whole = states.pop() if len(states) == 1 else "mixed"
    if whole == "mixed":
        problems.append(f"the table mixes files at version {old} and {new}")
    # Full-text search works and agrees with the rows.
    current = old if whole != "new" else new
    fts = table.fts(f"vermark{current}", "text", 5000, ["id"])
    if len(fts) != len(rows):
        problems.append(f"FTS finds {len(fts)} rows for vermark{current}, the table has {len(rows)}")
    probe = random.Random(old * 1000 + new).randrange(CRASH_FILES)
    hits = {hit["id"] for hit in table.fts(f"filemark{probe}", "text", 50, ["id"])}
    if hits != {row["id"] for row in by_path.get(_crash_path(probe), [])}:
        problems.append(f"FTS for filemark{probe} finds {sorted(hits)}")
    return whole, problems


def test_sigkill_at_any_moment_leaves_old_or_new_rows_and_a_rerun_converges(tmp_path: Path) -> None:
    """Every file changes (so the run rewrites all rows) and `lancelot index` is SIGKILLed: early
    (imports), right after it starts writing data files (before the commit), and right after the
    commit (during the full-text index update). After each kill a reader that stayed open opens the
    table, FTS works, and every file's rows are all old or all new; a normal run then converges."""
    from lancelot_cli.storage.read.database import ReadOnlyDatabase

    src, db = tmp_path / "src", tmp_path / "db"
    _write_version(src, 0)
    index_folder(src, str(db))
    reader = ReadOnlyDatabase(str(db))  # like a server: one connection across every kill
    lance = db / "documents.lance"
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path), COLUMNS="400")
    command = [*lancelot_command(), "index", str(src), str(db)]
    # (trigger, delay after it): "start" = the process start; "data" = the first new data file of
    # this run (the merge is writing, nothing committed); "commit" = the first new manifest.
    # The last kills come before the commit, so the final run has work to do.
    plan = [
        ("start", 0.05),
        ("start", 0.4),
        ("start", 0.9),
        ("commit", 0.0),
        ("commit", 0.01),
        ("commit", 0.025),
        ("commit", 0.05),
        ("commit", 0.1),
        ("data", 0.01),
        ("data", 0.005),
        ("data", 0.002),
        ("data", 0.0),
    ]
    committed = 0  # version of the folder that the table holds
    log: list[dict[str, Any]] = []
    inconsistencies: list[str] = []
    for version, (trigger, delay) in enumerate(plan, start=1):
        _write_version(src, version)
        data_files, manifests = _count(lance / "data"), _count(lance / "_versions")
        started = time.monotonic()
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        watched = {"data": (lance / "data", data_files), "commit": (lance / "_versions", manifests)}.get(trigger)
        while watched and proc.poll() is None and _count(watched[0]) <= watched[1]:
            time.sleep(0.0005)
        time.sleep(delay)
        killed_at = time.monotonic() - started
        proc.kill()
        _, err = proc.communicate(timeout=30)
        landed = proc.returncode == -signal.SIGKILL
        assert landed or proc.returncode == 0, err.decode()
        state, problems = _check_table(reader, committed, version)
        inconsistencies += problems
        uncommitted = _count(lance / "data") > data_files and state == "old"
        log.append(
            {
                "trigger": trigger,
                "delay": delay,
                "killedAt": round(killed_at, 3),
                "landed": landed,
                "table": state,
                "dataWrittenUncommitted": uncommitted,
                "ftsUnindexed": reader.table("documents").fts_coverage()["unindexed"],
            }
        )
        if state == "new":
            committed = version
    # A normal run converges on exactly the folder's content, and the next one has nothing to do.
    done = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    assert table_rows(db) == folder_rows(src)
    again = index_folder(src, str(db))
    assert (again.read, again.committed) == (0, False)

    tried = sum(entry["landed"] for entry in log)
    summary = {
        "killsTried": len(log),
        "killsLanded": tried,
        "inconsistencies": len(inconsistencies),
        "tableOld": sum(e["table"] == "old" for e in log),
        "tableNew": sum(e["table"] == "new" for e in log),
        "killedMidWrite": sum(e["dataWrittenUncommitted"] for e in log),
        "killedAt": [e["killedAt"] for e in log],
        "finalRun": {k: final[k] for k in ("read", "added", "updated", "deleted")},
    }
    print(f"\ncrash safety: {json.dumps(summary)}")
    for entry in log:
        print(f"  {entry}")
    assert inconsistencies == [], inconsistencies[:10]
    assert tried >= len(plan) // 2, log  # most kills must hit a live process
    assert summary["tableOld"] >= 1 and summary["tableNew"] >= 1, log  # both sides of the commit were hit


CRASH_BEFORE_INDEX_UPDATE = """
import os, signal, sys
from lancedb.table import LanceTable

def crash(self, *args, **kwargs):  # the merge is committed; die before the full-text index takes the rows in
    os.kill(os.getpid(), signal.SIGKILL)

LanceTable.optimize = crash
from lancelot_cli.indexer import index_folder
index_folder(sys.argv[1], sys.argv[2])
"""


def test_a_run_killed_between_commit_and_index_update_is_repaired_by_the_next_run(docs: Path, tmp_path: Path) -> None:
    """SIGKILL right after the merge commit, before `optimize()`: the table holds the new rows and
    search finds them (unindexed rows are searched too), and the next normal run, although no file
    changed, folds them into the full-text index (they are past OptimizePolicy's share) so that
    status shows `unindexed == 0` again."""
    db = tmp_path / "db"
    index_folder(docs, str(db))
    changed = [path for path in walk(docs) if not path.endswith(".html")]  # most rows rewritten outside the index
    for path in changed:
        with (docs / path).open("a") as handle:
            handle.write("\n\nAppended paragraph with crashindexword.\n")
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH_BEFORE_INDEX_UPDATE, str(docs), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    engine = wired(engine_for(db, keyless=True))
    assert table_rows(db) == folder_rows(docs)
    assert {hit["source"] for hit in engine.search("crashindexword", limit=50)["hits"]} == set(changed)
    (table,) = engine.status()["tables"]
    assert table["fullTextCoverage"]["unindexed"] > 0  # the state a crash at that moment leaves

    rerun = _index(docs, db, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    (table,) = engine.status()["tables"]
    assert table["fullTextCoverage"]["unindexed"] == 0, (
        f"a re-run after a crash before the index update left {table['fullTextCoverage']} "
        f"(it found no changed file, so it never ran optimize())"
    )
    assert {hit["source"] for hit in engine.search("crashindexword", limit=50)["hits"]} == set(changed)


# -- 3. what a re-run reads and writes -----------------------------------------------------------


def _rows_by_id(db: Path) -> dict[str, dict[str, Any]]:
    import lancedb

    tbl = lancedb.connect(str(db), read_consistency_interval=dt.timedelta(0)).open_table("documents")
    return {row["id"]: row for row in tbl.search().with_row_id(True).limit(None).to_list()}


def _table_version(db: Path) -> int:
    import lancedb

    return int(lancedb.connect(str(db), read_consistency_interval=dt.timedelta(0)).open_table("documents").version)


def test_rerun_reads_and_rewrites_only_what_changed(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = index_folder(docs, str(db))
    assert first.committed and first.read == first.files == len(walk(docs))

    # Nothing changed: nothing read, nothing committed, same table version.
    version = _table_version(db)
    same = index_folder(docs, str(db))
    assert (same.read, same.committed, same.added, same.updated, same.deleted) == (0, False, 0, 0, 0)
    assert same.version == version == _table_version(db)

    # One file changed: it alone is read, and only its rows are rewritten.
    before = _rows_by_id(db)
    changed = docs / "policies" / "refunds.md"
    changed.write_text(changed.read_text() + "\n\nA new paragraph about onechangeword.\n")
    one = index_folder(docs, str(db))
    assert (one.read, one.committed) == (1, True)
    after = _rows_by_id(db)
    mine = {key for key in after if key.startswith("policies/refunds.md#")}
    assert mine and set(after) - mine == set(before) - {k for k in before if k.startswith("policies/refunds.md#")}
    for key in set(after) - mine:
        assert after[key] == before[key], f"row {key} changed although its file did not"  # _rowid included
    assert any("onechangeword" in after[key]["text"] for key in mine)
    assert all(after[key]["file_mtime"] == changed.stat().st_mtime_ns for key in mine)
    assert index_folder(docs, str(db)).read == 0

    # Touched (mtime only): read once, file state recorded, text rows the same; then never again.
    touched = docs / "faq.txt"
    stamp = touched.stat()
    os.utime(touched, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 5_000_000_000))
    texts = {k: (r["text"], r["hash"]) for k, r in _rows_by_id(db).items()}
    once = index_folder(docs, str(db))
    assert once.read == 1 and (once.added, once.updated, once.deleted) == (0, 0, 0)
    assert {k: (r["text"], r["hash"]) for k, r in _rows_by_id(db).items()} == texts
    assert all(
        r["file_mtime"] == touched.stat().st_mtime_ns for k, r in _rows_by_id(db).items() if r["path"] == "faq.txt"
    )
    version = _table_version(db)
    twice = index_folder(docs, str(db))
    assert (twice.read, twice.committed, twice.version) == (0, False, version)
    assert table_rows(db) == folder_rows(docs)


# -- 4. two indexers at once ---------------------------------------------------------------------

HOLD_LOCK = """
import sys
from lancelot_cli.storage.write.lock import writer_lock
with writer_lock(sys.argv[1], "documents"):
    print("locked", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


@contextlib.contextmanager
def lock_held(db: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the table's writer lock (``HOLD_LOCK``) for the block; it ends when
    its stdin is closed (``communicate``) or it is killed, and is killed after the block if still there."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)


def _index(docs: Path, db: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*lancelot_command(), "index", str(docs), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path), COLUMNS="400"),
    )


@pytest.mark.parametrize("release", ["finish", "sigkill"])
def test_second_indexer_refuses_while_the_first_holds_the_lock(docs: Path, tmp_path: Path, release: str) -> None:
    """Another process holds the table's writer lock: `lancelot index` exits 1 with one line naming
    it; once the holder finishes (or is SIGKILLed: the kernel drops the lock) the run succeeds."""
    db = tmp_path / "db"
    with lock_held(db) as holder:
        refused = _index(docs, db, tmp_path)
        assert refused.returncode == 1, refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, refused.stderr
        assert lines[0].startswith("lancelot: error: another `lancelot index` (pid ")
        assert f"(pid {holder.pid})" in lines[0] and "'documents'" in lines[0]
        assert not (db / "documents.lance").exists()  # it wrote nothing
        if release == "finish":
            holder.communicate("", timeout=30)
            assert holder.returncode == 0
        else:
            holder.kill()
            holder.wait(timeout=30)
    done = _index(docs, db, tmp_path)
    assert done.returncode == 0, done.stderr
    assert table_rows(db) == folder_rows(docs)
