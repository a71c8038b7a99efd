"""What `lancelot index` reads is said the same everywhere (issue 39 #6): `index --help`, the `init`
wizard and docs/indexing.md all give the list made from the indexer's own sets, every suffix."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.cli.readable_list import READ
from lancelot_cli.indexer.scanning import EXTENSIONS
from tests.conftest import REPO
from tests.test_init import CLEAR, CTRL_C, ENTER, wizard
from tools import readable


def one_line(text: str) -> str:
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_the_generated_list_is_the_indexers() -> None:
    assert readable.sentence() == READ  # else: python -m tools.generate
    named = {suffix for _, suffixes in readable.groups() for suffix in suffixes}
    assert named == EXTENSIONS
    assert all(re.search(rf"[ (]{re.escape(suffix)}[,)]", READ) for suffix in EXTENSIONS)
    for kind in ("Markdown", "text", "HTML", "PDF", "Word", "PowerPoint", "EPUB"):
        assert kind in READ


def test_a_reader_without_a_name_is_listed_by_its_letters() -> None:
    found = [("Markdown", (".md",)), ("RST", (".rst",))]
    assert readable.sentence(found) == "Markdown (.md) and RST (.rst)"


def test_index_help_says_the_list() -> None:
    result = CliRunner().invoke(app, ["index", "--help"], prog_name="lancelot", env={"COLUMNS": "100"})
    assert result.exit_code == 0
    assert f"It reads {READ} files" in one_line(result.output)
    assert ".md, .txt and .html" not in result.output


def test_the_docs_say_the_list() -> None:
    indexing = (REPO / "docs" / "indexing.md").read_text(encoding="utf-8")
    assert f"{READ}." in indexing
    for page in ("README.md", "docs/pypi.md"):  # the opening sentence names every kind
        opening = one_line((REPO / page).read_text(encoding="utf-8")[:600])
        assert all(name in opening for name, _ in readable.groups()), page


def test_the_wizard_says_the_list_before_asking_for_the_folder(tmp_path, isolated_env, capsys) -> None:
    asked: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        wizard(f"{CLEAR}{tmp_path / 'new'}{ENTER}{ENTER}{CTRL_C}", cwd=tmp_path, asked=asked)
    assert asked[-1] == "Folder of documents to index:"
    assert f"Lancelot reads {READ} files" in one_line(capsys.readouterr().err)
