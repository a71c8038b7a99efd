"""The writer lock (issue 16 #4, #9) and a table's first build (issue 16 #8), with real processes
and a real LanceDB database in a tmp folder."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lancelot_cli.errors import DatabaseNotFoundError, TableNotFoundError
from tests.conftest import lancelot_command, subprocess_env

HOLD = """
import fcntl, os, sys, time
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
if sys.argv[2] == "pid":
    handle.seek(0); handle.truncate(); handle.write(str(os.getpid())); handle.flush()
print("held", flush=True)
time.sleep(60)
"""


def _hold_lock(db: Path, write_pid: bool) -> subprocess.Popen[str]:
    db.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db / ".lancelot-index-documents.lock"), "pid" if write_pid else "-"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout and holder.stdout.readline().strip() == "held"
    return holder


def _index(docs: Path, db: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*lancelot_command(), "index", str(docs), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(config), COLUMNS="300"),
    )


@pytest.mark.slow
@pytest.mark.parametrize("write_pid", [True, False])
def test_a_held_lock_gives_one_sentence_naming_the_holder_when_known(
    docs: Path, tmp_path: Path, write_pid: bool
) -> None:
    db = tmp_path / "db"
    holder = _hold_lock(db, write_pid)
    try:
        done = _index(docs, db, tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "another process)" not in lines[0] and "(pid another" not in lines[0], lines[0]
    assert "wait for it to finish" in lines[0]
    if write_pid:
        assert f"pid {holder.pid}" in lines[0], lines[0]
    else:
        assert "pid" not in lines[0], lines[0]
    # The holder is gone: its lock went with it, and the stale pid in the file blocks nothing.
    again = _index(docs, db, tmp_path)
    assert again.returncode == 0, again.stderr


@pytest.mark.slow
def test_the_lock_is_not_inherited_by_child_processes(docs: Path, tmp_path: Path) -> None:
    """A child started while the lock is held (a worker, git) must not keep it after the parent ends."""
    db = tmp_path / "db"
    script = (
        "import subprocess, sys\n"
        "from lancelot_cli.storage.write.lock import writer_lock\n"
        "with writer_lock(sys.argv[1], 'documents'):\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], close_fds=False,\n"
        "                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "    print(child.pid, flush=True)\n"
    )
    parent = subprocess.run(
        [sys.executable, "-c", script, str(db)], capture_output=True, text=True, timeout=60, env=subprocess_env()
    )
    assert parent.returncode == 0, parent.stderr
    child = int(parent.stdout.split()[0])
    try:
        done = _index(docs, db, tmp_path)
        assert done.returncode == 0, done.stderr
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, 9)


def _pages(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    for i in range(count):
        body = "\n\n".join(f"Paragraph {p} of note {i} mentions zebrafish and telemetry." for p in range(30))
        (root / f"note{i:04d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")


@pytest.mark.slow
def test_a_first_build_is_invisible_until_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader polling through the engine while `lancelot index` builds a new table sees either
    no table or every document, never an empty or partial table."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    src, db = tmp_path / "src", tmp_path / "db"
    _pages(src, 400)
    db.mkdir()
    monkeypatch.setenv("LANCEDB_PATH", str(db))
    seen: list[tuple[str, int]] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            engine = Engine(load())  # a fresh reader each time, like a new client
            try:
                reply = engine.search("zebrafish", limit=5)
            except (TableNotFoundError, DatabaseNotFoundError):
                seen.append(("absent", 0))
                continue
            except Exception as exc:  # noqa: BLE001 - reported by the assertions below
                seen.append((f"error: {type(exc).__name__}: {exc}", 0))
                continue
            seen.append(("hits", len(reply.hits if hasattr(reply, "hits") else reply["hits"])))

    reader = threading.Thread(target=poll, daemon=True)
    reader.start()
    try:
        done = _index(src, db, tmp_path)
        after = len(seen)
        deadline = time.monotonic() + 30
        while len(seen) < after + 3 and reader.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)  # until the reader has read the finished table a few times
    finally:
        stop.set()
        reader.join(30)
    assert done.returncode == 0, done.stderr
    counts = [n for kind, n in seen if kind == "hits"]
    print(
        f"\nreads: {len(seen)}; before the table existed: {sum(k == 'absent' for k, _ in seen)}; "
        f"hit counts: {sorted(set(counts))}"
    )
    assert not [kind for kind, _ in seen if kind.startswith("error")], [k for k, _ in seen if k != "absent"][:5]
    assert counts and all(n == 5 for n in counts), sorted(set(counts))
    assert len(seen) >= after + 3 and seen[-1] == ("hits", 5), seen[-5:]  # and it read the finished table
    assert sum(kind == "absent" for kind, _ in seen) >= 3, seen[:5]  # the reader did poll during the build
