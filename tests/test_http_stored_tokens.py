"""Bearer tokens made by `lancelot init --http-token` and stored like the OpenAI key (issue 50 #1):
in the keychain or the encrypted file, read by `serve --http` when ``LANCELOT_HTTP_TOKENS`` is
unset, shown once by init, never again (not by `init --show`, `status`, the logs or an error).

The servers are real `lancelot serve --http` processes with the MCP SDK's own Streamable HTTP
client; init runs through Typer's CliRunner (flags) and the real questionary prompts (a pipe).
Attacks: the token in any output after the run that made it, a wrong passphrase (one line, no
token, no server without login), a stored token of another config folder, Ctrl-C at the question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring.backends.fail
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from lancelot_cli import credentials, http_tokens, keyfile
from lancelot_cli.cli.app import app
from lancelot_cli.cli.init import InitOptions, QuestionaryPrompter, execute
from lancelot_cli.server.transports.auth import Login
from tests.support.keyrings import MemoryKeyring
from tests.support.servers import Served, free_port
from tests.test_http import assert_error, assert_tool_reply, request, server_pool
from tests.test_http_login import assert_one_line_error, run_serve

ENTER, DOWN, CTRL_C = "\r", "\x1b[B", "\x03"
SHOWN = re.compile(r"^MCP_LANCELOT_TOKEN=([A-Za-z0-9_-]{43})$", re.MULTILINE)
ENV_TOKEN = "lt_from_the_environment_0123456789"


def init(*args: str | Path, **env: str) -> Any:
    return CliRunner().invoke(app, ["init", *map(str, args)], env=env or None, prog_name="lancelot")


def shown_token(stdout: str) -> str:
    """The one token init printed (exactly one ``MCP_LANCELOT_TOKEN=`` line)."""
    found = SHOWN.findall(stdout)
    assert len(found) == 1, stdout[-2000:]
    return str(found[0])


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} if folder.exists() else {}


@pytest.fixture
def no_keychain(use_keyring: Callable[[Any], Any]) -> None:
    use_keyring(keyring.backends.fail.Keyring())


def make_token(config: Path, db: Path) -> str:
    """`lancelot init --http-token` for the config folder ``config``; the token it showed."""
    done = init("--db", db, "--no-api-key", "--yes", "--http-token", LANCELOT_CONFIG_DIR=str(config))
    assert done.exit_code == 0, done.output
    return shown_token(done.stdout)


# -- init --------------------------------------------------------------------------------------------


def test_init_makes_a_strong_token_stores_it_encrypted_and_shows_it_once(
    isolated_env: Path, sample_db: Path, no_keychain: None
) -> None:
    done = init("--db", sample_db, "--no-api-key", "--yes", "--http-token")
    assert done.exit_code == 0, done.output
    token = shown_token(done.stdout)
    assert token not in done.stderr
    assert "Authorization: Bearer $MCP_LANCELOT_TOKEN" in done.stdout  # the printed configs carry the header
    assert "bearer_token_env_var" in done.stdout
    stored = http_tokens.find(isolated_env)
    assert stored is not None and stored.tokens == (token,) and stored.source == "file"
    assert token not in repr(stored)
    for name, data in files_in(isolated_env).items():  # encrypted: not in any file in plain text
        assert token.encode() not in data, name
    assert (isolated_env / keyfile.TOKENS_FILE).stat().st_mode & 0o777 == 0o600

    again = init("--db", sample_db, "--no-api-key", "--yes")  # a later run: the configs, never the token
    assert again.exit_code == 0 and token not in again.output
    assert "Over HTTP" in again.stdout and "MCP_LANCELOT_TOKEN=" not in again.stdout
    shown = init("--show")
    assert shown.exit_code == 0 and token not in shown.output
    # the row says a token is stored, and where (before: "(not set)", as if serve had no login)
    (row,) = [line for line in shown.stdout.splitlines() if line.startswith("LANCELOT_HTTP_TOKENS")]
    assert "(stored, hidden)" in row and keyfile.TOKENS_FILE in row
    status = CliRunner().invoke(app, ["status"], prog_name="lancelot")
    assert token not in status.output


def test_a_working_keychain_gets_the_token_and_no_file_is_written(
    isolated_env: Path, sample_db: Path, use_keyring: Callable[[Any], Any]
) -> None:
    backend = use_keyring(MemoryKeyring())
    token = shown_token(init("--db", sample_db, "--no-api-key", "--yes", "--http-token").stdout)
    assert backend.store[(credentials.KEYRING_SERVICE, http_tokens.KEYRING_USER)] == token
    assert not (isolated_env / keyfile.TOKENS_FILE).exists()
    assert credentials.find_openai_key(isolated_env, environ={}) is None  # not taken for the OpenAI key
    removed = init("--db", sample_db, "--no-api-key", "--yes", "--remove-http-token")
    assert removed.exit_code == 0 and "The stored HTTP token was removed." in removed.stderr
    assert backend.store == {} and not http_tokens.stored(isolated_env)


def test_a_new_token_replaces_the_old_and_the_key_file_keeps_working(
    isolated_env: Path, sample_db: Path, no_keychain: None
) -> None:
    keyfile.write_key(isolated_env, "sk-test-0123456789-abcd")
    first = shown_token(init("--db", sample_db, "--no-api-key", "--yes", "--http-token").stdout)
    second = shown_token(init("--db", sample_db, "--no-api-key", "--yes", "--http-token").stdout)
    assert first != second
    assert http_tokens.find(isolated_env).tokens == (second,)  # type: ignore[union-attr]
    credentials.forget_key(isolated_env)  # the key's file goes; the secret the token file needs stays
    assert keyfile.read_key(isolated_env, keyfile.TOKENS_FILE) == second


def test_conflicting_token_flags_are_one_line_errors(isolated_env: Path, sample_db: Path) -> None:
    for args, words in (
        (("--http-token", "--remove-http-token"), "cannot be used together"),
        (("--show", "--http-token"), "--show takes no"),
        (("--forget", "--remove-http-token"), "--forget takes no"),
    ):
        done = init("--db", sample_db, "--no-api-key", *args)
        assert done.exit_code != 0 and len(done.stderr.splitlines()) == 1, done.output
        assert words in done.stderr and "--http-token" in done.stderr
    assert files_in(isolated_env) == {}


def wizard(keys: str, asked: list[str], **options: Any) -> Any:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        pipe.close()
        prompter = QuestionaryPrompter(input=pipe, output=DummyOutput())

        class Recording:
            def __getattr__(self, kind: str) -> Any:
                def record(message: str, *args: Any, **kwargs: Any) -> Any:
                    asked.append(message)
                    return getattr(prompter, kind)(message, *args, **kwargs)

                return record

        return execute(InitOptions(**options), Recording(), interactive=True)  # type: ignore[arg-type]


def test_the_question_on_an_object_store_makes_a_token(
    isolated_env: Path, no_keychain: None, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []
    wizard(ENTER + "y", asked, db="s3://team-bucket/db", no_api_key=True)  # table: the default; a token: yes
    out, err = capsys.readouterr()
    assert "A bearer token for `lancelot serve --http`?" in asked[-1]
    token = shown_token(out)
    assert http_tokens.find(isolated_env).tokens == (token,)  # type: ignore[union-attr]
    assert token not in err


def test_a_stored_token_is_kept_renewed_or_removed_at_the_terminal(
    isolated_env: Path, sample_db: Path, no_keychain: None, capsys: pytest.CaptureFixture[str]
) -> None:
    old = make_token(isolated_env, sample_db)
    asked: list[str] = []
    wizard(ENTER + ENTER, asked, db=str(sample_db), no_api_key=True)  # table, then "Keep the stored token"
    out, _ = capsys.readouterr()
    assert "HTTP login token" in asked[-1] and "MCP_LANCELOT_TOKEN=" not in out and old not in out
    http_tokens._cache.clear()  # this process read it once; a new server process reads it afresh
    assert http_tokens.find(isolated_env).tokens == (old,)  # type: ignore[union-attr]
    wizard(ENTER + DOWN + ENTER, asked, db=str(sample_db), no_api_key=True)  # "Make a new one"
    new = shown_token(capsys.readouterr().out)
    assert new != old and http_tokens.find(isolated_env).tokens == (new,)  # type: ignore[union-attr]
    wizard(ENTER + DOWN + DOWN + ENTER, asked, db=str(sample_db), no_api_key=True)  # "Remove it"
    assert not http_tokens.stored(isolated_env)


def test_ctrl_c_at_the_token_question_changes_nothing(isolated_env: Path, sample_db: Path, no_keychain: None) -> None:
    make_token(isolated_env, sample_db)
    before = files_in(isolated_env)
    asked: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        wizard(ENTER + DOWN + CTRL_C, asked, db=str(sample_db), no_api_key=True)  # on "Make a new one"
    assert "HTTP login token" in asked[-1]
    assert files_in(isolated_env) == before
    with pytest.raises(KeyboardInterrupt):
        wizard(CTRL_C, asked, db="s3://team-bucket/db", no_api_key=True, table="other")
    assert files_in(isolated_env) == before


# -- the login reads them -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_environment_wins_over_the_stored_token(
    isolated_env: Path, sample_db: Path, no_keychain: None
) -> None:
    stored = make_token(isolated_env, sample_db)
    from_env = Login.from_settings((ENV_TOKEN,), config_dir=isolated_env)
    assert from_env is not None
    assert await from_env.refusal(f"Bearer {ENV_TOKEN}") is None
    assert await from_env.refusal(f"Bearer {stored}") is not None
    from_store = Login.from_settings((), config_dir=isolated_env)
    assert from_store is not None and await from_store.refusal(f"Bearer {stored}") is None
    assert await from_store.refusal(f"Bearer {stored[:-1]}x") is not None
    assert Login.from_settings((), config_dir=isolated_env / "elsewhere") is None  # another folder's: none


# -- real servers -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spawn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    with server_pool(tmp_path_factory, "stored-token-server") as start:

        def _spawn(workdir: Path, db: Path, *args: str, **env: str) -> Served:
            port = free_port()
            return start(["--http", str(port), *args], port, db, workdir, **env)

        yield _spawn


@pytest.mark.slow
@pytest.mark.anyio
async def test_serve_http_takes_the_stored_token_and_never_shows_it(
    tmp_path: Path, sample_db: Path, no_keychain: None, spawn: Callable[..., Served]
) -> None:
    token = make_token(tmp_path / "config", sample_db)
    served = spawn(tmp_path, sample_db, LANCELOT_LOG_LEVEL="debug")
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(served.url, http_client=http)) as client,
    ):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        search = await client.call_tool("lancedb_search", {"query": "refund policy", "limit": 3})
    assert "lancedb_search" in tools and not search.is_error
    assert_error(request(served.port), 401)  # the stored token is the login
    assert_error(request(served.port, headers={"Authorization": f"Bearer {token[:-1]}A"}), 401)
    assert_tool_reply(request(served.port, headers={"Authorization": f"Bearer {token}"}))
    assert "DEBUG" in served.stderr
    assert token not in served.stderr and token[5:25] not in served.stderr and served.stdout == b""


@pytest.mark.slow
def test_the_environment_token_wins_in_a_server(
    tmp_path: Path, sample_db: Path, no_keychain: None, spawn: Callable[..., Served]
) -> None:
    stored = make_token(tmp_path / "config", sample_db)
    served = spawn(tmp_path, sample_db, LANCELOT_HTTP_TOKENS=ENV_TOKEN)
    assert_error(request(served.port, headers={"Authorization": f"Bearer {stored}"}), 401)
    assert_tool_reply(request(served.port, headers={"Authorization": f"Bearer {ENV_TOKEN}"}))


@pytest.mark.slow
def test_a_stored_token_counts_as_login_beyond_loopback(
    tmp_path: Path, sample_db: Path, no_keychain: None, spawn: Callable[..., Served]
) -> None:
    token = make_token(tmp_path / "config", sample_db)
    served = spawn(tmp_path, sample_db, "--host", "0.0.0.0")
    assert_error(request(served.port), 401)
    assert_tool_reply(request(served.port, headers={"Authorization": f"Bearer {token}"}))


@pytest.mark.slow
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_wrong_passphrase_is_one_line_and_no_server(
    tmp_path: Path, sample_db: Path, no_keychain: None, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("LANCELOT_KEY_PASSPHRASE", "the-right-passphrase")
    token = make_token(tmp_path / "config", sample_db)
    done = run_serve(
        ["--http", str(free_port()), "--host", host],
        tmp_path,
        sample_db,
        LANCELOT_KEY_PASSPHRASE="a-wrong-passphrase",
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    line = assert_one_line_error(done, "cannot be decrypted", "LANCELOT_KEY_PASSPHRASE", "init --http-token")
    assert token not in line and "the-right-passphrase" not in line and "Traceback" not in done.stderr


# -- /metrics: the table version served ----------------------------------------------------------------


def gauge(text: str) -> dict[str, float]:
    return {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line.startswith("lancelot_table_version{")
    }


@pytest.mark.slow
def test_metrics_show_the_pinned_version_before_any_read(
    tmp_path: Path, sample_db: Path, spawn: Callable[..., Served]
) -> None:
    served = spawn(tmp_path, sample_db, LANCELOT_METRICS="1", LANCELOT_TABLE_VERSION="1")
    page = request(served.port, "GET", "/metrics").body.decode()
    assert "# TYPE lancelot_table_version gauge" in page
    assert gauge(page) == {'lancelot_table_version{table="documents"}': 1.0}


@pytest.mark.slow
def test_metrics_show_the_version_last_read(tmp_path: Path, sample_db: Path, spawn: Callable[..., Served]) -> None:
    import lancedb

    latest = lancedb.connect(str(sample_db)).open_table("documents").version
    served = spawn(tmp_path, sample_db, LANCELOT_METRICS="1")
    assert gauge(request(served.port, "GET", "/metrics").body.decode()) == {}  # nothing read yet, nothing asked
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "lancedb_search", "arguments": {"query": "refund policy"}},
        }
    ).encode()
    assert_tool_reply(request(served.port, body=body))
    assert gauge(request(served.port, "GET", "/metrics").body.decode()) == {
        'lancelot_table_version{table="documents"}': float(latest)
    }
