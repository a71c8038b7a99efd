"""The API key and a URL's password never reach what Lancelot prints or returns, and the files that
hold settings are the user's alone (issue 37 #2).

An OpenAI-compatible endpoint behind a proxy answers errors with a body echoing the request's
headers, ``Authorization`` included (tests/support/embed_server.py, ``echo_headers``); the key is
the one `lancelot init` stored in the encrypted key file, and ``OPENAI_BASE_URL`` carries a user and
password. Every tool reply, every command's stdout and stderr are searched for the key, the
password and the Basic credentials httpx builds from the URL."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from lancelot_cli import credentials, redact
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.embed_server import MODEL, EmbedServer
from tests.support.growth import assert_linear

KEY = "sk-proj-" + "Zq7x" * 10
USER, PASSWORD = "lancelot", "hunter2-p4ssw0rd-xyz"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (KEY, PASSWORD, BASIC)


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret[:6]}… leaked in: {text[:2000]}"


@pytest.fixture
def leaky(embed_server: EmbedServer, vector_db: Path, isolated_env: Path) -> dict[str, str]:
    """Every embeddings call fails with a 400 that echoes the request headers; the key is in the
    encrypted file; the endpoint URL has a password. The environment a `lancelot` process gets."""
    assert credentials.store_key(isolated_env, KEY).source == "file"
    embed_server.echo_headers = True
    embed_server.fail_next = [400] * 1000
    url = embed_server.url.replace("http://", f"http://{USER}:{PASSWORD}@")
    return {"LANCEDB_PATH": str(vector_db), "OPENAI_BASE_URL": url, "EMBEDDING_MODEL": MODEL}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("lancedb_search", {"query": "refund policy"}),
        ("lancedb_search", {"query": "refund policy", "searchType": "vector"}),
        ("lancedb_search", {"query": "refund policy", "searchType": "hybrid"}),
        ("lancedb_query", {"question": "what is the refund policy?"}),
    ],
    ids=["auto", "vector", "hybrid", "query"],
)
async def test_tool_replies_carry_no_key_or_password(
    leaky: dict[str, str], embed_server: EmbedServer, tool: str, arguments: dict[str, Any]
) -> None:
    server = build_server(load(environ={**os.environ, **leaky}))
    async with Client(server) as client:
        result = await client.call_tool(tool, arguments)
    text = text_of(result) + json.dumps(result.structured_content or {})
    assert embed_server.requests > 0 and "HTTP 400" in text  # the failure was reported...
    assert "***" in text  # ...with what it echoed hidden, not dropped
    assert_no_secret(text)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["search", "refund policy"],
        ["search", "refund policy", "--json"],
        ["search", "refund policy", "--type", "vector"],
        ["query", "what is the refund policy?"],
        ["status"],
        ["status", "--json"],
        ["init", "--show"],
    ],
    ids=["search", "search-json", "search-vector", "query", "status", "status-json", "init-show"],
)
def test_commands_print_no_key_or_password(leaky: dict[str, str], args: list[str]) -> None:
    done = subprocess.run(
        [*lancelot_command(), *args], capture_output=True, text=True, timeout=120, env=subprocess_env(**leaky)
    )
    assert done.returncode == 0, done.stderr
    assert_no_secret(done.stdout + done.stderr)
    if args[0] in ("status", "init"):
        assert f"***@127.0.0.1:{leaky['OPENAI_BASE_URL'].rsplit(':', 1)[1]}" in done.stdout  # the endpoint is shown


@pytest.mark.slow
def test_index_embed_error_carries_no_key_or_password(leaky: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(tmp_path / "db"), "--embed"],
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(**leaky),
    )
    assert done.returncode != 0 and "400" in done.stderr, done.stderr
    assert_no_secret(done.stdout + done.stderr)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_index_before_init_leaves_a_private_config_folder_and_settings(tmp_path: Path) -> None:
    config = tmp_path / "new-config"
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(config))
    done = subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(tmp_path / "db")],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert config.is_dir() and _mode(config) == 0o700, oct(_mode(config))
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1"
    done = subprocess.run(
        [*lancelot_command(), "init", "--yes", "--db", str(tmp_path / "db"), "--no-api-key", "--base-url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert_no_secret(done.stdout + done.stderr)
    settings_file = config / "settings.json"
    assert json.loads(settings_file.read_text())["OPENAI_BASE_URL"] == url  # kept, for the program to use
    assert _mode(settings_file) == 0o600 and _mode(config) == 0o700


def test_an_open_config_folder_of_ours_is_closed_when_settings_are_written(tmp_path: Path) -> None:
    from lancelot_cli.settings import write_stored

    config = tmp_path / "config"
    config.mkdir(mode=0o755)
    config.chmod(0o755)
    (config / "settings.json.tmp").write_text("{}")
    (config / "settings.json.tmp").chmod(0o644)  # left by an older run: its mode must not carry over
    write_stored(config, {"LANCEDB_PATH": "/x"})
    assert _mode(config) == 0o700 and _mode(config / "settings.json") == 0o600


# -- redact itself ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("https://user:pw@host:8080/v1", "https://***@host:8080/v1"),
        ("https://token@host/v1", "https://***@host/v1"),
        ("s3://bucket/path?x=a@b", "s3://bucket/path?x=a@b"),  # an @ after the path is not user information
        ("http://host/v1", "http://host/v1"),
        ("error at http://u:p@h/x and http://v:q@i/y", "error at http://***@h/x and http://***@i/y"),
        ("{'authorization': 'Bearer abc.def-ghi'}", "{'authorization': 'Bearer ***'}"),
        ("authorization: basic dXNlcjpwdw==", "authorization: basic ***"),
        ("key sk-abcdefghijklmnopqrstuvwx rest", "key *** rest"),
        ("a risk-free sk-short word", "a risk-free sk-short word"),
    ],
)
def test_redact_hides_urls_credentials_and_tokens(raw: str, shown: str) -> None:
    assert redact.text(raw) == shown


def test_redact_hides_a_remembered_secret_of_any_shape() -> None:
    redact.remember("plain-secret-42")
    assert redact.text("echo: plain-secret-42!") == "echo: ***!"


@pytest.mark.parametrize(
    "make",
    [lambda n: "http://" + "a" * n, lambda n: "://" * n, lambda n: "Bearer " + " " * n, lambda n: "sk-" * n],
    ids=["long-userinfo", "many-schemes", "spaces-after-bearer", "many-sk"],
)
def test_redact_is_linear(make: Any) -> None:
    assert_linear(redact.text, make)
