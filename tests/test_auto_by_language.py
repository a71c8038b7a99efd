"""`auto` with an English-only local model searches by text when the query is not English (issue 51).

On FastAPI's German, French, Spanish and Korean docs all-MiniLM-L6-v2 hybrid scored below text
search in every language (tests/benchmarks/README.md, "Local models from PyPI"); Chinese, Japanese
and Korean queries already went by text. Real tables made with a tiny ONNX encoder, offline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastembed", reason="local embeddings need the local extra: pip install -e '.[local]'")
pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")

from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from tests.support import tiny_onnx
from tests.support.engines import engine_for

GERMAN = {
    "upload.md": "# Dateien hochladen\n\nDie Dateien werden mit einem Formular hochgeladen und gespeichert.\n",
    "login.md": "# Anmeldung\n\nDie Anmeldung erfolgt mit einem Passwort, das nicht im Klartext gespeichert wird.\n",
    "cache.md": "# Zwischenspeicher\n\nDer Zwischenspeicher wird geleert, wenn sich die Konfiguration ändert.\n",
}
ENGLISH = {
    "upload.md": "# Uploading files\n\nFiles are uploaded with a form and stored on the server.\n",
    "login.md": "# Signing in\n\nSigning in needs a password, which is never stored in plain text.\n",
    "cache.md": "# The cache\n\nThe cache is cleared when the configuration changes.\n",
}


def _table(tmp_path: Path, name: str, pages: dict[str, str], model: Path) -> Path:
    src = tmp_path / name
    src.mkdir()
    for file, text in pages.items():
        (src / file).write_text(text, encoding="utf-8")
    db = tmp_path / f"{name}-db"
    done = CliRunner().invoke(
        app, ["index", str(src), str(db), "--embed-model", f"local:{model}"], prog_name="lancelot"
    )
    assert done.exit_code == 0, done.output
    return db


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    words = [text for pages in (GERMAN, ENGLISH) for text in pages.values()]
    return tiny_onnx.build(tmp_path_factory.mktemp("tiny") / "model", words)


def test_a_german_question_is_searched_by_text_and_an_english_one_hybrid(
    tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    german = engine_for(_table(tmp_path, "de", GERMAN, model), monkeypatch)
    english = engine_for(_table(tmp_path, "en", ENGLISH, model), monkeypatch)
    asked = german.search("Wie werden die Dateien hochgeladen?")
    assert asked.search_type == "text" and asked.hits[0].source == "upload.md"
    # the same table asked in English (English function words): the vectors may help, hybrid
    assert german.search("how are the files stored on the server").search_type == "hybrid"
    # no function words at all: the table's first language decides
    assert german.search("Zwischenspeicher Konfiguration").search_type == "text"
    assert english.search("how are files uploaded").search_type == "hybrid"
    assert english.search("cache configuration").search_type == "hybrid"
    # asked for by name, hybrid is what runs
    assert german.search("Wie werden die Dateien hochgeladen?", search_type="hybrid").search_type == "hybrid"
