"""Login for `serve --http` and the Lambda handler (issue 50 #1): static bearer tokens from
``LANCELOT_HTTP_TOKENS``, against real `lancelot serve --http` processes (the MCP SDK's own
Streamable HTTP client with an ``Authorization`` header, and raw ``http.client`` requests for the
attacks) and real API Gateway events through the Lambda handler.

Attacks: no token, a wrong one, one a character off either way, another scheme, the token in the
query string, a token of another server, bytes that are not ASCII, headers the login must not
loosen (Host, Origin); and the tokens never in the logs (at debug level) or in a reply. A
non-loopback bind without login does not start.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from lancelot_cli.server.transports import aws_lambda
from tests.conftest import lancelot_command, subprocess_env
from tests.support.lambda_events import make_event
from tests.support.servers import Served, free_port
from tests.test_http import Reply, assert_error, assert_tool_reply, request, server_pool

TOKEN = "lt_3f9c2a7e41b84d0c9e5a6b7c8d9e0f1a"
SECOND = "lt-second.token_~+/0123456789abcdef=="
OTHER_SERVER = "lt_ffffeeeeddddccccbbbbaaaa99998888"  # valid on another server only
TOKENS = f"{TOKEN}, {SECOND}"  # comma-separated, spaces around are not part of a token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def challenge(reply: Reply) -> str:
    value = reply.headers.get("WWW-Authenticate", "")
    assert value.startswith("Bearer "), reply.headers
    return value


# -- servers ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spawn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    with server_pool(tmp_path_factory, "login-server") as start:
        yield start


@pytest.fixture(scope="module")
def guarded(spawn: Callable[..., Served], sample_db: Path) -> Served:
    """Loopback, two tokens, logging at debug (everything that could leak a token is logged)."""
    port = free_port()
    return spawn(["--http", str(port)], port, sample_db, LANCELOT_HTTP_TOKENS=TOKENS, LANCELOT_LOG_LEVEL="debug")


@pytest.fixture(scope="module")
def other_server(spawn: Callable[..., Served], sample_db: Path) -> Served:
    port = free_port()
    return spawn(["--http", str(port)], port, sample_db, LANCELOT_HTTP_TOKENS=OTHER_SERVER)


@pytest.fixture(scope="module")
def open_bind_with_login(spawn: Callable[..., Served], sample_db: Path) -> Served:
    port = free_port()
    return spawn(["--http", str(port), "--host", "0.0.0.0"], port, sample_db, LANCELOT_HTTP_TOKENS=TOKEN)


# -- the SDK's own client ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_with_the_token_calls_the_tools(guarded: Served, mode: str) -> None:
    async with (
        create_mcp_http_client(headers=bearer(SECOND)) as http,
        Client(streamable_http_client(guarded.url, http_client=http), mode=mode) as client,
    ):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        search = await client.call_tool("lancedb_search", {"query": "refund policy", "limit": 3})
    assert "lancedb_search" in tools
    assert not search.is_error
    assert_error(request(guarded.port), 401)  # the header is what let the client in
    assert json.loads(search.content[0].text)["hits"][0]["source"] == "policies/refunds.md"  # type: ignore[union-attr]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("headers", [{}, bearer("lt_wrong_but_well_formed_0000000"), bearer(OTHER_SERVER)])
async def test_sdk_client_without_an_accepted_token_gets_nothing(guarded: Served, headers: dict[str, str]) -> None:
    with pytest.raises(Exception) as caught:
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(guarded.url, http_client=http)) as client,
        ):
            await client.list_tools()
    assert "401" in repr(caught.value) or "Unauthorized" in repr(caught.value), repr(caught.value)


# -- attacks, one raw request each ---------------------------------------------------------------------


@pytest.mark.slow
def test_no_token_is_401_with_a_bearer_challenge_and_no_error_code(guarded: Served) -> None:
    reply = request(guarded.port)
    assert_error(reply, 401)
    value = challenge(reply)
    assert 'realm="lancelot"' in value and "error=" not in value  # RFC 6750 §3.1: no credentials, no code


@pytest.mark.slow
@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN.upper()}",
        f"Bearer {TOKEN},{SECOND}",
        f"Bearer {OTHER_SERVER}",
        "Bearer lt_forged_00000000000000000000000",
    ],
    ids=["longer", "shorter", "case", "both-joined", "other-server", "forged"],
)
def test_a_wrong_token_is_401_invalid_token(guarded: Served, authorization: str) -> None:
    reply = request(guarded.port, headers={"Authorization": authorization})
    assert_error(reply, 401)
    assert 'error="invalid_token"' in challenge(reply)
    assert TOKEN not in reply.body.decode() and SECOND not in reply.body.decode()


@pytest.mark.slow
@pytest.mark.parametrize(
    "authorization",
    [f"Basic {TOKEN}", TOKEN, "Bearer", "Bearer ", f"Token {TOKEN}"],
    ids=["basic", "bare", "empty", "empty-space", "other-scheme"],
)
def test_another_scheme_or_no_token_is_401(guarded: Served, authorization: str) -> None:
    reply = request(guarded.port, headers={"Authorization": authorization})
    assert_error(reply, 401)
    challenge(reply)


@pytest.mark.slow
def test_a_token_in_the_query_string_is_not_accepted(guarded: Served) -> None:
    assert_error(request(guarded.port, path=f"/mcp?access_token={TOKEN}"), 401)


@pytest.mark.slow
def test_bytes_that_are_not_ascii_are_401_not_a_crash(guarded: Served) -> None:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", guarded.port, timeout=10)
    try:
        conn.putrequest("POST", "/mcp", skip_accept_encoding=True)
        for name, value in [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", "Bearer \xe9\xff" + TOKEN),
            ("Content-Length", "2"),
        ]:
            conn.putheader(name, value.encode("latin-1"))
        conn.endheaders(b"{}")
        response = conn.getresponse()
        assert response.status == 401, response.read()
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("token", [TOKEN, SECOND])
def test_each_configured_token_is_accepted_in_any_scheme_case(guarded: Served, token: str) -> None:
    assert_tool_reply(request(guarded.port, headers=bearer(token)))
    assert_tool_reply(request(guarded.port, headers={"Authorization": f"bearer {token}"}))
    assert_error(request(guarded.port, headers=bearer(token[::-1])), 401)


@pytest.mark.slow
def test_a_token_for_this_server_is_refused_by_another(guarded: Served, other_server: Served) -> None:
    assert_tool_reply(request(other_server.port, headers=bearer(OTHER_SERVER)))
    assert_error(request(other_server.port, headers=bearer(TOKEN)), 401)
    assert_error(request(guarded.port, headers=bearer(OTHER_SERVER)), 401)


@pytest.mark.slow
def test_login_comes_before_the_method_rule_and_after_host_and_origin(guarded: Served) -> None:
    assert_error(request(guarded.port, "GET"), 401)  # nothing about the endpoint for a stranger
    assert request(guarded.port, "GET", headers=bearer(TOKEN)).status == 405
    # Host and Origin rules are unchanged, token or not.
    assert_error(request(guarded.port, headers={"Host": "evil.example", **bearer(TOKEN)}), 403)
    assert_error(request(guarded.port, headers={"Origin": "https://evil.example", **bearer(TOKEN)}), 403)
    assert_error(request(guarded.port, headers={"Host": "evil.example"}), 403)
    assert_error(request(guarded.port, path="/elsewhere", headers=bearer(TOKEN)), 404)


@pytest.mark.slow
def test_tokens_are_never_in_the_logs_or_stdout(guarded: Served) -> None:
    # Every kind of request first (accepted, refused, failing inside a tool), at debug level.
    for headers, status in (
        (bearer(TOKEN), 200),
        (bearer(SECOND), 200),
        (bearer(TOKEN + "x"), 401),
        ({"Authorization": f"Basic {TOKEN}"}, 401),
    ):
        assert request(guarded.port, headers=headers).status == status
        request(guarded.port, body=b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}', headers=headers)
    stderr = guarded.stderr
    assert "DEBUG" in stderr, stderr[:2000]  # it did log at debug
    for secret in (TOKEN, SECOND, TOKEN[4:20], SECOND[4:20]):
        assert secret not in stderr
    assert guarded.stdout == b""


@pytest.mark.slow
def test_a_non_loopback_bind_with_login_serves_only_with_the_token(open_bind_with_login: Served) -> None:
    port = open_bind_with_login.port
    assert_error(request(port), 401)
    assert_tool_reply(request(port, headers=bearer(TOKEN)))
    warnings = [line for line in open_bind_with_login.stderr.splitlines() if "warning" in line]
    assert warnings and "no login" not in warnings[0]


# -- what `init` prints -----------------------------------------------------------------------------------


def test_init_prints_http_configs_that_carry_the_header_but_not_the_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lancelot_cli.cli.init.clients import print_client_configs

    monkeypatch.setenv("LANCELOT_HTTP_TOKENS", TOKENS)
    print_client_configs("/abs/db", ["/usr/bin/lancelot"])
    out, err = capsys.readouterr()
    assert "Over HTTP" in out and "Authorization: Bearer $MCP_LANCELOT_TOKEN" in out
    assert "bearer_token_env_var" in out and "${input:lancelot-token}" in out
    assert TOKEN not in out + err and SECOND not in out + err


@pytest.mark.slow
def test_the_printed_claude_command_sends_the_token_from_the_environment(tmp_path: Path) -> None:
    from lancelot_cli.cli.init.clients import http_client_configs

    command = http_client_configs()["claude"]
    assert command.startswith("claude ")
    # the shell that runs it expands the variable: what `claude` receives as the header
    shown = subprocess.run(
        ["bash", "-c", "printf '%s\\n' " + command.removeprefix("claude ")],
        capture_output=True,
        text=True,
        env={"MCP_LANCELOT_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout.splitlines()
    assert f"Authorization: Bearer {TOKEN}" in shown


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_printed_cursor_config_logs_the_sdk_client_in(guarded: Served) -> None:
    from lancelot_cli.cli.init.clients import http_client_configs

    server = json.loads(http_client_configs(guarded.url)["json"])["mcpServers"]["lancelot"]
    headers = {k: v.replace("${env:MCP_LANCELOT_TOKEN}", TOKEN) for k, v in server["headers"].items()}  # Cursor's part
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(server["url"], http_client=http)) as client,
    ):
        assert "lancedb_search" in {tool.name for tool in (await client.list_tools()).tools}


# -- refusing to start ---------------------------------------------------------------------------------


def run_serve(args: list[str], tmp_path: Path, db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(tmp_path / "config"), **env)
    return subprocess.run(
        [*lancelot_command(), "serve", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode == 1, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lancelot: error:"), done.stderr
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_a_non_loopback_bind_without_login_does_not_start(tmp_path: Path, sample_db: Path, host: str) -> None:
    done = run_serve(["--http", str(free_port()), "--host", host], tmp_path, sample_db)
    assert_one_line_error(done, "LANCELOT_HTTP_TOKENS", "LANCELOT_HTTP_NO_LOGIN")


@pytest.mark.slow
def test_no_login_beyond_loopback_when_told_so(spawn: Callable[..., Served], sample_db: Path) -> None:
    port = free_port()
    served = spawn(["--http", str(port), "--host", "0.0.0.0"], port, sample_db, LANCELOT_HTTP_NO_LOGIN="1")
    assert_tool_reply(request(port))
    assert "no login" in served.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tokens", "words"),
    [
        ("tooshort", ("token 1 of 1", "16")),
        (f"{TOKEN},has space in it00000", ("token 2 of 2", "characters")),
        (f"{TOKEN},ünïcödé-token-000000000", ("token 2 of 2",)),
    ],
    ids=["short", "space", "not-ascii"],
)
def test_a_malformed_token_stops_the_server_without_showing_it(
    tmp_path: Path, sample_db: Path, tokens: str, words: tuple[str, ...]
) -> None:
    done = run_serve(["--http", str(free_port())], tmp_path, sample_db, LANCELOT_HTTP_TOKENS=tokens)
    line = assert_one_line_error(done, *words)
    for token in tokens.split(","):
        assert token not in line


def test_settings_listings_hide_the_tokens() -> None:
    from lancelot_cli.settings import load, rows

    listed = {name: value for name, value, _ in rows(load(environ={"LANCELOT_HTTP_TOKENS": TOKENS}))}
    assert listed["LANCELOT_HTTP_TOKENS"] == "(2 set, hidden)"  # what `init --show` prints
    assert TOKEN not in str(listed) and SECOND not in str(listed)


# -- the Lambda handler, with real API Gateway events -----------------------------------------------------

Invoke = Callable[[dict[str, Any]], dict[str, Any]]
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def lam(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> Callable[..., Invoke]:
    """``lam(**env)``: a cold Lambda with that environment; returns ``invoke(event) -> response``."""

    def configure(**env: str) -> Invoke:
        monkeypatch.setattr(aws_lambda, "_handler", None)
        monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
        for name, value in env.items():
            monkeypatch.setenv(name, value)

        def invoke(event: dict[str, Any]) -> dict[str, Any]:
            return json.loads(json.dumps(aws_lambda.handler(event, None)))  # as the runtime sends it

        return invoke

    return configure


def lambda_challenge(response: dict[str, Any]) -> str:
    assert response["statusCode"] == 401, response
    headers = {k.lower(): v for k, v in response["headers"].items()}
    assert headers["www-authenticate"].startswith("Bearer "), headers
    assert "error" in json.loads(response["body"])
    return str(headers["www-authenticate"])


def test_lambda_without_a_token_is_401(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_HTTP_TOKENS=TOKENS)
    assert "error=" not in lambda_challenge(invoke(make_event(LIST)))


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {TOKEN}x", f"Bearer {OTHER_SERVER}", f"Basic {TOKEN}", f"Bearer {TOKEN},Bearer {SECOND}"],
    ids=["longer", "other-server", "basic", "joined-by-api-gateway"],
)
def test_lambda_with_a_wrong_token_is_401(lam: Callable[..., Invoke], authorization: str) -> None:
    invoke = lam(LANCELOT_HTTP_TOKENS=TOKENS)
    response = invoke(make_event(LIST, headers={"Authorization": authorization}))
    lambda_challenge(response)
    assert TOKEN not in response["body"] and SECOND not in response["body"]


def test_lambda_with_the_token_answers_and_the_same_event_fails_elsewhere(lam: Callable[..., Invoke]) -> None:
    event = make_event(LIST, headers={"Authorization": f"Bearer {SECOND}"})
    response = lam(LANCELOT_HTTP_TOKENS=TOKENS)(event)
    assert response["statusCode"] == 200, response
    assert "lancedb_search" in response["body"]
    # The same event replayed to a function with other tokens: refused.
    lambda_challenge(lam(LANCELOT_HTTP_TOKENS=OTHER_SERVER)(event))


def test_lambda_token_in_the_query_string_is_not_accepted(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_HTTP_TOKENS=TOKENS)
    lambda_challenge(invoke(make_event(LIST, raw_query=f"access_token={TOKEN}")))


def test_lambda_serves_no_health_or_metrics_pages(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_HTTP_TOKENS=TOKENS, LANCELOT_METRICS="1")
    lambda_challenge(invoke(make_event(None, method="GET", path="/healthz")))
    lambda_challenge(invoke(make_event(None, method="GET", path="/metrics")))
    response = invoke(make_event(None, method="GET", path="/metrics", headers={"Authorization": f"Bearer {TOKEN}"}))
    assert response["statusCode"] == 405, response  # the MCP endpoint's answer to a GET
