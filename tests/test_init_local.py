"""`lancelot init` offers local embeddings next to a key (issue 17): the choice through the real
questionary prompts (prompt_toolkit pipe input, as tests/test_init.py drives them), a tiny ONNX
encoder built here as the local model (tests/support/tiny_onnx.py), the settings it stores driving
`lancelot index --embed`, the flags without a terminal, and the message when the extra is missing.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")

from typer.testing import CliRunner

from lancelot_cli import keyfile
from lancelot_cli.cli.app import app
from lancelot_cli.install_hint import install_command
from lancelot_cli.local_embed import DEFAULT_MODEL
from tests.conftest import sample_words
from tests.support import tiny_onnx
from tests.test_init import CLEAR, DOWN, ENTER, KEY, cli, files_in, stored_settings, wizard

CHOICE = "How should documents be embedded"
WITH_FASTEMBED = pytest.mark.skipif(
    importlib.util.find_spec("fastembed") is None,
    reason="loading a local model needs the local extra: pip install -e '.[local]'",
)


# Not conftest's ``tiny_model`` (32-d, like the stand-in API's vectors): 24-d, so the stored
# EMBEDDING_DIMENSIONS "24" shows the wizard measured the model rather than assumed a size. Resolved:
# the wizard stores the model folder's absolute path.
@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_onnx.build(tmp_path_factory.mktemp("tiny") / "model", sample_words(), hidden=24).resolve()


def write_previous(config: Path, **settings: str) -> None:
    (config / "settings.json").write_text(json.dumps(settings))


@WITH_FASTEMBED
def test_choosing_a_local_model_stores_it_and_index_embed_uses_it(tmp_path, docs, model, isolated_env, capsys):
    db = tmp_path / "db"
    asked: list[str] = []
    keys = (
        f"{CLEAR}{db}{ENTER}"  # database folder: a new one
        + DOWN
        + ENTER  # it does not exist: create it empty
        + ENTER  # table: documents
        + DOWN
        + ENTER  # embedded on this machine
        + f"{model}{ENTER}"
    )  # the model folder
    plan = wizard(keys, cwd=tmp_path, asked=asked)
    err = capsys.readouterr().err
    assert plan.key_action == "keep" and plan.api_key is None
    assert stored_settings(isolated_env) == {
        "LANCEDB_PATH": str(db),
        "LANCEDB_TABLE": "documents",
        "EMBEDDING_MODEL": f"local:{model}",
        "EMBEDDING_DIMENSIONS": "24",
    }
    assert any(CHOICE in message for message in asked)
    assert not any("OpenAI" in message for message in asked)  # no key question
    assert "The local model works: 24-d vectors" in err

    # The stored settings alone make `lancelot index --embed` use the local model (no key anywhere).
    result = CliRunner().invoke(app, ["index", str(docs), "--embed", "--json"], prog_name="lancelot")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["embeddingModel"] == f"local:{model}" and summary["embedded"] > 0


@WITH_FASTEMBED
def test_a_rerun_offers_the_local_model_again_and_text_only_drops_it(tmp_path, sample_db, model, isolated_env, capsys):
    previous = {
        "LANCEDB_PATH": str(sample_db),
        "LANCEDB_TABLE": "documents",
        "EMBEDDING_MODEL": f"local:{model}",
        "EMBEDDING_DIMENSIONS": "24",
    }
    write_previous(isolated_env, **previous)
    keyfile.write_key(isolated_env, KEY)
    key_file = (isolated_env / keyfile.KEY_FILE).read_bytes()

    plan = wizard(ENTER * 4, cwd=tmp_path)  # folder, table, "on this machine" (the default now), the model
    assert stored_settings(isolated_env) == previous and plan.key_action == "keep"

    # one down from "on this machine": text only; then "remove the stored key?": Enter, no
    plan = wizard(ENTER * 2 + DOWN + ENTER + ENTER, cwd=tmp_path)
    err = capsys.readouterr().err
    assert stored_settings(isolated_env) == {"LANCEDB_PATH": str(sample_db), "LANCEDB_TABLE": "documents"}
    assert "Text search only" in err
    assert (isolated_env / keyfile.KEY_FILE).read_bytes() == key_file  # the stored key is left as it was
    assert "stays; `lancelot init --forget` removes it" in err


@WITH_FASTEMBED
def test_a_folder_without_a_model_is_refused_and_the_question_stays(tmp_path, sample_db, model, isolated_env):
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    keys = (
        f"{CLEAR}{sample_db}{ENTER}"
        + ENTER
        + DOWN
        + ENTER
        + f"{empty}{ENTER}"  # refused by the validator: no model.onnx
        + f"{CLEAR}{model}{ENTER}"
    )
    wizard(keys, cwd=tmp_path)
    assert stored_settings(isolated_env)["EMBEDDING_MODEL"] == f"local:{model}"


def test_without_the_extra_init_says_how_to_install_and_keeps_the_choice(
    tmp_path, sample_db, isolated_env, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "fastembed", None)  # as if the local extra were not installed
    plan = wizard(f"{CLEAR}{sample_db}{ENTER}" + ENTER + DOWN + ENTER + ENTER, cwd=tmp_path)  # the default model
    err = capsys.readouterr().err
    assert plan.key_action == "keep"
    assert stored_settings(isolated_env)["EMBEDDING_MODEL"] == DEFAULT_MODEL
    assert f"not installed here: {install_command('local')}" in err and "text only" in err


@WITH_FASTEMBED
def test_flags_name_a_local_model_without_a_terminal(tmp_path, sample_db, model, isolated_env):
    result = cli("--db", sample_db, "--embedding-model", f"local:{model}")  # no key flag needed
    assert result.exit_code == 0, result.stderr
    assert stored_settings(isolated_env) == {
        "LANCEDB_PATH": str(sample_db),
        "LANCEDB_TABLE": "documents",
        "EMBEDDING_MODEL": f"local:{model}",
        "EMBEDDING_DIMENSIONS": "24",
    }


@pytest.mark.parametrize("case", ["no model in the folder", "a key as well"])
def test_bad_local_flags_are_one_line_and_store_nothing(case, tmp_path, sample_db, model, isolated_env):
    args: list[Any] = ["--db", sample_db]
    if case == "a key as well":
        result = cli(*args, "--api-key-stdin", "--embedding-model", f"local:{model}", input=f"{KEY}\n")
        expected = "the key would not be used"
    else:
        result = cli(*args, "--embedding-model", f"local:{tmp_path}")
        expected = "has no model.onnx"
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and expected in line and "Traceback" not in line
    assert files_in(isolated_env) == {}


# -- issue 39 #7: indexed first, then a local model chosen: the vectors are offered at the end ----------


def _indexed_then_local(tmp_path: Path, docs: Path, model: Path, answer: str, asked: list[str]) -> Path:
    keys = (
        ENTER  # database folder: the offered ./db
        + ENTER  # it does not exist: index a folder into it now
        + f"{docs}{ENTER}"  # the documents (no local model on this machine yet: text only)
        + ENTER  # default table: the one just written
        + DOWN
        + ENTER  # embedded on this machine
        + f"{model}{ENTER}"  # the model folder
        + answer  # embed the table's chunks now?
    )
    wizard(keys, cwd=tmp_path, asked=asked)
    return tmp_path / "db"


@WITH_FASTEMBED
def test_a_local_model_chosen_after_indexing_is_offered_and_makes_the_vectors(
    tmp_path, docs, model, isolated_env, monkeypatch, capsys
):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))  # the first run finds no model
    asked: list[str] = []
    db = _indexed_then_local(tmp_path, docs, model, ENTER, asked)
    assert "no vectors. Embed them now with" in asked[-1] and f"local:{model}" in asked[-1]
    result = CliRunner().invoke(app, ["status", "--json"], prog_name="lancelot", env={"LANCELOT_WARM": "0"})
    assert result.exit_code == 0, result.stderr
    table = json.loads(result.stdout)["tables"][0]
    assert table["name"] == "documents" and table["embeddingModel"] == f"local:{model}"
    assert all(v["missing"] == 0 for v in table["vectors"]) and table["vectors"]
    assert str(db) in capsys.readouterr().out  # the client configurations still follow


@WITH_FASTEMBED
def test_declining_the_vectors_says_the_command_that_makes_them(
    tmp_path, docs, model, isolated_env, monkeypatch, capsys
):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))
    _indexed_then_local(tmp_path, docs, model, "n", [])
    err = capsys.readouterr().err
    assert f"make the vectors later with `lancelot index {docs} --embed`" in err


def test_text_search_only_after_indexing_offers_no_vectors(tmp_path, docs, isolated_env, monkeypatch):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))
    asked: list[str] = []
    keys = ENTER + ENTER + f"{docs}{ENTER}" + ENTER + DOWN + DOWN + ENTER  # ... "not at all: text search only"
    wizard(keys, cwd=tmp_path, asked=asked)
    assert not any("Embed them now" in message for message in asked)
