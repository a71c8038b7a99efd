"""`~` in a database path means the home folder in every command and in `serve` (issue 45, item 6):
an MCP client passes LANCEDB_PATH without a shell, so nothing has expanded it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.storage.schema import local_path
from tests.support.engines import engine_for, wired


def cli(*args: str | Path) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture
def home_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``lancelot index docs '~/db'`` (unexpanded, as from a program), with HOME in tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    src = tmp_path / "docs"
    src.mkdir()
    (src / "a.md").write_text("# Refunds\n\nrefunds take five days\n", encoding="utf-8")
    result = cli("index", src, "~/db")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert (home / "db" / "documents.lance").is_dir()
    monkeypatch.chdir(tmp_path)  # a folder named "~" here would be the other reading
    return home / "db"


def test_search_and_status_find_the_database_of_tilde(home_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for args in (["search", "refunds", "--db", "~/db"], ["status", "--db", "~/db"]):
        result = cli(*args)
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    monkeypatch.setenv("LANCEDB_PATH", "~/db")
    result = cli("search", "refunds")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "a.md" in result.stdout  # type: ignore[attr-defined]


def test_the_server_engine_finds_the_database_of_tilde(home_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = wired(engine_for("~/db", monkeypatch))
    assert [h["source"] for h in engine.search("refunds")["hits"]] == ["a.md"]


def test_only_local_paths_are_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert local_path("~/db") == str(tmp_path / "db")
    assert local_path("s3://bucket/~/db") == "s3://bucket/~/db"
    assert local_path("/srv/db") == "/srv/db"
