"""Embeddings calls: what is retried and for how long (issue 12), and what a run of vector searches
builds once (the key file's scrypt derivation and the HTTP client, issue 13).

The endpoint is tests/support/embed_server.py on loopback, or a loopback port nobody listens on.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from lancelot_cli import credentials, keyfile, providers
from lancelot_cli.engine import Engine
from lancelot_cli.errors import EmbeddingError
from lancelot_cli.providers import OpenAIEmbedder
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.clock import client_retries
from tests.support.clock import install as install_clock
from tests.support.embed_server import MODEL, EmbedServer


@pytest.fixture
def closed_port() -> int:
    """A loopback port that refuses connections (bound, then closed: nobody listens)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def fresh_clients() -> Iterator[None]:
    providers._clients.clear()
    credentials._file_cache.clear()
    yield
    providers._clients.clear()
    credentials._file_cache.clear()


def embedder(url: str, **options) -> OpenAIEmbedder:
    return OpenAIEmbedder("sk-test", MODEL, url, timeout=10.0, **options)


def test_refused_connection_fails_at_once(closed_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = install_clock(monkeypatch)
    with pytest.raises(EmbeddingError, match="cannot reach"):
        embedder(f"http://127.0.0.1:{closed_port}/v1", max_retries=6).embed(["refund"])
    assert clock.slept == [] and client_retries() == {0}  # was 24 s of back-off with six retries


@pytest.mark.parametrize(("status", "words"), [(401, "rejected the API key"), (403, "403"), (400, "HTTP 400")])
def test_client_errors_are_not_retried(embed_server: EmbedServer, status: int, words: str) -> None:
    embed_server.fail_next = [status] * 5
    with pytest.raises(EmbeddingError, match=words):
        embedder(embed_server.url, max_retries=6).embed(["refund"])
    assert embed_server.requests == 1


def test_wrong_key_and_unknown_model_are_not_retried(embed_server: EmbedServer) -> None:
    embed_server.api_key = "sk-right"
    with pytest.raises(EmbeddingError, match="401"):
        embedder(embed_server.url, max_retries=6).embed(["refund"])
    assert embed_server.requests == 1
    embed_server.api_key = None
    with pytest.raises(EmbeddingError, match="404"):
        OpenAIEmbedder("sk-test", "no-such-model", embed_server.url, max_retries=6).embed(["refund"])
    assert embed_server.requests == 2


@pytest.mark.parametrize("status", [503, 429, 500])
def test_recoverable_answers_are_retried_then_succeed(
    embed_server: EmbedServer, status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = install_clock(monkeypatch)
    embed_server.fail_next = [status]
    vectors = embedder(embed_server.url, max_retries=2).embed(["refund", "policy"])
    assert len(vectors) == 2 and embed_server.requests == 2
    assert len(clock.slept) == 1 and 0 < clock.slept[0] <= providers.RETRY_DELAY  # one back-off


def test_retries_stop_at_the_count_and_at_the_budget(
    embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = install_clock(monkeypatch)
    embed_server.fail_next = [503] * 10
    with pytest.raises(EmbeddingError, match="HTTP 503"):
        embedder(embed_server.url, max_retries=2).embed(["refund"])
    assert embed_server.requests == 3 and len(clock.slept) == 2
    embed_server.reset()
    clock = install_clock(monkeypatch)
    embed_server.fail_next = [503] * 10
    with pytest.raises(EmbeddingError, match="HTTP 503"):
        embedder(embed_server.url, max_retries=8, retry_budget=1.0).embed(["refund"])
    # Back-off 0.5 s then 1 s (less up to a quarter): the second wait would end past the 1 s budget.
    assert embed_server.requests == 2 and len(clock.slept) == 1 and clock.now <= 1.0, clock.slept


@pytest.mark.slow
def test_index_embed_against_a_refused_port_says_so_at_once(tmp_path: Path, closed_port: int) -> None:
    proc = subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(tmp_path / "db"), "--embed"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=subprocess_env(
            OPENAI_API_KEY="sk-test", EMBEDDING_MODEL=MODEL, OPENAI_BASE_URL=f"http://127.0.0.1:{closed_port}/v1"
        ),
    )
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if "cannot reach" in line]
    assert len(errors) == 1 and "Traceback" not in proc.stderr


def test_index_embed_against_a_refused_port_waits_for_nothing(
    tmp_path: Path, closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run in-process, its waits counted: no back-off at all (it was 24 s)."""
    from typer.testing import CliRunner

    from lancelot_cli.cli.app import app

    for name, value in {
        "OPENAI_API_KEY": "sk-test",
        "EMBEDDING_MODEL": MODEL,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port}/v1",
    }.items():
        monkeypatch.setenv(name, value)
    clock = install_clock(monkeypatch)
    result = CliRunner().invoke(app, ["index", str(SAMPLE_DOCS), str(tmp_path / "db"), "--embed"])
    assert result.exit_code != 0
    errors = [line for line in result.stderr.splitlines() if "cannot reach" in line]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert clock.slept == [] and client_retries() == {0}


def test_vector_searches_derive_the_key_and_build_the_client_once(
    monkeypatch, vector_db: Path, embed_server: EmbedServer, isolated_env: Path
) -> None:
    """The key from the encrypted key file (no keychain here): one scrypt derivation and one
    ``openai.OpenAI`` for many searches; a new key file is read again."""
    derivations = []
    real_fernet = keyfile._fernet
    monkeypatch.setattr(keyfile, "_fernet", lambda *a: derivations.append(1) or real_fernet(*a))
    clients = []
    real_init = openai.OpenAI.__init__

    def counting_init(self, *args, **kwargs):
        clients.append(kwargs.get("api_key"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(openai.OpenAI, "__init__", counting_init)
    monkeypatch.setenv("LANCEDB_PATH", str(vector_db))
    monkeypatch.setenv("OPENAI_BASE_URL", embed_server.url)
    monkeypatch.setenv("EMBEDDING_MODEL", MODEL)
    assert credentials.store_key(isolated_env, "sk-first").source == "file"
    derivations.clear()  # storing derives too

    engine = Engine(load())
    replies = [engine.search(query, search_type="hybrid") for query in ("refund policy", "returns", "warranty")]
    replies += [Engine(load()).search("refund policy", search_type="vector") for _ in range(2)]
    assert embed_server.requests == 5
    assert len(derivations) == 1 and clients == ["sk-first"]

    credentials.store_key(isolated_env, "sk-second")  # `lancelot init` again, e.g. from another shell
    derivations.clear()
    Engine(load()).search("refund policy", search_type="vector")
    Engine(load()).search("returns", search_type="vector")
    assert len(derivations) == 1 and clients == ["sk-first", "sk-second"]
