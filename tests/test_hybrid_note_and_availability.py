"""Issue 45, items 7 and 8: `status` says a local model is available only when its weights are on
this machine, and says what to do when a table's model is not; a hybrid search whose first hit was
found by meaning (close to the query, few of its words) does not tell the agent nothing was found.

The hybrid table is real: LanceDB vectors from the loopback embeddings server's bag of hashed words
(tests/support/embed_server.py), a full-text index, and a document whose vector is the query's own
while its text holds one of the query's six terms."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli import local_embed
from lancelot_cli.cli.app import app
from lancelot_cli.engine.strength import MATCH_FLOOR
from tests.support.embed_server import MODEL, EmbedServer, embed
from tests.support.engines import engine_for

QUERY = "make the browser pop up a username and password prompt"
ANSWER = "HTTP Basic Auth: send WWW-Authenticate in a 401 reply and the browser shows its login dialog."
OTHERS = [  # none holds a word of the query: the text leg finds the answer alone, by "browser"
    "Cookies keep a session between requests; set them with Set-Cookie.",
    "Hashes are stored with bcrypt, never as plain text.",
    "Questions to a language model are phrased with care.",
    "Windows opened by scripts are blocked unless a click opens them.",
    "The login column is unique and indexed.",
]


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture(scope="module")
def meaning_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table where the right document is found by meaning: its vector is the query's."""
    return _build(tmp_path_factory.mktemp("meaning") / "db", MODEL)


def _build(db_path: Path, model: str) -> Path:
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    texts = [ANSWER, *OTHERS]
    rows = [
        {
            "id": f"doc{n}#0",
            "text": text,
            "title": f"doc{n}",
            "path": f"docs/doc{n}.md",
            "vector": embed(QUERY) if text == ANSWER else embed(text),
        }
        for n, text in enumerate(texts)
    ]
    fields = [
        pa.field("id", pa.string()),
        pa.field("text", pa.string()),
        pa.field("title", pa.string()),
        pa.field("path", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), 32)),
    ]
    schema = pa.schema(fields, metadata={"lancelot": json.dumps({"embedding_model": model, "dimension": 32})})
    table = lancedb.connect(str(db_path)).create_table("documents", data=pa.Table.from_pylist(rows, schema=schema))
    table.create_index("text", config=FTS())
    return db_path


def _engine(db: Path, server: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    return engine_for(
        db,
        monkeypatch,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=server.url,
        EMBEDDING_MODEL=MODEL,
    )


# -- item 8: the "no good match" note on hybrid searches --


def test_a_hybrid_search_whose_first_hit_is_close_in_meaning_is_not_flagged(
    meaning_db: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _engine(meaning_db, embed_server, monkeypatch)
    found = engine.search(QUERY, search_type="hybrid")
    assert found.search_type == "hybrid" and found.hits[0].source == "docs/doc0.md"
    assert found.hits[0].ranks == {"bm25": 1, "vector": 1}  # first by both legs, yet one term in six
    assert found.hits[0].strength is not None and found.hits[0].strength < MATCH_FLOOR  # terms: as before
    assert not found.no_good_match and "not found" not in (found.note or "")
    # the same table searched by vector alone already called it strong (issue 39)
    assert not engine.search(QUERY, search_type="vector").no_good_match


def test_a_hybrid_search_of_nothing_close_is_still_flagged(
    meaning_db: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _engine(meaning_db, embed_server, monkeypatch).search(
        "kubernetes autoscaling cookies", search_type="hybrid"
    )
    assert found.hits and found.no_good_match and "not found" in (found.note or "")
    assert "none is close in meaning" in (found.note or "")


def test_text_search_on_the_same_table_is_unchanged(
    meaning_db: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _engine(meaning_db, embed_server, monkeypatch).search(QUERY, search_type="text")
    assert found.no_good_match  # by words alone, no hit holds half the query's terms


# -- item 7: status and the model's weights on this machine --


def _tiny(tmp_path: Path) -> Path:
    pytest.importorskip("fastembed", reason="local embeddings need the local extra")
    pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")
    from tests.conftest import SAMPLE_DOCS
    from tests.support import tiny_onnx

    words = [p.read_text("utf-8", errors="replace") for p in SAMPLE_DOCS.rglob("*") if p.is_file()]
    return tiny_onnx.build(tmp_path / "model", words)


def _keyless(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "EMBEDDING_"))]:
        monkeypatch.delenv(name)


def test_status_is_not_available_when_the_tables_model_folder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import SAMPLE_DOCS

    model = _tiny(tmp_path)
    _keyless(monkeypatch)
    db = tmp_path / "db"
    assert cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{model}").exit_code == 0
    monkeypatch.setattr(local_embed, "_shared", {})
    assert engine_for(db, monkeypatch, keyless=True).status().embeddings.available  # the folder is there
    shutil.rmtree(model)
    status = engine_for(db, monkeypatch, keyless=True).status()
    assert status.embeddings.available is False
    line = status.tables[0].search or ""
    assert line.startswith("text only:") and "not there" in line and "--embed-model" in line
    reply = json.loads(cli("status", "--db", db, "--json").stdout)
    assert reply["embeddings"]["available"] is False


def test_status_says_a_registry_model_is_not_on_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table made with a registry model that fastembed's cache does not hold: nothing is loaded or
    downloaded, the line says the first search downloads it, and `available` is false."""
    pytest.importorskip("fastembed", reason="local embeddings need the local extra")
    db = _build(tmp_path / "db", local_embed.DEFAULT_MODEL)
    _keyless(monkeypatch)
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(local_embed, "_shared", {})
    status = engine_for(db, monkeypatch, keyless=True).status()
    assert status.tables[0].embedding_model == local_embed.DEFAULT_MODEL
    assert status.embeddings.available is False
    line = status.tables[0].search or ""
    assert line.startswith("hybrid") and "not on this machine" in line and "downloads it" in line
    assert "works," not in line
    assert local_embed._shared == {}  # no model loaded
