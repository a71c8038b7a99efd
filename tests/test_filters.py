"""Row filters on front-matter columns (storage/read/filters.py): lists hold values (issue 45, item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.indexer import index_folder
from tests.support.engines import engine_for, wired

ODD = ["it's", "back\\slash", "a\\'b", "x' OR '1'='1"]


@pytest.fixture(scope="module")
def tagged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tagged")
    src, db = root / "docs", root / "db"
    src.mkdir()
    pages = {
        "meet.md": "---\ntags: [meetings, backups]\nstatus: accepted\n---\n# Meet\n\nthe weekly notes\n",
        "plan.md": "---\ntags: [planning]\nstatus: accepted\n---\n# Plan\n\nthe weekly notes\n",
        "odd.md": f"---\ntags: {json.dumps(ODD)}\nstatus: draft\n---\n# Odd\n\nthe weekly notes\n",
        "none.md": "# None\n\nthe weekly notes\n",
    }
    for name, text in pages.items():
        (src / name).write_text(text, encoding="utf-8")
    index_folder(src, str(db))
    return db


def sources(db: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> list[str]:
    engine = wired(engine_for(db, monkeypatch))
    return sorted({h["source"] for h in engine.search("weekly notes", search_type="text", **kwargs)["hits"]})


def test_a_list_column_matches_rows_whose_list_holds_the_value(
    tagged_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sources(tagged_db, monkeypatch, filters={"tags": "backups"}) == ["meet.md"]
    assert sources(tagged_db, monkeypatch, filters={"tags": ["planning", "backups"]}) == ["meet.md", "plan.md"]
    assert sources(tagged_db, monkeypatch, filters={"tags": "nothing"}) == []
    # with a scalar column and a path prefix, every test applies
    both = {"tags": ["planning", "backups"], "status": "accepted"}
    assert sources(tagged_db, monkeypatch, filters=both, path_prefix="pl") == ["plan.md"]
    assert sources(tagged_db, monkeypatch, filters={"tags": "backups", "status": "draft"}) == []


@pytest.mark.parametrize("value", ODD)
def test_list_values_are_only_values(tagged_db: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """Quotes and backslashes from an agent match themselves and nothing else."""
    assert sources(tagged_db, monkeypatch, filters={"tags": value}) == ["odd.md"]
    assert sources(tagged_db, monkeypatch, filters={"tags": value + "'"}) == []
    assert sources(tagged_db, monkeypatch, filters={"tags": "x' OR true OR 'y"}) == []


def test_cli_filter_on_a_list_column(tagged_db: Path) -> None:
    result = CliRunner().invoke(
        app, ["search", "weekly notes", "--db", str(tagged_db), "--filter", "tags=backups", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert "meet.md" in result.stdout and "plan.md" not in result.stdout
