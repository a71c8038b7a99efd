"""Folder descriptions (issue 24): ``.lancelotdescribe`` beside ``.lancelotignore``, kept at index time,
returned with hits (``folders``) and in the server's instructions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.describe import folder_key
from lancelot_cli.server.app import build_server, instructions
from lancelot_cli.settings import load
from tests.support.engines import engine_for

DESCRIBE = """\
# what each folder holds
/: Acme Outfitters staff handbook
policies/: Rules customers ask about: refunds, shipping, warranty, privacy
./guides: How-to notes   for staff
"""


def _described(docs: Path, tmp_path: Path) -> Path:
    (docs / ".lancelotdescribe").write_text(DESCRIBE, encoding="utf-8")
    db = tmp_path / "db"
    index_folder(docs, str(db))
    return db


def test_hits_carry_the_descriptions_of_their_folders(docs: Path, tmp_path: Path) -> None:
    db = _described(docs, tmp_path)
    found = engine_for(db).search("stock count")
    assert not any(h.source.startswith("policies/") for h in found.hits)
    assert found.folders == {"/": "Acme Outfitters staff handbook", "guides/": "How-to notes for staff"}
    wide = engine_for(db).search("refund")
    assert wide.folders is not None and set(wide.folders) == {"/", "guides/", "policies/"}
    assert next(iter(wide.folders)) == "/"  # the collection first


def test_the_instructions_say_what_each_table_holds(docs: Path, tmp_path: Path) -> None:
    db = _described(docs, tmp_path)
    text = instructions(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))
    assert "What table documents holds: / Acme Outfitters staff handbook; guides/ How-to notes for staff;" in text


@pytest.mark.anyio
async def test_the_agent_gets_folders_in_the_search_reply_and_the_instructions(docs: Path, tmp_path: Path) -> None:
    db = _described(docs, tmp_path)
    async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
        result = await client.call_tool("lancedb_search", {"query": "warranty"})  # checked against outputSchema
        told = client.instructions
    assert result.structured_content is not None
    assert result.structured_content["folders"]["policies/"].startswith("Rules customers ask about")
    assert told is not None and "policies/ Rules customers ask about" in told


def test_removing_the_file_removes_the_descriptions(docs: Path, tmp_path: Path) -> None:
    db = _described(docs, tmp_path)
    (docs / ".lancelotdescribe").unlink()
    index_folder(docs, str(db))
    assert engine_for(db).search("refund").folders is None
    assert "What table" not in instructions(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))
    assert not (db / "documents.describe.json").exists()


def test_a_bad_line_fails_the_run_naming_it_and_keeps_the_table(docs: Path, tmp_path: Path) -> None:
    db = _described(docs, tmp_path)
    (docs / ".lancelotdescribe").write_text("/: fine\npolicies without a colon\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["index", str(docs), str(db)], prog_name="lancelot")
    assert result.exit_code == 1
    assert result.stderr.strip().endswith(
        ".lancelotdescribe:2: write FOLDER: what it holds (e.g. policies/: refund rules)"
    )
    assert engine_for(db).search("refund").folders  # the table as it was


def test_folder_keys_are_written_one_way() -> None:
    assert [folder_key(k) for k in ("/", "", ".", "./guides", "/guides/", "guides", "faq.txt", "notes.d/")] == [
        "/",
        "/",
        "/",
        "guides/",
        "guides/",
        "guides/",
        "faq.txt",
        "notes.d/",
    ]
