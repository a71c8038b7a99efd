"""Hostile input over stdio (issue 16 #9, issue 12): a real `lancelot serve` process fed raw lines.

A line that is not JSON gets a -32700 reply, a JSON line that is not JSON-RPC a -32600 (the SDK
dropped both, so a client waited for ever); a call before ``initialize`` says so; a tool that
fails inside lancedb or pyarrow says what was wrong, capped in length, and over stdio gets a
reply at all; `serve` with a missing database warns once on stderr and serves once `index` made it.

The bad lines that leave the server running share one server per database (each case checks it
still answers afterwards); a case that stopped it fails that check, and the next case gets a new
server. The cases that need a fresh process (nothing sent yet, no database yet) start their own.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env

REPLY_TIMEOUT = 30.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


class Raw:
    """A `lancelot serve` process spoken to line by line; its stderr goes to a file in ``config``
    (a pipe nobody reads could fill up and stop a long-lived server)."""

    def __init__(self, db: Path, config: Path) -> None:
        config.mkdir(parents=True, exist_ok=True)
        self.stderr_path = config / "serve.stderr"
        env = subprocess_env(
            LANCEDB_PATH=str(db),
            LANCELOT_CONFIG_DIR=str(config),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        )
        with self.stderr_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [*lancelot_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env
            )
        self._buffer = b""
        self._ids = itertools.count(1000)  # ids of this helper's own calls, apart from the tests'

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(line.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def receive(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """The next stdout line as JSON; fails after ``timeout`` s with nothing."""
        assert self.proc.stdout
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if not ready:
                pytest.fail(f"no reply within {timeout} s")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                pytest.fail(f"the server closed stdout (exit {self.proc.poll()}):\n{self.stderr}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert self.receive()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def answers(self) -> None:
        """The session goes on: the next reply is the one to a new `lancedb_version` call."""
        n = next(self._ids)
        self.send(call(n, "lancedb_version", {}))
        reply = self.receive()
        assert reply.get("id") == n and reply["result"]["isError"] is False, reply

    def sync(self) -> None:
        """Read past whatever an earlier (failed) case left unread, up to a new call's reply."""
        n = next(self._ids)
        self.send(call(n, "lancedb_version", {}))
        while self.receive().get("id") != n:
            pass

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> tuple[int | None, str]:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return self.proc.returncode, self.stderr


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Path], Raw]]:
    """An initialized server per database, kept for the module's cases; a new one when it stopped."""
    running: dict[Path, Raw] = {}

    def get(db: Path) -> Raw:
        server = running.get(db)
        if server is None or server.proc.poll() is not None:
            server = running[db] = Raw(db, tmp_path_factory.mktemp("serve"))
            server.initialize()
        server.sync()
        return server

    yield get
    for server in running.values():
        if server.proc.poll() is None:
            server.close()


@pytest.fixture
def raw(shared: Callable[[Path], Raw], sample_db: Path) -> Raw:
    """The shared, initialized server on the sample documents."""
    return shared(sample_db)


@pytest.fixture
def fresh(sample_db: Path, tmp_path: Path) -> Iterator[Raw]:
    """A server of the test's own, not yet initialized."""
    server = Raw(sample_db, tmp_path)
    yield server
    if server.proc.poll() is None:
        server.close()


def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.mark.slow
@pytest.mark.parametrize(
    "line",
    [b"not json", b"{oops", b'{"a":' * 3000 + b"1" + b"}" * 3000, b"\xff\xfe"],
    ids=["words", "broken", "nested-3000", "not-utf8"],
)
def test_a_line_that_is_not_json_gets_a_parse_error(raw: Raw, line: bytes) -> None:
    raw.send_line(line)
    reply = raw.receive()
    assert reply["id"] is None and reply["error"]["code"] == -32700, reply
    raw.answers()  # and the session goes on


@pytest.mark.slow
@pytest.mark.parametrize(
    "query", ["refund \\ud800", "\\udfff policy", "refund \\ud83d\\ude00"], ids=["high-alone", "low-alone", "a-pair"]
)
def test_a_lone_surrogate_escape_is_read_as_a_replacement_character(raw: Raw, query: str) -> None:
    """``"\\ud800"`` is valid JSON grammar (half an emoji) that the SDK's parser refuses; the call is
    answered, with its id, as if the half were U+FFFD (issue 27 #5: it got -32700 with id null)."""
    line = (
        '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "lancedb_search", '
        '"arguments": {"query": "' + query + '", "limit": 3}}}'
    )
    raw.send_line(line.encode())
    reply = raw.receive()
    assert reply["id"] == 11 and "error" not in reply, reply
    found = json.loads(reply["result"]["content"][0]["text"])
    assert found["query"] == json.loads(f'"{query}"').encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert found["hits"]  # "refund" is found
    raw.answers()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "expected_id"),
    [(b'{"foo": 1}', None), (b"[1, 2]", None), (b"42", None), (b'{"jsonrpc": "2.0", "id": 9, "method": 3}', 9)],
)
def test_json_that_is_not_json_rpc_gets_invalid_request(raw: Raw, line: bytes, expected_id: Any) -> None:
    raw.send_line(line)
    reply = raw.receive()
    assert reply["error"]["code"] == -32600 and reply["id"] == expected_id, reply
    raw.answers()


@pytest.mark.slow
@pytest.mark.parametrize(
    "request_id", [{}, [], [1], {"a": 1}, None, 1.5], ids=["object", "list", "list-1", "obj-1", "null", "float"]
)
def test_a_cancellation_with_an_odd_request_id_is_ignored(fresh: Raw, request_id: Any) -> None:
    """`notifications/cancelled` is not checked by the SDK: a requestId that is an object or a list
    ended the server with `TypeError: unhashable` (issue 37 #5), before and after `initialize`."""
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    fresh.send(cancel)
    fresh.initialize()
    fresh.send(cancel)
    fresh.answers()
    assert fresh.proc.poll() is None and "Traceback" not in fresh.stderr, fresh.stderr


@pytest.mark.slow
def test_a_message_over_the_line_limit_is_refused_with_its_id_and_never_held(raw: Raw) -> None:
    """One 100 MB line cost the server 3.1 GB of memory (issue 37 #7): a line over 4 MB is read to its
    end and dropped, answered -32600 with the request's id, and the session goes on."""
    from lancelot_cli.server.transports.stdin_lines import MAX_LINE

    before = _peak_rss_kib(raw.proc.pid)
    padding = "x" * (48 * 1024 * 1024)
    line = json.dumps(call(77, "lancedb_search", {"query": "refund", "queries": [padding]}))
    assert len(line) > MAX_LINE
    raw.send_line(line.encode())
    reply = raw.receive()
    assert reply["id"] == 77 and reply["error"]["code"] == -32600 and "4 MB" in reply["error"]["message"], reply
    raw.answers()
    assert _peak_rss_kib(raw.proc.pid) - before < 200 * 1024, "the line was held in memory"


def _peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


@pytest.mark.slow
def test_a_call_before_initialize_says_so(fresh: Raw) -> None:
    fresh.send(call(1, "lancedb_version", {}))
    reply = fresh.receive()
    assert reply["id"] == 1 and "initialize" in reply["error"]["message"], reply
    fresh.initialize()
    fresh.send(call(2, "lancedb_version", {}))
    assert fresh.receive()["result"]["isError"] is False


@pytest.mark.slow
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": "refund", "table": "t" * 60_000}, "at most 200 characters"),
        ({"query": "refund", "textColumn": "tags"}, "holds list<item: string>, not text"),
    ],
    ids=["60KB-table", "list-column"],
)
def test_tool_errors_say_what_was_wrong_in_a_bounded_reply(
    shared: Callable[[Path], Raw], list_db: Path, arguments: dict[str, Any], expected: str
) -> None:
    server = shared(list_db)
    server.send(call(3, "lancedb_search", arguments))
    reply = server.receive()
    result = reply["result"]
    text = result["content"][0]["text"]
    assert reply["id"] == 3 and result["isError"] and expected in text, text
    assert text != "Error executing tool lancedb_search" and len(text) < 2000, text
    server.answers()


@pytest.fixture(scope="module")
def list_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table with a list column (front-matter tags)."""
    from lancelot_cli.indexer import index_folder

    root = tmp_path_factory.mktemp("list-db")
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("---\ntags: [a, b]\n---\n# Refunds\n\nThe refund policy.\n")
    index_folder(root / "docs", str(root / "db"))
    return root / "db"


@pytest.mark.anyio
async def test_unexpected_engine_errors_reach_the_agent_in_process(list_db: Path) -> None:
    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(list_db)}))) as client:
        for arguments in ({"query": "refund", "textColumn": "tags"},):
            result = await client.call_tool("lancedb_search", arguments)
            text = "".join(getattr(part, "text", "") for part in result.content)
            assert result.is_error and "'tags'" in text and "not text" in text, text


@pytest.mark.slow
def test_serve_with_a_missing_database_warns_once_on_stderr_and_serves_after_index(tmp_path: Path) -> None:
    db = tmp_path / "later"
    server = Raw(db, tmp_path / "cfg")
    try:
        server.initialize()
        server.send(call(1, "lancedb_search", {"query": "refund"}))
        first = server.receive()
        subprocess.run(
            [*lancelot_command(), "index", str(SAMPLE_DOCS), str(db)],
            check=True,
            capture_output=True,
            env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "cfg")),
            timeout=120,
        )
        server.send(call(2, "lancedb_search", {"query": "refund"}))
        second = server.receive()
    finally:
        code, stderr = server.close()
    assert first["result"]["isError"] and "does not exist" in first["result"]["content"][0]["text"]
    assert not second["result"]["isError"] and second["result"]["structuredContent"]["count"] > 0, second
    warnings = [line for line in stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(db) in warnings[0] and "lancelot index" in warnings[0], stderr
    assert code == 0


@pytest.mark.slow
def test_the_warning_comes_at_start_before_any_request(tmp_path: Path) -> None:
    server = Raw(tmp_path / "nowhere", tmp_path)
    try:
        deadline = time.monotonic() + REPLY_TIMEOUT
        while "\n" not in server.stderr and server.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        seen = server.stderr
        assert "warning" in seen and "nowhere" in seen, seen
        server.initialize()  # and it serves
    finally:
        server.close()
    assert not (tmp_path / "nowhere").exists()
