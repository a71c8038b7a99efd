"""`lancelot init` with a local model and no model hub (issue 45 item 5): embedding now fails in one
line with what to do, and the wizard goes on (the settings stay saved, the client configurations
are printed); the "Embed them now?" question says a registry model not on this machine is
downloaded first and defaults to No; and `index --embed` does not tell someone who has the local
extra to install it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.install_hint import install_command
from tests.test_init import CLEAR, DOWN, ENTER, stored_settings, wizard

WITH_FASTEMBED = pytest.mark.skipif(
    importlib.util.find_spec("fastembed") is None,
    reason="the local extra is installed in these tests: pip install -e '.[local]'",
)
REGISTRY_MODEL = "all-MiniLM-L6-v2"  # a fastembed registry name: downloaded on first use


@pytest.fixture
def no_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No model in fastembed's cache and no download possible."""
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("lancelot_cli.local_embed._shared", {})


def _indexed_then_registry_model(tmp_path: Path, docs: Path, answer: str, asked: list[str]) -> None:
    keys = (
        ENTER  # database folder: the offered ./db
        + ENTER  # it does not exist: index a folder into it now
        + f"{docs}{ENTER}"  # the documents (no local model on this machine: text only)
        + ENTER  # default table: the one just written
        + DOWN
        + ENTER  # embedded on this machine
        + f"{REGISTRY_MODEL}{ENTER}"  # a registry model, not downloaded
        + answer  # embed the table's chunks now?
    )
    wizard(keys, cwd=tmp_path, asked=asked)


@WITH_FASTEMBED
def test_embedding_now_without_the_hub_says_what_to_do_and_goes_on(tmp_path, docs, isolated_env, no_hub, capsys):
    asked: list[str] = []
    _indexed_then_registry_model(tmp_path, docs, "y", asked)  # no exception: init goes on
    out, err = capsys.readouterr()
    assert stored_settings(isolated_env)["EMBEDDING_MODEL"] == f"local:{REGISTRY_MODEL}"  # saved
    assert "claude mcp add" in out and str(tmp_path / "db") in out  # the client configurations
    failed = [line for line in err.splitlines() if "cannot download" in line]
    assert len(failed) == 1, err
    assert "HF_HUB_OFFLINE" in failed[0] and "--embed-model local:/path/to/folder" in failed[0]
    assert "docs/troubleshooting.md" in failed[0]
    assert "Traceback" not in err


@WITH_FASTEMBED
def test_a_model_to_download_is_said_and_the_default_is_no(tmp_path, docs, isolated_env, no_hub, capsys):
    asked: list[str] = []
    _indexed_then_registry_model(tmp_path, docs, ENTER, asked)  # Enter: the default
    question = asked[-1]
    assert "Embed them now" in question and "needs the network" in question
    out, err = capsys.readouterr()
    assert "make the vectors later with" in err and "cannot download" not in err  # No: nothing tried
    assert "claude mcp add" in out


@WITH_FASTEMBED
def test_index_embed_without_a_key_does_not_say_to_install_the_installed_extra(docs, tmp_path, isolated_env, no_hub):
    result = CliRunner().invoke(app, ["index", str(docs), str(tmp_path / "db"), "--embed"], prog_name="lancelot")
    assert result.exit_code == 1, result.stderr
    assert "--embed needs an OpenAI API key" in result.stderr
    assert install_command("local") not in result.stderr and "[local]" not in result.stderr
    assert "local extra is installed" in result.stderr


@WITH_FASTEMBED
def test_no_key_at_init_does_not_say_to_install_the_installed_extra(tmp_path, sample_db, isolated_env, no_hub, capsys):
    asked: list[str] = []
    # the database, its table, "with an OpenAI key", then Enter at the key: text search for now
    wizard(f"{CLEAR}{sample_db}{ENTER}{ENTER}{ENTER}{ENTER}", cwd=tmp_path, asked=asked)
    assert "OpenAI API key" in asked[-1]
    err = capsys.readouterr().err
    assert "No key: text search works now" in err
    assert "[local]" not in err and "--embed-model local:all-MiniLM-L6-v2" in err
