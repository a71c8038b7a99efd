"""A full disk or a read-only database folder (storage/disk.py): one line that says so and what to do,
exit 1, nothing left behind by a first run, the old table still searchable. The real cases run on
small tmpfs mounts (root with mount rights, as in CI's container); elsewhere they skip."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lancelot_cli.storage import disk
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


def _index(docs: Path, db: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "config"))
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
