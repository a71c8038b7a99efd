"""`status` says per table what a search will do, in one line that agrees with what a search then
does (issue 24: "vectors none" next to "Vector search available", or a table's local 384-d
vectors next to "model text-embedding-ada-002"); `lancedb_status` carries the same line.

Each line is checked against the search that really runs on the same settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from lancelot_cli import local_embed
from lancelot_cli.cli.app import app
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS
from tests.support import tiny_onnx
from tests.support.embed_server import EmbedServer
from tests.support.engines import engine_for

NO_VECTORS = "text only: the table has no vectors; run `lancelot index SRC --embed`"


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture(scope="module")
def local_db(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("localdb") / "db"
    with pytest.MonkeyPatch.context() as mp:
        for name in [k for k in os.environ if k.startswith(("OPENAI_", "EMBEDDING_"))]:
            mp.delenv(name)
        result = cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{tiny_model}")
    assert result.exit_code == 0, result.stderr
    return db


def _agrees(line: str, engine: Any) -> None:
    """The line's first word is the search that runs (``text only`` -> text)."""
    ran = engine.search("refund store credit").search_type
    assert line.split(":")[0].split()[0] == ran, (line, ran)


def test_a_table_without_vectors_says_text_only_even_with_a_local_model_set(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_for(sample_db, monkeypatch, EMBEDDING_MODEL="local:sentence-transformers/all-MiniLM-L6-v2")
    line = engine.status().tables[0].search
    assert line == NO_VECTORS
    _agrees(line, engine)
    result = cli("status", "--db", sample_db)
    assert f"Search  documents: {NO_VECTORS}" in result.stdout
    assert "Vector search  available" not in result.stdout


def test_a_local_model_table_names_its_own_model_not_the_setting(
    local_db: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a key, and EMBEDDING_MODEL left at its default
    engine = engine_for(local_db, monkeypatch)
    line = engine.status().tables[0].search
    assert line == f"hybrid: works, local {tiny_model.resolve()}, 32-d"
    _agrees(line, engine)
    out = cli("status", "--db", local_db).stdout
    assert f"documents: hybrid: works, local {tiny_model.resolve()}, 32-d" in out
    assert "makes them with text-embedding-ada-002 through OpenAI (key from env)" in out
    assert "in table 'documents' they would replace the vectors of another model" in out


def test_another_local_model_set_still_searches_with_the_tables_own(
    local_db: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tiny_onnx.build(tmp_path / "other", ["refund"], seed=1)
    engine = engine_for(local_db, monkeypatch, EMBEDDING_MODEL=f"local:{other}")
    line = engine.status().tables[0].search
    assert line == f"hybrid: works, local {tiny_model.resolve()}, 32-d"  # issue 45 #5: the table's own model
    _agrees(line, engine)


def test_an_api_model_table_needs_a_key(vector_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = engine_for(vector_db, monkeypatch, keyless=True)
    line = engine.status().tables[0].search
    assert line.startswith("text only: the vectors need an OpenAI API key") and "OPENAI_API_KEY" in line
    _agrees(line, engine)


def test_an_api_model_table_with_a_key_is_hybrid_and_the_tool_says_so(vector_env: EmbedServer, vector_db: Path) -> None:
    engine = engine_for(vector_db)
    status = engine.status()
    line = next(t.search for t in status.tables if t.name == "documents")
    model = next(t.embedding_model for t in status.tables if t.name == "documents")
    assert line == f"hybrid: works, {model}, 32-d, key from env"
    _agrees(line, engine)
    assert next(t.search for t in status.tables if t.name == "textonly") == NO_VECTORS

    async def tool() -> dict[str, Any]:
        async with Client(build_server(load())) as client:
            return json.loads((await client.call_tool("lancedb_status", {})).content[0].text)

    tables = {t["name"]: t["search"] for t in anyio.run(tool)["tables"]}
    assert tables == {"documents": line, "textonly": NO_VECTORS}


def test_a_missing_model_folder_says_text_only(
    local_db: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    moved = tmp_path / "moved"
    shutil.copytree(tiny_model, moved)
    shutil.rmtree(tiny_model)
    monkeypatch.setattr(local_embed, "_shared", {})  # as in a new process: the model loads anew, and fails
    try:
        engine = engine_for(local_db, monkeypatch)
        line = engine.status().tables[0].search
        assert line.startswith(
            f"text only: the vectors were made with the model in {tiny_model.resolve()}, which is not there"
        )
        assert "--embed-model" in line  # and what to do (issue 45)
        _agrees(line, engine)
    finally:
        shutil.copytree(moved, tiny_model)
