"""Where the program waits (issue 24): a local model that loads says so (a spinner on a terminal,
the progress line while indexing), a download fails in seconds when the hub cannot be reached
(one connection with a short timeout, or HF_HUB_OFFLINE), init lists tables from the folder, and
`index --help` states the rule for when --embed uses a local model."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pty
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli import hub, local_embed
from lancelot_cli.cli.app import app
from lancelot_cli.cli.init.flow import list_tables
from lancelot_cli.errors import EmbeddingError
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.servers import closed_url
from tests.support.terminal import read_all

WITH_FASTEMBED = pytest.mark.skipif(
    importlib.util.find_spec("fastembed") is None, reason="loading a local model needs the local extra"
)
REGISTRY_MODEL = "local:sentence-transformers/all-MiniLM-L6-v2"


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture
def no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fastembed's cache is an empty folder: every registry model would be downloaded."""
    cache = tmp_path / "fastembed-cache"
    cache.mkdir()
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HF_ENDPOINT", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    return cache


def test_the_hub_check_answers_for_offline_closed_and_proxied(no_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_url(""))
    assert "cannot be reached" in (hub.unreachable() or "")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub.unreachable() == "HF_HUB_OFFLINE is set, so nothing is downloaded"
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # a proxy decides: no guess
    assert hub.unreachable() is None


@WITH_FASTEMBED
def test_a_download_without_a_hub_fails_at_once_and_says_why(no_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_url(""))
    said: list[str] = []

    @contextlib.contextmanager
    def record(message: str) -> Iterator[None]:
        said.append(message)
        yield

    with local_embed.announced_to(record), pytest.raises(EmbeddingError, match="cannot be reached"):
        local_embed.LocalEmbedder(REGISTRY_MODEL).load()
    assert said == ["Downloading and loading the local model sentence-transformers/all-MiniLM-L6-v2…"]


@WITH_FASTEMBED
def test_index_with_an_unreachable_hub_is_one_line(
    no_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = cli("index", SAMPLE_DOCS, tmp_path / "db", "--embed-model", REGISTRY_MODEL)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        (
            "lancelot: error: cannot download sentence-transformers/all-MiniLM-L6-v2: HF_HUB_OFFLINE is set, so "
            "nothing is downloaded; connect once to download it (it runs offline after that), or pass a model "
            "folder as local:/path/to/folder"
        )
    ]
    assert not (tmp_path / "db").exists() or not any((tmp_path / "db").iterdir())


@WITH_FASTEMBED
def test_loading_a_model_is_announced(tiny_model: Path) -> None:
    said: list[str] = []

    @contextlib.contextmanager
    def record(message: str) -> Iterator[None]:
        said.append(message)
        yield

    embedder = local_embed.LocalEmbedder(f"local:{tiny_model}")
    with local_embed.announced_to(record):
        embedder.load()
        embedder.load()  # loaded once: said once
    assert said == [f"Loading the local model {tiny_model.resolve()}…"]
    local_embed.LocalEmbedder(f"local:{tiny_model}").load()  # outside: nobody is told (a server)
    assert len(said) == 1


@WITH_FASTEMBED
@pytest.mark.slow
def test_a_terminal_search_that_loads_the_model_shows_a_spinner(tiny_model: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{tiny_model}").exit_code == 0
    leader, follower = pty.openpty()
    env = subprocess_env(TERM="xterm-256color", COLUMNS="120", LANCELOT_WARM="0")
    proc = subprocess.Popen(
        [*lancelot_command(), "search", "refund", "--db", str(db)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    out = read_all(leader).decode()
    assert proc.wait(timeout=60) == 0, out
    os.close(leader)
    assert f"Loading the local model {tiny_model.resolve()}" in out
    piped = subprocess.run(
        [*lancelot_command(), "search", "refund", "--db", str(db)], capture_output=True, text=True, env=env, timeout=60
    )
    assert piped.returncode == 0 and "Loading the local model" not in piped.stderr  # not a terminal: nothing


def test_init_lists_tables_from_the_folder(sample_db: Path, tmp_path: Path) -> None:
    assert list_tables(str(sample_db)) == ["documents"]
    (tmp_path / "notes.lance").mkdir()  # listed by name: no database is opened to ask
    assert list_tables(str(tmp_path)) == ["notes"]


def test_index_help_states_when_a_local_model_is_used() -> None:
    text = " ".join(cli("index", "--help").stdout.replace("│", " ").split())
    assert "A local model makes them when EMBEDDING_MODEL (or --embed-model) is local:NAME" in text
    assert "neither an OpenAI key nor OPENAI_BASE_URL is set: then the table's own local model" in text
