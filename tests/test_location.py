"""Where the database is (issue 48 #2): one parse (lancelot_cli/location.py) for every command, the
background server and `serve`, so the same string names the same database everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.location import Location
from lancelot_cli.settings import load


def test_a_local_path_becomes_one_absolute_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home_db = str(tmp_path / "home" / "db")
    for given in ("~/db", " ~/db ", "file://~/db", f"file://{home_db}", home_db, f"{home_db}/", "~/x/../db"):
        location = Location.parse(given)
        assert (location.uri, location.is_local, location.folder) == (home_db, True, Path(home_db)), given
        assert not location.relative
    relative = Location.parse("./db", cwd=tmp_path)
    assert (relative.uri, relative.relative, relative.display) == (str(tmp_path / "db"), True, "db")
    assert Location.parse("~/db").display == home_db  # as reports have always shown it
    monkeypatch.chdir(tmp_path)
    assert Location.parse("db") == relative  # read in the working folder when none is given
    assert Location.parse(relative.uri) == relative  # parsing the parsed form changes nothing


def test_an_object_store_uri_is_kept_as_given() -> None:
    stores = (("s3://bucket/~/db", "s3"), ("gs://b/db", "gs"), ("az://c/db", "az"), ("memory://", "memory"))
    for given, scheme in stores:
        location = Location.parse(given)
        assert (location.uri, location.is_local, location.scheme) == (given, False, scheme)
        with pytest.raises(ValueError, match="object store"):
            location.folder  # noqa: B018 - the property is the call
    assert Location.parse("s3://user:secret@bucket/db").display == "s3://bucket/db"
    assert Location.parse("/srv/db").display == "/srv/db"


def test_settings_give_the_parsed_location_and_keep_the_words(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`status` prints LANCEDB_PATH as given; what is opened, locked and sent is the parsed form."""
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = load(flags={"LANCEDB_PATH": "~/db"})
    assert settings.db_uri == "~/db"
    assert settings.database == Location(str(tmp_path / "db"))
    assert load().database is None


def test_a_file_uri_with_tilde_opens_the_folder_index_wrote(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`index SRC '~/db'` then `search --db 'file://~/db'`: the same folder. Before, the search looked
    for a folder literally named ``~/db`` in the working folder and said the database did not exist."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# Refunds\n\nrefunds take five days\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    indexed = runner.invoke(app, ["index", str(src), "~/db"], prog_name="lancelot")
    assert indexed.exit_code == 0, indexed.output
    found = runner.invoke(app, ["search", "refunds", "--db", "file://~/db"], prog_name="lancelot")
    assert found.exit_code == 0, found.output
    assert "a.md" in found.stdout


def test_table_completion_reads_a_file_uri_as_every_command_does(tmp_path: Path) -> None:
    """`--db file:///abs/db --table <TAB>`: a search opens that folder, so completion lists its tables
    (before, anything with ``://`` counted as an object store and offered nothing)."""
    import typer
    from typer._click.shell_completion import _resolve_context

    from lancelot_cli.cli.options import complete_table

    (tmp_path / "db" / "documents.lance").mkdir(parents=True)
    args = ["search", "x", "--db", f"file://{tmp_path / 'db'}", "--table"]
    ctx = _resolve_context(typer.main.get_command(app), {}, "lancelot", args)
    assert complete_table(ctx, "") == ["documents"]


def test_a_server_opens_one_engine_for_a_database_however_it_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background server's own LANCEDB_PATH is `~/db`; clients send the folder it names. Before,
    the two spellings were two keys, so one database was opened twice (two engines, two caches)."""
    from lancelot_cli.server.databases import Engines, _asked
    from lancelot_cli.settings import load

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "db").mkdir()
    opened: list[list[str]] = []
    engines = Engines(
        load(environ={"LANCEDB_PATH": "~/db", "HOME": str(tmp_path)}), any_database=True, on_change=opened.append
    )
    own = engines.get()
    for spelling in (str(tmp_path / "db"), f"file://{tmp_path / 'db'}", "~/db"):
        token = _asked.set(spelling)
        try:
            assert engines.get() is own, spelling
        finally:
            _asked.reset(token)
    assert len(opened) == 1
