"""HTTP framing a proxy could be fooled by, against a real `lancelot serve --http` on loopback, over raw
sockets: a request with both Transfer-Encoding and Content-Length is refused and its connection
closed (RFC 9112 §6.3, the way request smuggling works); a request head over 16 KB is refused
whole, not only while it is incomplete."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import lancelot_command, subprocess_env
from tests.support.servers import Served, free_port, spawn_serve

pytestmark = pytest.mark.slow

BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


@pytest.fixture(scope="module")
def served(sample_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    port = free_port()
    work = tmp_path_factory.mktemp("framing")
    env = subprocess_env(
        LANCEDB_PATH=str(sample_db),
        LANCELOT_CONFIG_DIR=str(work / "config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    server = spawn_serve(lancelot_command(), ["--http", str(port)], port, work, env)
    yield server
    server.stop()


def _exchange(port: int, request: bytes) -> tuple[bytes, bool]:
    """The reply's bytes, and whether the server then closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return data, True
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        while len(rest) < length:
            rest += sock.recv(65536)
        sock.settimeout(1.5)  # well under the idle keep-alive timeout (5 s)
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
        return head + b"\r\n\r\n" + rest, closed


def _post(port: int, extra_headers: bytes, body: bytes = BODY) -> bytes:
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n" % port
        + b"accept: application/json, text/event-stream\r\n"
        + extra_headers
        + b"\r\n"
        + body
    )


def test_a_well_formed_request_keeps_its_connection(served: Served) -> None:
    reply, closed = _exchange(served.port, _post(served.port, b"content-length: %d\r\n" % len(BODY)))
    assert reply.startswith(b"HTTP/1.1 200") and b'"tools"' in reply
    assert not closed


def test_transfer_encoding_with_content_length_is_refused_and_closed(served: Served) -> None:
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
    reply, closed = _exchange(
        served.port, _post(served.port, b"content-length: %d\r\ntransfer-encoding: chunked\r\n" % len(chunked), chunked)
    )
    assert reply.startswith(b"HTTP/1.1 400")
    assert b"Transfer-Encoding" in reply and closed


def test_a_head_over_16_kb_is_refused_whole(served: Served) -> None:
    padding = b"".join(b"x-pad-%d: %s\r\n" % (n, b"a" * 1000) for n in range(40))  # 40 KB in complete lines
    reply, closed = _exchange(served.port, _post(served.port, padding + b"content-length: %d\r\n" % len(BODY)))
    assert reply.startswith(b"HTTP/1.1 431") and closed
    small = b"".join(b"x-pad-%d: %s\r\n" % (n, b"a" * 1000) for n in range(10))
    reply, _ = _exchange(served.port, _post(served.port, small + b"content-length: %d\r\n" % len(BODY)))
    assert reply.startswith(b"HTTP/1.1 200")
