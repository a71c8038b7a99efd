"""A full disk or a read-only database folder (storage/disk.py): one line that says so and what to do,
exit 1, nothing left behind by a first run, the old table still searchable. The real cases run on
small tmpfs mounts (root with mount rights, as in CI's container); elsewhere they skip."""

from __future__ import annotations

import errno
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import pytest

from lancelot_cli.storage import damage, disk
from lancelot_cli.storage.write import guard as write_guard
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "the disk is full; free some space"),
        (
            RuntimeError("lance error: Unable to copy data to file: No space left on device (os error 28)"),
            "the disk is full",
        ),
        (OSError(errno.EROFS, "Read-only file system"), "the file system is read-only"),
        (PermissionError(errno.EACCES, "Permission denied"), "writing there is not allowed"),
    ],
)
def test_the_reason_is_read_from_the_errno_or_lances_text(exc: BaseException, said: str) -> None:
    line = disk.problem(exc, "/data/db")
    assert line is not None and line.startswith("cannot write the database in /data/db: ") and said in line
    assert "(the table was not changed)" in line


def test_a_step_after_the_commit_says_the_documents_are_in() -> None:
    """A run whose commit stood and whose compaction then found the disk full said "the table was
    not changed" (issue 37 item 7): the documents were in and searchable."""
    line = disk.problem(OSError(errno.ENOSPC, "No space left on device"), "/db", committed=True)
    assert line is not None and "the documents are written and searchable" in line and "not changed" not in line
    assert disk.is_full(RuntimeError("lance error: No space left on device (os error 28)"))
    assert not disk.is_full(OSError(errno.EROFS, "Read-only file system"))


def test_other_errors_are_not_taken_for_disk_problems() -> None:
    assert disk.problem(OSError(errno.ENOENT, "No such file"), "/db") is None
    assert disk.problem(RuntimeError("lance error: Not found: x.lance"), "/db") is None


def _mount(where: Path, *options: str) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)], capture_output=True, check=False
    )
    return done.returncode == 0


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Path]:
    made: list[Path] = []
    if not shutil.which("mount") or not _mount(tmp_path / "probe", "size=64k"):
        pytest.skip("cannot mount a tmpfs here (needs root with mount rights)")
    made.append(tmp_path / "probe")
    yield tmp_path
    for where in [*made, *(p for p in tmp_path.iterdir() if p.is_dir() and p.is_mount())]:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def _fill(filler: Path) -> Path:
    """Write ``filler`` until its disk is full."""
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def _index(docs: Path, db: Path, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "config"), **extra)
    return subprocess.run(
        [*lancelot_command(), "index", str(docs), str(db), "--no-embed"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_a_first_run_on_a_full_disk_says_so_and_leaves_no_folder(mounts: Path) -> None:
    assert _mount(mounts / "full", "size=40k")
    run = _index(SAMPLE_DOCS, mounts / "full" / "db", mounts)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "the disk is full; free some space, then run again" in run.stderr
    assert list((mounts / "full").iterdir()) == []


@pytest.mark.slow
def test_a_read_only_folder_says_so(mounts: Path) -> None:
    assert _mount(mounts / "ro", "size=64k", "ro")
    run = _index(SAMPLE_DOCS, mounts / "ro" / "db", mounts)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "the file system is read-only" in run.stderr and "unexpected" not in run.stderr


@pytest.mark.slow
def test_a_disk_that_fills_up_keeps_the_old_table(mounts: Path, tmp_path: Path) -> None:
    assert _mount(mounts / "small", "size=2m")
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    db = mounts / "small" / "db"
    assert _index(docs, db, mounts).returncode == 0
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(mounts / "config"))
    search = [*lancelot_command(), "search", "refund policy", "--json", "--db", str(db)]
    before = subprocess.run(search, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    for n in range(20):  # 20 files of 200 KB: more than the disk has left, each under --max-file-size
        (docs / f"big{n}.md").write_text(f"# Big {n}\n\n" + f"lorem ipsum {n} dolor sit amet " * 7000, encoding="utf-8")
    filler = _fill(mounts / "small" / "filler")  # the rest of the disk
    run = _index(docs, db, mounts)
    assert run.returncode == 1 and "the disk is full" in run.stderr, run.stderr
    filler.unlink()
    after = subprocess.run(search, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert after == before


@pytest.mark.slow
def test_a_full_disk_gives_up_what_failed_writes_left_and_tries_again(mounts: Path, tmp_path: Path) -> None:
    """Issue 37 item 7: the files of a write that failed on a full disk stay (LanceDB deletes a
    failed transaction's files after 7 days), as do old versions, so every later run found the disk
    full, even after documents were removed. Now a run that finds the disk full gives them up (it
    holds the writer lock: no transaction of another writer is in flight) and tries once more. A
    failed write's leftovers are made here as LanceDB leaves them: a data file no version refers to."""
    assert _mount(mounts / "small", "size=3m")
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    db = mounts / "small" / "db"
    assert _index(docs, db, mounts).returncode == 0
    data = db / "documents.lance" / "data"
    data_file = next(data.glob("*.lance"))
    (data / ("0" * 24 + "leftover-of-a-failed-write.lance")).write_bytes(b"\0" * (1024 * 1024))
    _fill(mounts / "small" / "filler")  # the rest of the disk, as the failed write left it
    (docs / "late.md").write_text("# Late note\n\nThe warehouse opens at seven on Saturdays.\n", encoding="utf-8")
    run = _index(docs, db, mounts)
    assert run.returncode == 0, run.stderr
    assert data_file.exists() and not (data / ("0" * 24 + "leftover-of-a-failed-write.lance")).exists()
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(mounts / "config"))
    search = [*lancelot_command(), "search", "warehouse Saturdays", "--json", "--db", str(db)]
    found = subprocess.run(search, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert "late.md" in found


def _write_docs(docs: Path, files: int, edition: int) -> None:
    """``files`` Markdown files of ~25 KB (~20 chunks each) whose words all change with ``edition``."""
    docs.mkdir(exist_ok=True)
    for n in range(files):
        pick = random.Random(f"{n}-{edition}")
        words = " ".join(
            f"{pick.choice(['cargo', 'ledger', 'harbour', 'invoice'])}{pick.randint(0, 999)}" for _ in range(3000)
        )
        (docs / f"doc{n}.md").write_text(f"# Doc {n}\n\nedition{edition} {words}\n", encoding="utf-8")


def _table(db: Path) -> Any:
    return lancedb.connect(str(db)).open_table("documents")


def _files(db: Path, folder: str) -> int:
    return len(list((db / "documents.lance" / folder).iterdir()))


@pytest.mark.slow
def test_after_a_full_disk_old_versions_go_and_the_next_run_succeeds(mounts: Path, tmp_path: Path) -> None:
    """Issue 46 item 4: re-indexes filled a tmpfs with old versions. The step that found the disk
    full was retried after ``optimize(cleanup_older_than=0)``, which compacts (writes) before it
    prunes: on the full disk it failed too, the versions and index folders stayed, and every later
    run failed the same way, one with unchanged text too. Now the files the latest version does not
    use go first (nothing is written), then the rest of the old versions, and the step runs again."""
    assert _mount(mounts / "small", "size=6m")
    docs, db = tmp_path / "docs", mounts / "small" / "db"
    for edition in range(3):  # a table, then two re-indexes that change every file: old versions pile up
        _write_docs(docs, 10, edition)
        assert _index(docs, db, mounts).returncode == 0
    for n in range(6, 10):  # 40 % of the rows deleted and nothing to fold: no optimize(), so a
        (docs / f"doc{n}.md").unlink()  # later optimize() has a fragment to compact (to write) first
    assert _index(docs, db, mounts).returncode == 0
    versions, folders = [int(v["version"]) for v in _table(db).list_versions()], _files(db, "_indices")
    _fill(mounts / "small" / "filler")  # the rest of the disk
    _write_docs(docs, 6, 3)
    run = _index(docs, db, mounts)
    assert run.returncode == 0 or "the disk is full" in run.stderr, run.stderr
    again = _index(docs, db, mounts)  # the same text: before, it failed the same way
    assert again.returncode == 0, again.stderr
    left = [int(v["version"]) for v in _table(db).list_versions()]
    assert min(left) >= max(versions), (versions, left)  # every version before the full disk is gone
    assert _files(db, "_indices") < folders, (folders, _files(db, "_indices"))
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(mounts / "config"))
    search = [*lancelot_command(), "search", "edition3", "--json", "--db", str(db), "--limit", "50"]
    found = subprocess.run(search, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert "doc0.md" in found and "doc9.md" not in found


@pytest.mark.slow
def test_ordinary_runs_keep_old_versions_only_for_the_set_time(tmp_path: Path) -> None:
    """Issue 46 item 4: 17 quick re-indexes of a 3 MB source kept 37 versions (107 MB) for 7 days.
    Each run whose optimize() runs now gives up the versions older than LANCELOT_KEEP_VERSIONS_FOR
    (10 minutes by default: quick runs keep theirs, for a reader still on one)."""
    docs, db = tmp_path / "docs", tmp_path / "db"
    for edition in range(3):
        _write_docs(docs, 4, edition)
        assert _index(docs, db, tmp_path).returncode == 0
    kept = len(_table(db).list_versions())
    assert kept > 3 and _files(db, "_indices") > 8  # all younger than 10 minutes
    _write_docs(docs, 4, 3)
    assert _index(docs, db, tmp_path, LANCELOT_KEEP_VERSIONS_FOR="0").returncode == 0
    assert len(_table(db).list_versions()) == 1
    assert (_files(db, "_indices"), _files(db, "data")) == (4, 1)  # one full-text index of each kind, one fragment


def test_only_files_the_latest_version_does_not_use_are_given_up(tmp_path: Path) -> None:
    """What the full-disk path removes before anything is written (write_guard.unused): the old
    versions' data files and index folders, and a failed write's leftovers; never a file of the
    latest version (the table reads whole and searches after), nothing when a tag keeps a version."""
    from lancelot_cli.storage.write.table import TableWriter

    db = tmp_path / "db"
    for edition in range(3):
        rows = [
            {
                "id": f"doc{n}.md#0",
                "path": f"doc{n}.md",
                "title": f"Doc {n}",
                "chunk": 0,
                "text": f"harbour{edition} ledger{n}",
                "hash": f"{edition}-{n}",
            }
            for n in range(30)
        ]
        TableWriter(str(db), "documents").write(rows)
    root = db / "documents.lance"
    leftover = root / "data" / ("0" * 24 + "leftover-of-a-failed-write.lance")
    leftover.write_bytes(b"\0" * 1024)
    tbl = _table(db)
    tbl.tags.create("kept", 1)
    assert write_guard.unused(tbl, root) == []  # version 1 must keep its files
    tbl.tags.delete("kept")
    gone = write_guard.unused(tbl, root)
    assert leftover in gone and any(p.parent.name == "_indices" for p in gone)
    for path in gone:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    fresh = _table(db)
    assert fresh.to_arrow().num_rows == fresh.count_rows() == 30
    damage.check("documents", fresh, "id", ["text", "title", "heading", "path"])  # every full-text index reads
    assert [row["path"] for row in fresh.search("harbour2", query_type="fts").limit(50).to_list()]
    write_guard.keep_bounded(fresh, timedelta(0))  # LanceDB's own cleanup takes the rest, not bothered by what went
    assert len(_table(db).list_versions()) == 1
