"""The ledger (indexer/ledger.py): a re-run with nothing to do answers from the folder's stat calls
without opening the table, and still re-indexes a file that changed within the same clock tick
keeping its size, a renamed or deleted file, and a table damaged or changed since. Real LanceDB
tables in tmp folders; file times set with os.utime."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import index_folder, ledger
from lancelot_cli.indexer.sources import read_document
from tests.conftest import subprocess_env
from tests.support.engines import engine_for, wired

HOUR_NS = 3_600_000_000_000


def _age(root: Path, by_ns: int = HOUR_NS) -> None:
    """Every file's mtime moved back: written long before the run (not racy)."""
    for path in root.rglob("*"):
        if path.is_file():
            info = path.stat()
            os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns - by_ns))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    for n in range(12):
        (src / f"part-{n % 3}").mkdir(parents=True, exist_ok=True)
        (src / f"part-{n % 3}" / f"note-{n:02d}.md").write_text(
            f"# Note {n}\n\nPlain words about topic {n}, numbered {n}.\n", encoding="utf-8"
        )
    _age(src)
    return src


def _sources(db: Path, query: str) -> set[str]:
    return {hit["source"] for hit in wired(engine_for(db, keyless=True)).search(query, limit=20)["hits"]}


def test_a_no_change_run_reads_and_hashes_nothing_and_leaves_the_table(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = index_folder(folder, str(db))
    assert not first.from_ledger and Path(ledger.path_for(str(db), "documents")).is_file()
    again = index_folder(folder, str(db))
    assert again.from_ledger and (again.read, again.hashed, again.committed) == (0, 0, False)
    assert (again.files, again.chunks, again.version) == (first.files, first.chunks, first.version)


def test_a_change_within_the_same_tick_keeping_the_size_is_reindexed(folder: Path, tmp_path: Path) -> None:
    """A coarse clock (FAT, some network shares) gives two writes in one tick the same mtime: the
    file was written just before the run that read it, so the next run hashes it and sees the change."""
    db = tmp_path / "db"
    path = folder / "part-1" / "note-04.md"
    path.write_text("# Note 4\n\nThe word is alphaword.\n", encoding="utf-8")
    index_folder(folder, str(db))
    stamp = path.stat()
    path.write_text("# Note 4\n\nThe word is omegaword.\n", encoding="utf-8")  # same size
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and the same mtime
    assert path.stat().st_size == stamp.st_size
    report = index_folder(folder, str(db))
    assert (report.read, report.updated, report.committed) == (1, 1, True)
    assert _sources(db, "omegaword") == {"part-1/note-04.md"} and not _sources(db, "alphaword")


def test_a_racy_file_that_did_not_change_is_hashed_not_read(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    (folder / "part-0" / "note-00.md").write_text("# Note 0\n\nJust written.\n", encoding="utf-8")
    first = index_folder(folder, str(db))
    again = index_folder(folder, str(db))
    assert again.from_ledger and (again.read, again.hashed, again.committed) == (0, 1, False)
    assert again.version == first.version


def test_old_mtimes_that_match_are_trusted_without_hashing(folder: Path, tmp_path: Path) -> None:
    """Counts what a no-change run opens: with the ledger, no file at all (read or hashed)."""
    db = tmp_path / "db"
    index_folder(folder, str(db))
    (folder / "part-2" / "note-05.md").unlink()  # the slow path records the state again
    assert index_folder(folder, str(db)).deleted == 1
    assert index_folder(folder, str(db)).hashed == 0


def test_without_a_ledger_every_file_is_hashed_once(folder: Path, tmp_path: Path) -> None:
    """A table from an earlier version (or a copy without its ledger): the states' age is unknown."""
    db = tmp_path / "db"
    first = index_folder(folder, str(db))
    ledger.remove(str(db), "documents")
    once = index_folder(folder, str(db))
    assert not once.from_ledger and (once.read, once.hashed, once.committed) == (0, first.files, False)
    after = index_folder(folder, str(db))
    assert after.from_ledger and after.hashed == 0


def test_renames_and_deletes_go_through_the_table(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    index_folder(folder, str(db))
    (folder / "part-0" / "note-03.md").rename(folder / "part-0" / "moved.md")
    (folder / "part-1" / "note-01.md").unlink()
    report = index_folder(folder, str(db))
    assert not report.from_ledger and (report.read, report.deleted) == (1, 2)
    assert _sources(db, "numbered 3") >= {"part-0/moved.md"} and "part-0/note-03.md" not in _sources(db, "topic")
    assert index_folder(folder, str(db)).from_ledger


def test_a_table_changed_or_damaged_since_is_opened(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    index_folder(folder, str(db))
    copy = tmp_path / "copy"
    shutil.copytree(db, copy)
    data = sorted((copy / "documents.lance" / "data").glob("*.lance"))[0]
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(IndexingError, match="damaged"):
        index_folder(folder, str(copy))
    # Another writer's commit (here: a run of another Lancelot, which does not know the ledger).
    from lancelot_cli.storage.write.table import TableWriter

    TableWriter(str(db), "documents").save_index_options({"exclude": ["part-2/**"], "siteDetection": True})
    report = index_folder(folder, str(db))
    assert not report.from_ledger and report.files == 8  # the options saved with the table apply


def test_options_and_unreadable_files(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    (folder / "bad.md").write_bytes(b"\x00\x01binary")
    _age(folder)
    first = index_folder(folder, str(db))
    assert [rel for rel, _ in first.skipped] == ["bad.md"]
    again = index_folder(folder, str(db))
    assert again.from_ledger and again.skipped == first.skipped and again.files == first.files
    excluded = index_folder(folder, str(db), exclude=["part-0/**"])
    assert not excluded.from_ledger and excluded.deleted == 4
    assert index_folder(folder, str(db)).from_ledger  # the options are saved with the table now


def test_vectors_missing_for_the_chosen_model_are_not_skipped(folder: Path, tmp_path: Path) -> None:
    from tests.test_deferred_optimize import embed

    db = tmp_path / "db"
    index_folder(folder, str(db), embed=embed, model="words-32")
    assert index_folder(folder, str(db), embed=embed, model="words-32").from_ledger
    (folder / "new.md").write_text("# New\n\nA note written without vectors.\n", encoding="utf-8")
    _age(folder)
    text_only = index_folder(folder, str(db))
    assert text_only.without_vectors == 1
    report = index_folder(folder, str(db), embed=embed, model="words-32")
    assert not report.from_ledger and report.embedded == 1
    assert index_folder(folder, str(db), embed=embed, model="words-32").from_ledger


def test_the_ledger_digest_is_the_one_the_reader_records(folder: Path) -> None:
    path = folder / "part-0" / "note-00.md"
    assert ledger.digest(path) == read_document(folder, "part-0/note-00.md").digest


@pytest.mark.slow
def test_a_no_change_run_does_not_import_lancedb(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    index_folder(folder, str(db))
    code = (
        "import sys; from lancelot_cli.indexer import index_folder; r = index_folder(sys.argv[1], sys.argv[2]); "
        "print(r.read, r.committed, 'lancedb' in sys.modules, 'pyarrow' in sys.modules)"
    )
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
        check=True,
    )
    assert done.stdout.split() == ["0", "False", "False", "False"], (done.stdout, done.stderr, time.time() - started)
