"""What `lancelot index` keeps a table safe from (issue 45 items 2 and 3): another folder indexed into
a table is refused when it would remove the table's documents (one line, exit 1, nothing written;
``--replace`` lets it), the same folder moved goes on, and ``--ext`` is saved with the table like
``--exclude`` (``--ext ''`` clears it).

The real command (in-process; a `lancelot index --watch` process for the watch), real LanceDB
tables in tmp folders (indexer/plan.py ``check_source``, indexer/saved_options.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import lancedb
import pytest
from typer.testing import CliRunner, Result

from lancelot_cli.cli.app import app
from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.schema import OPTIONS_TAG
from tests.conftest import hash_tree, lancelot_command, subprocess_env


def cli(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["index", *map(str, args), "--json"])


def index(*args: str | Path) -> dict[str, Any]:
    """`lancelot index ARGS --json`, in-process; its summary."""
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def folder(root: Path, *names: str) -> Path:
    """A folder of small Markdown notes (and whatever ``names`` says: "code.py"...)."""
    root.mkdir(parents=True)
    for name in names:
        (root / name).write_text(f"# {name}\n\nThe notes of {name}, about {root.name}.\n", encoding="utf-8")
    return root


def table_files(db: Path) -> dict[str, str]:
    """Every file of the database but the writer lock's (it holds the pid of the last run that took it)."""
    return {name: digest for name, digest in hash_tree(db).items() if not name.endswith(".lock")}


def paths(db: Path, table: str = "documents") -> set[str]:
    return set(lancedb.connect(str(db)).open_table(table).to_arrow()["path"].to_pylist())


def saved(db: Path) -> dict[str, Any]:
    """The index options saved with the documents table."""
    field = lancedb.connect(str(db)).open_table("documents").schema.field("path")
    return dict(json.loads((field.metadata or {})[OPTIONS_TAG.encode()]))


@pytest.fixture
def pg_docs(tmp_path: Path) -> Path:
    return folder(tmp_path / "a" / "pg-docs", "select.md", "insert.md", "vacuum.md")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return folder(tmp_path / "b" / "notes", "monday.md", "tuesday.md")


def test_another_folder_is_refused_in_one_line_and_the_table_is_left_as_it_was(
    tmp_path: Path, pg_docs: Path, notes: Path
) -> None:
    db = tmp_path / "db"
    index(pg_docs, db)
    assert saved(db)["source"] == str(pg_docs.resolve())
    before = table_files(db)
    for extra in ((), ("--rebuild",)):  # --rebuild replaces the whole table: refused just the same
        result = cli(notes, db, *extra)
        assert result.exit_code == 1, result.output
        assert result.stdout == ""
        assert result.stderr == (
            f"lancelot: error: table 'documents' in {db} was indexed from {pg_docs.resolve()}; indexing "
            f"{notes.resolve()} into it would remove its 3 documents: add --replace to replace them, "
            "or use --table NAME to keep both\n"
        )
        assert table_files(db) == before
    with pytest.raises(IndexingError, match="would remove its 3 documents"):  # the library refuses too
        index_folder(notes, str(db))
    assert table_files(db) == before
    assert paths(db) == {"select.md", "insert.md", "vacuum.md"}
    index(notes, db, "--table", "notes")  # the hint: another table keeps both
    assert paths(db) == {"select.md", "insert.md", "vacuum.md"}
    assert paths(db, "notes") == {"monday.md", "tuesday.md"}


def test_a_folder_that_shares_some_files_says_how_many_would_go(tmp_path: Path, pg_docs: Path) -> None:
    db = tmp_path / "db"
    index(pg_docs, db)
    copy = tmp_path / "copy"
    shutil.copytree(pg_docs, copy)
    (copy / "vacuum.md").unlink()
    before = table_files(db)
    result = cli(copy, db)
    assert result.exit_code == 1
    assert "would remove 1 of its 3 documents" in result.stderr
    assert table_files(db) == before


def test_replace_replaces_the_table_and_saves_the_new_folder(tmp_path: Path, pg_docs: Path, notes: Path) -> None:
    db = tmp_path / "db"
    index(pg_docs, db)
    summary = index(notes, db, "--replace")
    assert summary["committed"]
    assert paths(db) == {"monday.md", "tuesday.md"}
    assert saved(db)["source"] == str(notes.resolve())
    assert index(notes, db)["deleted"] == 0  # the table's folder now: no --replace needed


def test_the_same_folder_moved_or_reached_by_a_link_goes_on(tmp_path: Path, pg_docs: Path) -> None:
    db = tmp_path / "db"
    index(pg_docs, db)
    moved = tmp_path / "elsewhere" / "pg-docs"
    moved.parent.mkdir()
    shutil.move(pg_docs, moved)
    summary = index(moved, db)
    assert (summary["added"], summary["updated"], summary["deleted"]) == (0, 0, 0)
    assert paths(db) == {"select.md", "insert.md", "vacuum.md"}
    assert saved(db)["source"] == str(moved.resolve())
    link = tmp_path / "link"
    link.symlink_to(moved, target_is_directory=True)
    assert index(link, db)["deleted"] == 0
    assert saved(db)["source"] == str(moved.resolve())


def test_a_table_that_saved_no_folder_is_checked_against_the_one_index_noted(
    tmp_path: Path, pg_docs: Path, notes: Path
) -> None:
    """A table of an earlier Lancelot: the folder `lancelot index` noted in the config dir
    (cli/links.py) stands in for the one it did not save; without either, the run goes on."""
    db = tmp_path / "db"
    index(pg_docs, db)
    table = lancedb.connect(str(db)).open_table("documents")
    options = {key: value for key, value in saved(db).items() if key != "source"}
    table.update_field_metadata({"path": "path", "metadata": {OPTIONS_TAG: json.dumps(options)}})
    before = table_files(db)
    result = cli(notes, db)
    assert result.exit_code == 1
    assert f"was indexed from {pg_docs.resolve()}; indexing {notes.resolve()}" in result.stderr
    assert table_files(db) == before
    index_folder(notes, str(db))  # no folder noted for the library: unknown, so not refused
    assert paths(db) == {"monday.md", "tuesday.md"}


def test_ext_is_saved_with_the_table_and_cleared_by_an_empty_one(tmp_path: Path) -> None:
    src = folder(tmp_path / "project", "readme.md", "main.py", "util.py")
    db = tmp_path / "db"
    index(src, db, "--ext", "PY")
    assert paths(db) == {"readme.md", "main.py", "util.py"}
    assert saved(db)["extensions"] == [".py"]
    summary = index(src, db)  # no --ext: the saved one
    assert summary["deleted"] == 0
    assert paths(db) == {"readme.md", "main.py", "util.py"}
    index_folder(src, str(db))  # the library keeps it too
    assert paths(db) == {"readme.md", "main.py", "util.py"}
    index(src, db, "--ext", "")  # --ext '' clears
    assert paths(db) == {"readme.md"}
    assert saved(db)["extensions"] == []
    index(src, db)
    assert paths(db) == {"readme.md"}


@pytest.mark.slow
def test_watch_refuses_another_folder_before_it_starts(tmp_path: Path, pg_docs: Path, notes: Path) -> None:
    db = tmp_path / "db"
    index(pg_docs, db)
    before = table_files(db)
    done = subprocess.run(
        [*lancelot_command(), "index", str(notes), str(db), "--watch"],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
    )
    assert done.returncode == 1, done.stderr
    assert "would remove its 3 documents: add --replace" in done.stderr
    assert "Watching" not in done.stderr
    assert "Traceback" not in done.stderr
    assert table_files(db) == before


def test_init_indexing_a_folder_now_is_checked_too(tmp_path: Path, pg_docs: Path, notes: Path) -> None:
    """`lancelot init`'s "index a folder into it now" goes through `index_with_progress`."""
    from lancelot_cli import settings as settings_module
    from lancelot_cli.cli.index import index_with_progress

    db = tmp_path / "db"
    settings = settings_module.load(flags={"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "documents"})
    index_with_progress(settings, str(pg_docs))
    before = table_files(db)
    with pytest.raises(IndexingError, match="add --replace"):
        index_with_progress(settings, str(notes))
    assert table_files(db) == before
