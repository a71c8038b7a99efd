"""HTTP mode (SPEC §7) against real `lancelot serve --http` processes: the SDK's Streamable HTTP
client in both protocol modes, every Guard rule through raw ``http.client`` requests (exact Host
headers and bodies), non-loopback binds, stdout silence, clean shutdown on SIGINT/SIGTERM, the
port options through the real console script, the read-only proof, and TCP_NODELAY (the Nagle trap).

Each server variant is started once per module; every spawned process is stopped in teardown.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from lancelot_cli.cli.serve import DEFAULT_HTTP_PORT, with_http_default
from tests.conftest import hash_tree, lancelot_command, subprocess_env
from tests.support.calls import ALL_CALLS
from tests.support.calls import text_of as _text
from tests.support.expected import TOOLS
from tests.support.servers import Served, free_port, spawn_serve

pytestmark = pytest.mark.slow

ACCEPT = "application/json, text/event-stream"
ORIGINS = "https://app.example,https://other.example"


# -- spawning real servers ------------------------------------------------------------------------


def start_server(args: list[str], port: int, workdir: Path, db: Path, **env: str) -> Served:
    """Spawn `lancelot serve ARGS` on ``db`` and wait (bounded) until ``127.0.0.1:port`` accepts connections."""
    (workdir / "config").mkdir(parents=True, exist_ok=True)
    environ = subprocess_env(
        LANCEDB_PATH=str(db),
        LANCELOT_CONFIG_DIR=str(workdir / "config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        **env,
    )
    return spawn_serve(lancelot_command(), args, port, workdir, environ)


@contextmanager
def server_pool(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Callable[..., Served]]:
    """``start(args, port, db, workdir=None, **env)``: `start_server` in a fresh folder named after
    ``name`` unless one is given; every server it started is stopped (SIGTERM) when the block ends.
    The HTTP test modules' ``spawn`` fixtures are this, shaped to their calls."""
    started: list[Served] = []

    def start(args: list[str], port: int, db: Path, workdir: Path | None = None, **env: str) -> Served:
        served = start_server(args, port, workdir or tmp_path_factory.mktemp(name), db, **env)
        started.append(served)
        return served

    try:
        yield start
    finally:
        for served in started:
            served.stop(signal.SIGTERM)


@pytest.fixture(scope="module")
def spawn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start servers for this module and always stop them at the end."""
    with server_pool(tmp_path_factory, "http-server") as start:
        yield start


@pytest.fixture(scope="module")
def loopback(spawn: Any, sample_db: Path) -> Served:
    """The default: 127.0.0.1, no allowed-hosts or allowed-origins lists."""
    port = free_port()
    return spawn(["--http", str(port)], port, sample_db)


@pytest.fixture(scope="module")
def with_origins(spawn: Any, sample_db: Path) -> Served:
    port = free_port()
    return spawn(["--http", str(port)], port, sample_db, LANCELOT_ALLOWED_ORIGINS=ORIGINS)


@pytest.fixture(scope="module")
def open_bind(spawn: Any, sample_db: Path) -> Served:
    """--host 0.0.0.0 with no LANCELOT_ALLOWED_HOSTS: the Host header is not checked."""
    port = free_port()
    return spawn(["--http", str(port), "--host", "0.0.0.0"], port, sample_db, LANCELOT_HTTP_NO_LOGIN="1")


@pytest.fixture(scope="module")
def open_bind_listed(spawn: Any, sample_db: Path) -> Served:
    port = free_port()
    return spawn(
        ["--http", str(port), "--host", "0.0.0.0"],
        port,
        sample_db,
        LANCELOT_ALLOWED_HOSTS=f"myhost:{port}",
        LANCELOT_HTTP_NO_LOGIN="1",
    )


# -- raw HTTP -------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def rpc(name: str = "lancedb_version", arguments: dict[str, Any] | None = None, id: int = 1) -> bytes:  # noqa: A002 - the JSON-RPC member it fills
    return json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}
    ).encode()


def request(
    port: int,
    method: str = "POST",
    path: str = "/mcp",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    conn: http.client.HTTPConnection | None = None,
    timeout: float = 10.0,
) -> Reply:
    """One request with http.client. Host defaults to ``127.0.0.1:PORT``; a ``Host`` in ``headers``
    replaces it. POSTs get a JSON tools/call body and the Content-Type/Accept the SDK wants."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = {"Content-Type": "application/json", "Accept": ACCEPT} if method == "POST" else {"Accept": ACCEPT}
    sent.update(headers or {})
    if method == "POST" and body is None:
        body = rpc()
    try:
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        data = response.read()
        return Reply(response.status, response.headers, data)
    finally:
        if own:
            conn.close()


def assert_tool_reply(reply: Reply, id: int = 1) -> dict[str, Any]:  # noqa: A002 - the JSON-RPC member
    assert reply.status == 200, (reply.status, reply.body[:500])
    message = reply.json()
    assert message["jsonrpc"] == "2.0" and message["id"] == id and "result" in message, message
    return message["result"]


def assert_error(reply: Reply, status: int) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.body[:500])
    assert reply.headers.get("Content-Type", "").startswith("application/json")
    message = reply.json()
    assert message["jsonrpc"] == "2.0" and "error" in message, message
    return message["error"]


async def in_process_tool_names(db: Path) -> set[str]:
    """The tools the server defines, listed through the SDK's in-memory client (no HTTP)."""
    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


# -- 1. the SDK's Streamable HTTP client ----------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "protocols"),
    [("auto", {"2026-07-28"}), ("legacy", {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})],
    ids=["auto", "legacy"],
)
async def test_sdk_client_lists_and_calls_the_four_tools(
    loopback: Served, sample_db: Path, mode: str, protocols: set[str]
) -> None:
    async with Client(loopback.url, mode=mode) as client:
        assert client.protocol_version in protocols
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        search = await client.call_tool("lancedb_search", {"query": "MAX_SAVED", "limit": 3})
        query = await client.call_tool("lancedb_query", {"question": "gift cards", "contextBudget": 2000})
        status = await client.call_tool("lancedb_status", {})
        version = await client.call_tool("lancedb_version", {})
        bad = await client.call_tool("lancedb_search", {"query": "x", "limit": 0})
    # Exactly what the server defines (checked against the same server in-process), which includes the four.
    assert set(tools) == await in_process_tool_names(sample_db)
    assert set(tools) >= TOOLS
    assert all(tool.annotations is not None and tool.annotations.read_only_hint is True for tool in tools.values())
    for result in (search, query, status, version):
        assert not result.is_error, _text(result)
    assert json.loads(_text(search))["hits"][0]["source"] == "guides/stock-counts.md"
    assert "gift card" in _text(query).lower() and len(_text(query)) <= 2000
    assert status.structured_content["tables"][0]["name"] == "documents"
    assert version.structured_content["name"] == "lancelot"
    assert bad.is_error and "limit must be an integer from 1 to 200; got 0" in _text(bad)


# -- 2. the Guard rules, one request each ----------------------------------------------------------


def test_stateless_post_needs_no_initialize_and_answers_one_json_object(loopback: Served) -> None:
    reply = request(loopback.port, body=rpc("lancedb_status", {}, id=7))
    result = assert_tool_reply(reply, id=7)
    assert reply.headers.get("Content-Type", "").split(";")[0].strip() == "application/json"
    assert reply.headers.get("Mcp-Session-Id") is None
    assert result["isError"] is False and result["structuredContent"]["tables"][0]["name"] == "documents"


def test_get_is_405_with_allow_post_and_no_event_stream(loopback: Served) -> None:
    reply = request(loopback.port, "GET", headers={"Accept": "text/event-stream"}, timeout=5)
    assert_error(reply, 405)
    assert reply.headers.get("Allow") == "POST"
    assert "text/event-stream" not in reply.headers.get("Content-Type", "")  # and the whole reply came (timeout 5 s)


def test_delete_is_405_with_allow_post(loopback: Served) -> None:
    reply = request(loopback.port, "DELETE", timeout=5)
    assert_error(reply, 405)
    assert reply.headers.get("Allow") == "POST"


def test_put_is_405(loopback: Served) -> None:
    reply = request(loopback.port, "PUT", body=rpc(), headers={"Content-Type": "application/json"}, timeout=5)
    assert_error(reply, 405)
    assert reply.headers.get("Allow") == "POST"


@pytest.mark.parametrize("path", ["/other", "/", "/mcp/extra", "/mcpx"])
def test_other_paths_are_404(loopback: Served, path: str) -> None:
    assert_error(request(loopback.port, path=path), 404)


def test_trailing_slash_is_served_like_the_endpoint(loopback: Served) -> None:
    reply = request(loopback.port, path="/mcp/")
    assert reply.status == 200  # not a 307 redirect, which some clients would turn into a GET
    assert assert_tool_reply(reply)["structuredContent"]["name"] == "lancelot"


def _padded(size: int) -> bytes:
    body = rpc()
    return body + b" " * (size - len(body))


def test_body_of_exactly_64_kib_is_accepted(loopback: Served) -> None:
    body = _padded(65_536)
    assert len(body) == 65_536
    assert_tool_reply(request(loopback.port, body=body))


def test_body_one_byte_over_64_kib_is_413(loopback: Served) -> None:
    body = _padded(65_537)
    assert len(body) == 65_537
    assert_error(request(loopback.port, body=body), 413)


def test_413_is_decided_from_content_length_before_the_body(loopback: Served) -> None:
    """Only headers announcing 10 MB are sent; the 413 must come back without the body."""
    conn = http.client.HTTPConnection("127.0.0.1", loopback.port, timeout=5)
    try:
        conn.putrequest("POST", "/mcp")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Accept", ACCEPT)
        conn.putheader("Content-Length", "10000000")
        conn.endheaders()
        response = conn.getresponse()
        status, body = response.status, response.read()
    finally:
        conn.close()
    assert status == 413, body


def test_413_is_decided_while_reading_a_chunked_body(loopback: Served) -> None:
    """No Content-Length: 70 KB of chunks and no final chunk; the 413 must come without the end."""
    conn = http.client.HTTPConnection("127.0.0.1", loopback.port, timeout=5)
    try:
        conn.putrequest("POST", "/mcp")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Accept", ACCEPT)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        chunk = b" " * 10_000
        for _ in range(7):
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        response = conn.getresponse()
        status, body = response.status, response.read()
    finally:
        conn.close()
    assert status == 413, body


def test_body_that_is_not_json_is_400(loopback: Served) -> None:
    error = assert_error(request(loopback.port, body=b"not json"), 400)
    assert error["code"] == -32700


def test_no_origin_header_is_allowed(with_origins: Served) -> None:
    assert_tool_reply(request(with_origins.port))


@pytest.mark.parametrize("origin", ["https://app.example", "https://other.example"])
def test_listed_origin_is_allowed(with_origins: Served, origin: str) -> None:
    assert_tool_reply(request(with_origins.port, headers={"Origin": origin}))


@pytest.mark.parametrize("origin", ["https://evil.example", "http://app.example", "https://app.example:8443", "null"])
def test_unlisted_origin_is_403(with_origins: Served, origin: str) -> None:
    assert_error(request(with_origins.port, headers={"Origin": origin}), 403)


@pytest.mark.parametrize("origin", ["https://app.example", "http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_with_no_origins_list_every_origin_is_403(loopback: Served, origin: str) -> None:
    assert_error(request(loopback.port, headers={"Origin": origin.format(port=loopback.port)}), 403)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}"])
def test_loopback_host_values_are_allowed(loopback: Served, host: str) -> None:
    assert_tool_reply(request(loopback.port, headers={"Host": host.format(port=loopback.port)}))


@pytest.mark.parametrize(
    "host", ["localhost", "127.0.0.1", "evil.example:{port}", "127.0.0.1:{other}", "localhost:{other}", "evil.example"]
)
def test_other_host_values_are_403_on_loopback(loopback: Served, host: str) -> None:
    other = loopback.port + 1 if loopback.port < 65535 else loopback.port - 1
    reply = request(loopback.port, headers={"Host": host.format(port=loopback.port, other=other)})
    assert_error(reply, 403)


def test_unsupported_protocol_version_header_is_400(loopback: Served) -> None:
    assert_error(request(loopback.port, headers={"MCP-Protocol-Version": "1999-01-01"}), 400)


def test_known_protocol_version_header_is_served(loopback: Served) -> None:
    assert_tool_reply(request(loopback.port, headers={"MCP-Protocol-Version": "2025-06-18"}))


def test_missing_protocol_version_header_is_served(loopback: Served) -> None:
    """Served as 2025-03-26 (SPEC §7): a plain JSON-RPC tools/call with no envelope works."""
    assert_tool_reply(request(loopback.port))


# -- 3. a non-loopback bind ---------------------------------------------------------------------------


def test_open_bind_without_hosts_list_accepts_any_host_and_warns(open_bind: Served) -> None:
    for host in ("evil.example", f"evil.example:{open_bind.port}", f"127.0.0.1:{open_bind.port}"):
        assert_tool_reply(request(open_bind.port, headers={"Host": host}))
    warnings = [line for line in open_bind.stderr.splitlines() if "warning" in line.lower()]
    assert warnings and "LANCELOT_ALLOWED_HOSTS" in warnings[0], open_bind.stderr


def test_open_bind_still_refuses_any_origin(open_bind: Served) -> None:
    assert_error(request(open_bind.port, headers={"Host": "evil.example", "Origin": "http://evil.example"}), 403)


def test_open_bind_with_hosts_list_checks_the_host(open_bind_listed: Served) -> None:
    port = open_bind_listed.port
    assert_tool_reply(request(port, headers={"Host": f"myhost:{port}"}))
    assert_tool_reply(request(port, headers={"Host": f"MyHost:{port}"}))  # host names are case-insensitive
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "myhost", f"myhost:{port + 1}", "evil.example"):
        assert_error(request(port, headers={"Host": host}), 403)
    assert "warning" not in open_bind_listed.stderr.lower()


# -- 4. stdout silence and shutdown ------------------------------------------------------------------


def _traffic(port: int) -> None:
    """A bit of everything: every tool, good and bad arguments, and each kind of refusal."""
    with_conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        for n, (name, arguments) in enumerate(ALL_CALLS, start=1):
            assert_tool_reply(request(port, body=rpc(name, arguments, id=n), conn=with_conn), id=n)
    finally:
        with_conn.close()
    assert request(port, "GET").status == 405
    assert request(port, path="/nope").status == 404
    assert request(port, body=b"{oops").status == 400
    assert request(port, body=_padded(70_000)).status == 413
    assert request(port, headers={"Origin": "https://evil.example"}).status == 403
    assert request(port, headers={"Host": "evil.example"}).status == 403
    assert request(port, headers={"MCP-Protocol-Version": "1999-01-01"}).status == 400


def test_http_mode_writes_nothing_to_stdout(spawn: Any, sample_db: Path) -> None:
    port = free_port()
    served = spawn(["--http", str(port)], port, sample_db, LANCELOT_LOG_LEVEL="silly")
    _traffic(port)
    code, _ = served.stop(signal.SIGINT)
    assert served.stdout == b""
    assert "serving MCP on" in served.stderr  # the logs went to stderr instead
    assert code is not None


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_the_server_promptly_and_cleanly(spawn: Any, sample_db: Path, sig: int) -> None:
    port = free_port()
    served = spawn(["--http", str(port)], port, sample_db)
    idle = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # an idle keep-alive connection
    try:
        assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"}), conn=idle))
        code, _ = served.stop(sig, timeout=5.0)  # None: still running 5 s after the signal (then killed)
    finally:
        idle.close()
    stderr = served.stderr
    assert code is not None, f"did not stop within 5 s\n{stderr}"
    assert "Traceback" not in stderr, stderr
    assert not re.search(r"\bERROR\b|lancelot: error", stderr), stderr
    assert served.stdout == b""
    assert code == 0, f"exit code {code} after {signal.Signals(sig).name}\n{stderr}"


# -- 5. the port options, through the real console script -------------------------------------------


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_bare_http_listens_on_3000(spawn: Any, sample_db: Path) -> None:
    if not _port_is_free(DEFAULT_HTTP_PORT):
        pytest.skip(f"127.0.0.1:{DEFAULT_HTTP_PORT} is already in use, so `serve --http` cannot be tried")
    served = spawn(["--http"], DEFAULT_HTTP_PORT, sample_db)
    assert_tool_reply(request(DEFAULT_HTTP_PORT))
    assert f"http://127.0.0.1:{DEFAULT_HTTP_PORT}/mcp" in served.stderr
    served.stop(signal.SIGINT)


@pytest.mark.parametrize(
    "form",
    [
        ["--http={port}"],
        ["--http", "{port}"],
        ["--port", "{port}"],
        ["--http", "--port", "{port}"],
        ["--port", "{port}", "--http"],
    ],
    ids=["http=PORT", "http PORT", "port PORT", "http --port PORT", "port PORT --http"],
)
def test_port_options_through_the_console_script(spawn: Any, sample_db: Path, form: list[str]) -> None:
    port = free_port()
    served = spawn([arg.format(port=port) for arg in form], port, sample_db)
    # The default allowed Host values follow the port actually used.
    assert_tool_reply(request(port, headers={"Host": f"localhost:{port}"}))
    assert f"http://127.0.0.1:{port}/mcp" in served.stderr
    served.stop(signal.SIGINT)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["serve", "--http"], ["serve", "--http", "3000"]),
        (["serve", "--http", "8080"], ["serve", "--http", "8080"]),
        (["serve", "--http=8080"], ["serve", "--http=8080"]),
        (["serve", "--http", "--host", "0.0.0.0"], ["serve", "--http", "3000", "--host", "0.0.0.0"]),
        (["--db", "x", "serve", "--http"], ["--db", "x", "serve", "--http", "3000"]),
        (["serve", "--port", "8080"], ["serve", "--port", "8080"]),
        (["serve"], ["serve"]),
        (["serve", "--", "--http"], ["serve", "--", "--http"]),
    ],
)
def test_with_http_default(args: list[str], expected: list[str]) -> None:
    assert with_http_default(args) == expected


# -- 6. read-only proof over HTTP --------------------------------------------------------------------


def test_no_http_call_changes_any_database_file(loopback: Served, sample_db: Path) -> None:
    before = hash_tree(sample_db)
    assert before, "the sample database is empty"
    conn = http.client.HTTPConnection("127.0.0.1", loopback.port, timeout=30)
    try:
        errors = 0
        for n, (name, arguments) in enumerate(ALL_CALLS, start=1):
            result = assert_tool_reply(request(loopback.port, body=rpc(name, arguments, id=n), conn=conn), id=n)
            errors += bool(result.get("isError"))
    finally:
        conn.close()
    assert 0 < errors < len(ALL_CALLS)  # both kinds really ran
    assert hash_tree(sample_db) == before


# -- 7. latency sanity: the 44 ms Nagle/delayed-ACK trap ---------------------------------------------


def test_accepted_connections_are_not_delayed_by_nagle() -> None:
    """A reply goes out in two writes (head, body); with Nagle's algorithm on, the second waits for
    the client's delayed ACK, +40 ms a round trip. asyncio turns it off (TCP_NODELAY) on the
    connections it accepts when the listening socket says IPPROTO_TCP, as `connections.bind` makes
    it. The round-trip times themselves are measured by tests/benchmarks/http_load.py."""
    import asyncio

    from lancelot_cli.server.transports.connections import bind

    async def main() -> int:
        accepted: asyncio.Future[asyncio.BaseTransport] = asyncio.get_running_loop().create_future()

        class Accept(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                accepted.set_result(transport)

        (sock,) = bind("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Accept, sock=sock)
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
            transport = await asyncio.wait_for(accepted, 10)
            nodelay = transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            transport.close()
            writer.close()
            return nodelay
        finally:
            server.close()

    assert asyncio.run(main()) != 0


# -- 8. hostile bodies and content types (issue 16 #6, #7) -------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":' * 3000 + b"1" + b"}" * 3000,
        b"[" * 3000 + b"]" * 3000,
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + b"[" * 200 + b"]" * 200 + b"}",
        b"42",
        b'"text"',
        b"null",
        b"\xff\xfe{}",
        b"",
    ],
    ids=["objects-3000", "arrays-3000", "params-200", "number", "string", "null", "not-utf8", "empty"],
)
def test_a_body_that_is_not_acceptable_json_is_400_parse_error(loopback: Served, body: bytes) -> None:
    error = assert_error(request(loopback.port, body=body), 400)
    assert error["code"] == -32700 and error["message"].startswith("Parse error"), error


def test_a_crafted_body_neither_stalls_the_server_nor_its_other_clients(loopback: Served) -> None:
    """An unterminated string of escaped quotes (64 KB) cost the depth check 10.7 s of the event loop,
    and every other client waited (issue 37 #1). Now it is a prompt 400, and a client asking meanwhile
    is served."""
    from concurrent.futures import ThreadPoolExecutor

    hostile = b'"' + b'\\"' * 32_700
    with ThreadPoolExecutor(4) as pool:
        attacks = [pool.submit(request, loopback.port, body=hostile, timeout=30) for _ in range(3)]
        started = time.monotonic()
        assert_tool_reply(request(loopback.port, timeout=30))
        waited = time.monotonic() - started
        for attack in attacks:
            assert assert_error(attack.result(), 400)["code"] == -32700
    assert waited < 5, f"an ordinary call waited {waited:.1f} s behind three crafted bodies"


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "APPLICATION/JSON",
        "Application/Json",
        "application/json; charset=utf-8",
        'application/json;charset="UTF-8"',
        "application/json ; foo=bar",
    ],
)
def test_json_media_type_is_parsed_not_prefix_matched(loopback: Served, content_type: str) -> None:
    assert_tool_reply(request(loopback.port, headers={"Content-Type": content_type}))


@pytest.mark.parametrize(
    "content_type",
    [
        "application/jsonx",
        "application/json-patch+json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin-1",
        "text/json",
        "",
    ],
)
def test_other_media_types_are_415_with_a_json_rpc_error(loopback: Served, content_type: str) -> None:
    error = assert_error(request(loopback.port, headers={"Content-Type": content_type}), 415)
    assert "application/json" in error["message"] or "UTF-8" in error["message"], error


# -- 9. slow clients are shed, legitimate ones are served (issue 16 #5) ------------------------------

SHORT = {"LANCELOT_HTTP_HEADER_TIMEOUT": "1", "LANCELOT_HTTP_BODY_TIMEOUT": "1", "LANCELOT_HTTP_IDLE_TIMEOUT": "1"}


@pytest.fixture(scope="module")
def short_timeouts(spawn: Any, sample_db: Path) -> Served:
    port = free_port()
    return spawn(["--http", str(port)], port, sample_db, **SHORT)


def _head(port: int, length: int | None = None) -> bytes:
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json", f"Accept: {ACCEPT}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


CLOSED_WITHIN = 4.0  # seconds to wait for a close that a 1 s timeout makes (the defaults are 5 and 10 s)


def _closed_after(sock: socket.socket, limit: float, trickle: bytes = b"", step: float = 0.1) -> bytes:
    """Wait (at most ``limit`` s) until the server closes ``sock``, sending ``trickle`` one byte per
    ``step`` meanwhile; returns what the server sent. Fails if it is still open after ``limit``."""
    deadline = time.monotonic() + limit
    received = b""
    sock.settimeout(step)
    position = 0
    while time.monotonic() < deadline:
        if position < len(trickle):
            try:
                sock.send(trickle[position : position + 1])
                position += 1
            except OSError:  # reset or broken pipe: closed by the server
                return received
        try:
            data = sock.recv(4096)
        except TimeoutError:
            continue
        except OSError:
            return received
        if not data:
            return received
        received += data
    pytest.fail(f"the server kept the connection open for {limit} s (received {received[:200]!r})")


def _still_open(sock: socket.socket, wait: float = 0.0) -> bool:
    """True when the server has neither closed ``sock`` nor sent anything on it (after ``wait`` s)."""
    if wait:
        sock.settimeout(wait)
    else:
        sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # data, or b"" when closed: either way not still open
    except (TimeoutError, BlockingIOError):
        return True
    except OSError:
        return False
    finally:
        sock.settimeout(5)
    return False


def test_slowloris_headers_are_dropped_while_a_legitimate_client_is_served(short_timeouts: Served) -> None:
    port = short_timeouts.port
    assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"})))  # warm: lancedb loaded
    slow = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(10)]
    try:
        for sock in slow:
            sock.send(b"P")
        reply = request(port, body=rpc("lancedb_search", {"query": "refund"}))  # served meanwhile:
        assert_tool_reply(reply)
        assert all(_still_open(sock) for sock in slow)  # before their 1 s header deadline dropped them
        # Headers sent one byte every 0.1 s would take ~10 s; the deadline is 1 s from connecting.
        received = _closed_after(slow[0], CLOSED_WITHIN, trickle=_head(port)[1:])
        assert received.startswith(b"HTTP/1.1 408"), received
        for sock in slow[1:]:
            _closed_after(sock, CLOSED_WITHIN)
    finally:
        for sock in slow:
            sock.close()


def test_a_connection_that_sends_nothing_is_closed(short_timeouts: Served) -> None:
    with socket.create_connection(("127.0.0.1", short_timeouts.port), timeout=5) as sock:
        assert _still_open(sock, 0.5)  # not at once: at its 1 s header deadline
        received = _closed_after(sock, CLOSED_WITHIN)
    assert received.startswith(b"HTTP/1.1 408"), received
    assert json.loads(received.split(b"\r\n\r\n", 1)[1])["error"]["code"] == -32600


def test_a_body_stalled_midway_gets_408_and_the_connection_is_closed(short_timeouts: Served) -> None:
    port = short_timeouts.port
    body = rpc()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(_head(port, len(body)) + body[:10])
        received = _closed_after(sock, CLOSED_WITHIN)
    assert received.startswith(b"HTTP/1.1 408"), received
    assert json.loads(received.split(b"\r\n\r\n", 1)[1])["error"]["message"].startswith("Request body not received")


def test_an_idle_keep_alive_connection_is_closed(short_timeouts: Served) -> None:
    port = short_timeouts.port
    body = rpc()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(_head(port, len(body)) + body)
        sock.settimeout(5)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        _closed_after(sock, CLOSED_WITHIN)  # the default idle timeout is 5 s


def test_a_trickle_after_a_reply_meets_the_header_deadline_too(short_timeouts: Served) -> None:
    """Keep-alive: sending a byte now and then must not keep a connection open for ever."""
    port = short_timeouts.port
    body = rpc()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(_head(port, len(body)) + body)
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        _closed_after(sock, CLOSED_WITHIN, trickle=_head(port), step=0.2)


def test_a_kept_alive_connection_idle_past_the_header_deadline_is_served(spawn: Any, sample_db: Path) -> None:
    """Between requests only the idle limit counts: the header deadline starts with the next
    request's first byte. It used to start at the reply, so a connection idle for the header
    deadline (10 s by default) was closed with a 408 whatever the idle limit said, and a client's
    request sent as it closed failed (seen in CI as an SDK client's ReadError)."""
    port = free_port()
    spawn(["--http", str(port)], port, sample_db, LANCELOT_HTTP_HEADER_TIMEOUT="1", LANCELOT_HTTP_IDLE_TIMEOUT="30")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # one kept-alive connection
    try:
        assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"}), conn=conn))
        kept = conn.sock
        assert kept is not None and _still_open(kept, 2.5)  # twice the header deadline: no 408, no close
        assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"}), conn=conn))
        assert conn.sock is kept  # the same connection served it
    finally:
        conn.close()


def test_connections_over_the_cap_get_503_at_once_and_the_server_recovers(spawn: Any, sample_db: Path) -> None:
    port = free_port()
    spawn(
        ["--http", str(port)],
        port,
        sample_db,
        LANCELOT_HTTP_MAX_CONNECTIONS="8",
        **{**SHORT, "LANCELOT_HTTP_HEADER_TIMEOUT": "3"},
    )
    assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"})))  # warm: lancedb loaded
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(8)]
    try:
        # The server takes connections in the order they came, so the 9th finds the 8 counted. Its
        # 503 comes at once: within 2 s, where the header deadline of the 8 is 3 s.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
            received = _closed_after(extra, 2.0)
        assert received.startswith(b"HTTP/1.1 503"), received
        assert all(_still_open(sock) for sock in held)
        for sock in held:  # the header deadline frees the slots
            _closed_after(sock, 5.0)
    finally:
        for sock in held:
            sock.close()
    assert_tool_reply(request(port))


# -- 10. start-up problems are one line (issue 12) ------------------------------------------------------


def test_a_port_in_use_is_one_line_and_exit_1(tmp_path: Path, sample_db: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path))
        done = subprocess.run(
            [*lancelot_command(), "serve", "--http", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 1, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lancelot: error:") and str(port) in lines[0], done.stderr
    assert "in use" in lines[0] and "--http" in lines[0]


def test_http_with_a_missing_database_warns_once_and_serves_after_index(spawn: Any, tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_DOCS

    db = tmp_path / "later-db"
    port = free_port()
    served = spawn(["--http", str(port)], port, db)
    warnings = [line for line in served.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(db) in warnings[0] and "lancelot index" in warnings[0], served.stderr
    result = assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"})))
    assert result["isError"] and "does not exist" in result["content"][0]["text"]
    subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(db)],
        check=True,
        capture_output=True,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "cfg")),
        timeout=120,
    )
    result = assert_tool_reply(request(port, body=rpc("lancedb_search", {"query": "refund"})))
    assert not result["isError"] and result["structuredContent"]["count"] > 0, result


# -- batches and lone surrogates (issue 27 #5, #8) ------------------------------------------------


def test_a_batch_array_is_refused_in_one_line(loopback: Served) -> None:
    body = b"[" + rpc(id=1) + b"," + rpc(id=2) + b"]"
    error = assert_error(request(loopback.port, body=body), 400)
    assert error["code"] == -32600 and "batches are not supported" in error["message"], error
    assert len(json.dumps(error)) < 300  # one line, no model dump


@pytest.mark.parametrize("query", ["refund \\ud800", "refund \\ud83d\\ude00"], ids=["lone-half", "a-pair"])
def test_a_lone_surrogate_escape_is_read_as_a_replacement_character(loopback: Served, query: str) -> None:
    body = (
        '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "lancedb_search", '
        '"arguments": {"query": "' + query + '", "limit": 3}}}'
    ).encode()
    result = assert_tool_reply(request(loopback.port, body=body), id=4)
    found = result["structuredContent"]
    assert found["query"] == json.loads(f'"{query}"').encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert found["hits"]
