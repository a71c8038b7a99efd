"""`lancelot_cli.indexer.pipeline`: one index run's steps (issue 48 #6: a test module per core module;
the runs themselves are tested in test_indexer*.py, test_incremental*.py and test_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer.job import folder_job
from lancelot_cli.indexer.pipeline import checked, index_job


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# Refunds\n\nrefunds take five days\n", encoding="utf-8")
    return src


def test_a_job_names_its_database_as_every_command_reads_it(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~``, ``file://`` and a relative path become one absolute folder (location.py)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for given in ("~/db", "file://~/db", "db", "./x/../db"):
        assert checked(folder_job(docs, given)).database == str(tmp_path / "db"), given
    assert checked(folder_job(docs, "s3://bucket/db")).database == "s3://bucket/db"


def test_a_file_is_no_database_and_a_run_writes_one(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(IndexingError, match="is a file; give a folder"):
        index_job(folder_job(docs, str(tmp_path / "file")))
    report = index_job(folder_job(docs, str(tmp_path / "db")))
    assert report.database == str(tmp_path / "db")
    assert (tmp_path / "db" / "documents.lance").is_dir()


def test_the_report_names_a_relative_database_as_given(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run writes the absolute folder; its report (`index` prints it) keeps the words given."""
    monkeypatch.chdir(tmp_path)
    assert index_job(folder_job(docs, "./db")).database == "db"
    assert (tmp_path / "db" / "documents.lance").is_dir()


class _Collected:
    """An object whose collection runs a weakref callback, as the garbage collector does mid-run."""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed one
def test_a_ctrl_c_that_python_swallows_in_a_gc_callback_still_ends_the_run(docs: Path, tmp_path: Path) -> None:
    """A SIGINT that lands while a weakref callback runs raises KeyboardInterrupt inside the
    callback, where Python prints "Exception ignored" and goes on: the run used to finish and exit 0
    (seen in CI, test_index_interrupts). It now ends before the commit, and the table is as it was."""
    import signal
    import weakref

    db = str(tmp_path / "db")
    index_job(folder_job(docs, db))
    before = sorted(p.name for p in (tmp_path / "db" / "documents.lance" / "_versions").iterdir())
    (docs / "b.md").write_text("# Shipping\n\nparcels leave on Mondays\n", encoding="utf-8")
    keep: list[object] = []

    def signal_inside_a_callback(rel: str, done: int, total: int) -> None:
        collected = _Collected()
        keep.append(weakref.ref(collected, lambda _: signal.raise_signal(signal.SIGINT)))
        del collected  # the callback runs now; the handler raises inside it

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        index_job(folder_job(docs, db, progress=signal_inside_a_callback, workers=1))
    after = sorted(p.name for p in (tmp_path / "db" / "documents.lance" / "_versions").iterdir())
    assert after == before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handed back
