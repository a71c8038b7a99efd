"""Every MCP protocol revision Lancelot speaks, through the mcp SDK's own client, over every way it is
served (docs/design.md#issue-22, item 4).

The client is pinned to each revision: ``mode="2026-07-28"`` (stateless: no initialize, a
``_meta`` envelope on every request), ``mode="auto"`` (probes ``server/discover``), and each
handshake-era revision through ``mode="legacy"`` with the version the SDK's client puts in its
``initialize`` request set to that revision (the client offers only its newest one otherwise). Over
each transport (in-memory, the AWS Lambda handler, a spawned ``lancelot serve`` on stdio and on HTTP)
the client lists the tools (all of them, the same order twice) and calls every one. Then the HTTP rules
of SPEC §7 (Host, Origin, 405, 413, 415) are checked for requests of every revision, on HTTP and on
the Lambda handler.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS

from lancelot_cli.server.transports import aws_lambda
from tests.conftest import hash_tree, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.lambda_events import API_HOST, LambdaTransport, make_event
from tests.support.servers import Served, free_port, spawn_serve

# What the tools must be, in this order, every time (2026-07-28 clients may cache the list).
TOOL_ORDER = ["lancedb_search", "lancedb_query", "lancedb_document", "lancedb_status", "lancedb_version"]

# (client mode, the revision its initialize offers or None, the revision the session must end up on)
REVISIONS = [
    *(pytest.param("legacy", v, v, id=f"handshake-{v}") for v in sorted(HANDSHAKE_PROTOCOL_VERSIONS)),
    *(pytest.param(v, None, v, id=v) for v in MODERN_PROTOCOL_VERSIONS),
    pytest.param("auto", None, LATEST_PROTOCOL_VERSION, id="auto"),
]
EVERY_VERSION = sorted({*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS})


@pytest.fixture
def offer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``offer(version)``: the SDK client's initialize asks for ``version`` (None: its own default)."""

    def _offer(version: str | None) -> None:
        if version is not None:
            monkeypatch.setattr("mcp.client.session.LATEST_HANDSHAKE_VERSION", version)

    return _offer


async def exercise(client: Client, revision: str) -> None:
    """List the tools twice and call each one; every reply right, on the revision asked for."""
    assert client.protocol_version == revision
    first = [tool.name for tool in (await client.list_tools()).tools]
    again = [tool.name for tool in (await client.list_tools()).tools]
    assert first == again == TOOL_ORDER
    search = await client.call_tool("lancedb_search", {"query": "MAX_SAVED", "limit": 3})
    query = await client.call_tool("lancedb_query", {"question": "gift cards", "contextBudget": 2000})
    document = await client.call_tool("lancedb_document", {"source": "guides/stock-counts.md"})
    status = await client.call_tool("lancedb_status", {})
    version = await client.call_tool("lancedb_version", {})
    bad = await client.call_tool("lancedb_search", {"query": "x", "limit": 0})
    for result in (search, query, document, status, version):
        assert not result.is_error, text_of(result)
    assert json.loads(text_of(search))["hits"][0]["source"] == "guides/stock-counts.md"
    assert "gift card" in text_of(query).lower()
    assert "MAX_SAVED" in text_of(document)
    assert status.structured_content["tables"][0]["name"] == "documents"
    assert revision in json.loads(text_of(version))["mcpProtocolVersions"]
    assert bad.is_error and "limit must be an integer from 1 to 200; got 0" in text_of(bad)


# -- in-memory and the Lambda handler (in-process) ------------------------------------------------


@pytest.fixture
def lambda_handler(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> Any:
    """A cold Lambda over the sample database (module-global handler reset, environment set)."""
    monkeypatch.setattr(aws_lambda, "_handler", None)
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    return aws_lambda.handler


@contextlib.asynccontextmanager
async def lambda_client(handler: Any, mode: str) -> AsyncIterator[tuple[Client, LambdaTransport]]:
    import httpx2

    bridge = LambdaTransport(handler)
    http = httpx2.AsyncClient(transport=bridge.transport())
    async with http, Client(streamable_http_client(f"https://{API_HOST}/mcp", http_client=http), mode=mode) as client:
        yield client, bridge


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "offered", "revision"), REVISIONS)
async def test_in_memory(mode: str, offered: str | None, revision: str, offer: Any, sample_db: Path) -> None:
    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    offer(offered)
    async with Client(build_server(load(environ={"LANCEDB_PATH": str(sample_db)})), mode=mode) as client:
        await exercise(client, revision)


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "offered", "revision"), REVISIONS)
async def test_lambda_handler(
    mode: str, offered: str | None, revision: str, offer: Any, lambda_handler: Any, sample_db: Path
) -> None:
    before = hash_tree(sample_db)
    offer(offered)
    async with lambda_client(lambda_handler, mode) as (client, bridge):
        await exercise(client, revision)
    # It went through the handler as API Gateway events, each stamped with the revision once agreed.
    stamped = {event["headers"].get("mcp-protocol-version") for event in bridge.events}
    assert revision in stamped and stamped <= {revision, None}
    assert hash_tree(sample_db) == before


# -- spawned servers: stdio and HTTP ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "offered", "revision"), REVISIONS)
async def test_stdio(
    mode: str, offered: str | None, revision: str, offer: Any, sample_db: Path, tmp_path: Path
) -> None:
    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve"],
        env=subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path)),
    )
    offer(offered)
    async with Client(params, mode=mode) as client:
        await exercise(client, revision)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory, sample_db: Path) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("revisions-http")
    (workdir / "config").mkdir()
    port = free_port()
    env = subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(workdir / "config"))
    served = spawn_serve(lancelot_command(), ["--http", str(port)], port, workdir, env)
    yield served
    served.stop(signal.SIGTERM)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "offered", "revision"), REVISIONS)
async def test_http(mode: str, offered: str | None, revision: str, offer: Any, http_server: Served) -> None:
    offer(offered)
    async with Client(http_server.url, mode=mode) as client:
        await exercise(client, revision)


# -- the HTTP rules, for a request of every revision -----------------------------------------------


def stamped(version: str) -> tuple[dict[str, str], bytes]:
    """Headers and body of a ``lancedb_version`` call as a client of ``version`` sends it: the
    2026-07-28 form carries the ``_meta`` envelope and the Mcp-Method/Mcp-Name headers."""
    params: dict[str, Any] = {"name": "lancedb_version", "arguments": {}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    headers["MCP-Protocol-Version"] = version
    if version in MODERN_PROTOCOL_VERSIONS:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "lancedb_version"}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return headers, json.dumps(message).encode()


def padded(version: str, size: int) -> bytes:
    """A valid call of ``version`` padded with spaces to ``size`` bytes."""
    _, body = stamped(version)
    return body + b" " * (size - len(body))


# (rule, method, header changes, body maker, expected status); None removes a header.
RULES: list[tuple[str, str, dict[str, str | None], Any, int]] = [
    ("allowed", "POST", {}, None, 200),
    ("foreign Origin", "POST", {"Origin": "http://evil.example"}, None, 403),
    ("GET", "GET", {}, None, 405),
    ("over 64 KB", "POST", {}, lambda v: padded(v, 64 * 1024 + 1), 413),
    ("not JSON content type", "POST", {"Content-Type": "text/plain"}, None, 415),
]


def _request(version: str, method: str, changes: dict[str, str | None], make_body: Any) -> tuple[dict[str, str], bytes]:
    headers, body = stamped(version)
    if make_body is not None:
        body = make_body(version)
    for name, value in changes.items():
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers, (b"" if method == "GET" else body)


def check(rule: str, expected: int, status: int, headers: dict[str, str], data: bytes | str) -> None:
    assert status == expected, (rule, data[:300])
    if status == 200:
        assert json.loads(data)["result"]["isError"] is False
    if status == 405:
        assert {k.lower(): v for k, v in headers.items()}.get("allow") == "POST"


# On a loopback bind the Host is checked too (behind API Gateway it is not, unless listed).
HTTP_RULES = [*RULES, ("foreign Host", "POST", {"Host": "evil.example"}, None, 403)]


@pytest.mark.slow
@pytest.mark.parametrize("version", EVERY_VERSION)
@pytest.mark.parametrize(
    ("rule", "method", "changes", "make_body", "status"), HTTP_RULES, ids=[r[0] for r in HTTP_RULES]
)
def test_http_rules_hold_for_every_revision(
    http_server: Served, version: str, rule: str, method: str, changes: Any, make_body: Any, status: int
) -> None:
    import http.client

    headers, body = _request(version, method, changes, make_body)
    conn = http.client.HTTPConnection("127.0.0.1", http_server.port, timeout=10)
    try:
        conn.request(method, "/mcp", body=body or None, headers=headers)
        reply = conn.getresponse()
        check(rule, status, reply.status, dict(reply.headers.items()), reply.read())
    finally:
        conn.close()


@pytest.mark.parametrize("version", EVERY_VERSION)
@pytest.mark.parametrize(("rule", "method", "changes", "make_body", "status"), RULES, ids=[r[0] for r in RULES])
def test_lambda_rules_hold_for_every_revision(
    lambda_handler: Any, version: str, rule: str, method: str, changes: Any, make_body: Any, status: int
) -> None:
    headers, body = _request(version, method, changes, make_body)
    event = make_event(body or None, method=method, headers={k.lower(): v for k, v in headers.items()})
    reply = lambda_handler(event, None)
    check(rule, status, reply["statusCode"], reply["headers"], reply["body"])


def test_an_unknown_revision_is_refused_with_the_supported_ones(lambda_handler: Any) -> None:
    headers, body = stamped("2099-01-01")
    reply = lambda_handler(make_event(body, headers={k.lower(): v for k, v in headers.items()}), None)
    assert reply["statusCode"] == 400
    message = json.loads(reply["body"])["error"]["message"]
    assert "2099-01-01" in message and all(v in message for v in EVERY_VERSION)


def test_version_lists_every_revision_newest_first() -> None:
    from lancelot_cli.engine import Engine
    from lancelot_cli.server.protocol import supported_versions
    from lancelot_cli.settings import Settings
    from lancelot_cli.wire import to_wire

    reply = to_wire(Engine(Settings()).version(LATEST_PROTOCOL_VERSION, supported=supported_versions()))
    assert reply["mcpProtocolVersion"] == LATEST_PROTOCOL_VERSION
    assert reply["mcpProtocolVersions"] == sorted(EVERY_VERSION, reverse=True)
    assert {"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} <= set(reply["mcpProtocolVersions"])
