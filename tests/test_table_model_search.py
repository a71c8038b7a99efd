"""A table is searched with the local model its vectors were made with (issue 45 #5): `init` stores
one local model, `index --embed-model local:/folder` embeds with another, and search, `status` and
the MCP tools stay hybrid with the table's model instead of falling back to text until `init` ran
again. Another model is never used on those vectors.

Skipped, with the reason, where the `local` extra (fastembed, onnx, tokenizers) is not installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastembed", reason="local embeddings need the local extra: pip install -e '.[local]'")
pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")

from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from tests.conftest import SAMPLE_DOCS
from tests.support import tiny_onnx
from tests.support.engines import engine_for


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


def _words() -> list[str]:
    return [p.read_text("utf-8", errors="replace") for p in SAMPLE_DOCS.rglob("*") if p.is_file()]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two local model folders: the one `init` stores, and the one the table is indexed with."""
    root = tmp_path_factory.mktemp("models")
    return tiny_onnx.build(root / "chosen-at-init", _words()), tiny_onnx.build(root / "indexed-with", _words(), seed=1)


def test_a_table_indexed_with_another_local_model_than_init_stored_is_searched_hybrid(
    models: tuple[Path, Path], tmp_path: Path
) -> None:
    at_init, indexed_with = models
    db = tmp_path / "db"
    made = cli("init", "--db", db, "--embedding-model", f"local:{at_init}", "--yes")
    assert made.exit_code == 0, made.output
    indexed = cli("index", SAMPLE_DOCS, "--embed-model", f"local:{indexed_with}", "--json")
    assert indexed.exit_code == 0, indexed.output
    assert json.loads(indexed.stdout)["embeddingModel"] == f"local:{indexed_with.resolve()}"

    found = cli("search", "refund store credit", "--json")
    assert found.exit_code == 0, found.output
    reply = json.loads(found.stdout)
    assert reply["searchType"] == "hybrid" and not reply.get("note"), reply.get("note")
    status = cli("status")
    assert f"documents: hybrid: works, local {indexed_with.resolve()}, 32-d" in status.stdout, status.stdout


@pytest.mark.parametrize("search_type", ["auto", "vector", "hybrid"])
def test_a_local_embedding_model_setting_never_embeds_another_local_models_table(
    models: tuple[Path, Path], tmp_path: Path, search_type: str
) -> None:
    at_init, indexed_with = models
    db = tmp_path / "db"
    assert cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{indexed_with}").exit_code == 0
    found = engine_for(db, EMBEDDING_MODEL=f"local:{at_init}").search("refund store credit", search_type=search_type)
    assert found.search_type == ("hybrid" if search_type == "auto" else search_type), found.note
    assert found.note is None
    assert any("refund" in hit.source for hit in found.hits[:3])


def test_embed_keeps_the_tables_local_model_over_the_one_init_stored(models: tuple[Path, Path], tmp_path: Path) -> None:
    at_init, indexed_with = models
    src = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, src)
    assert cli("init", "--db", tmp_path / "db", "--embedding-model", f"local:{at_init}", "--yes").exit_code == 0
    assert cli("index", src, "--embed-model", f"local:{indexed_with}").exit_code == 0
    (src / "news.md").write_text("# News\n\nA refund desk opens in spring.\n", encoding="utf-8")
    again = cli("index", src, "--embed", "--json")
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert (summary["embeddingModel"], summary["embedded"]) == (f"local:{indexed_with.resolve()}", 1)
    status = cli("status").stdout
    assert f"table 'documents' keeps its own local:{indexed_with.resolve()}" in " ".join(status.split())
    switched = cli("index", src, "--embed-model", f"local:{at_init}", "--json")  # a flag switches
    assert switched.exit_code == 0 and json.loads(switched.stdout)["embeddingModel"] == f"local:{at_init.resolve()}"
