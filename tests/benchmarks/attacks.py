"""Attack figures (issue 16): hostile input against real `lancelot serve` processes on 127.0.0.1,
and hostile documents against real `lancelot index` processes (issue 37).

Run from the repository root:
    python tests/benchmarks/attacks.py [--concurrent 1000] [--slow 200] [--only index]

Families (each bounded in count; every wait has a timeout):

* bad-args stdio / bad-args http: wrong types, out-of-range numbers, 60 KB strings, path
  traversal, quotes and SQL, NUL and control characters, list and unknown columns, unknown tools.
  A failure: no reply, not a JSON-RPC reply with the same id, a tool error that says nothing more
  than "Error executing tool X", or an error text over 2,000 characters.
* protocol stdio: lines that are not JSON, JSON that is not JSON-RPC, calls before initialize,
  unknown methods, batches, odd ids. A failure: no reply where one is due, or the server dies
  (a `ping` must still be answered after each).
* http status: method, path, Host, Origin, size, media type and version cases with the status each
  must get; a failure: another status, or an error body that is not a JSON-RPC error.
* nested JSON (http, stdio): `{"a":` and `[` nested 2 to 5,000 deep; over 64 must be 400 / -32700.
* content types: media types that must be served (200) or refused (415).
* concurrent searches (http, stdio): --concurrent searches from 32 threads / pipelined on one pipe.
* crafted bodies (http, issue 37): 64 KB bodies that a scan before the JSON parser could stall on;
  a failure: not a 400, or an ordinary call made meanwhile not answered within 2 s.
* odd cancellations (stdio, issue 37): `notifications/cancelled` whose requestId is an object, a
  list, null, a float...; a failure: the server stops answering.
* oversized lines (stdio, issue 37): 5, 20 and 64 MB lines; a failure: no -32600 with the id, or no
  answer to a ping after.
* long phrasings (stdio, issue 46): a query, or seven phrasings, of 5,000 to 500,000 characters each
  (a 3.5 MB line: under the line cap); a failure: not a tool error naming the cap within 10 s, or no
  answer to a ping after.
* echo bounds (stdio, issue 37): a 1 MB resource URI or prompt name, a 100 MB context budget; a
  failure: a reply over 2,000 characters or none.
* slowloris / stalled body / silent: --slow connections that trickle headers, stall mid-body or send
  nothing, against a server with 2 s timeouts; a failure: still open 4 s after its deadline, or a
  legitimate request made meanwhile that is not served within 5 s.
* database unchanged: every file of the database hashed before and after all families.
* cleaning (index): one document per text-cleaning pass that was quadratic or worse
  (tests/support/hostile_pages.py, --cleaning-size bytes each), indexed beside an ordinary page
  by its own `lancelot index` with --cleaning-limit seconds. A failure: over the limit, a non-zero
  exit, or either page missing from the table.
* cleaning (index --watch): a watcher given all those documents at once, then an ordinary page; a
  failure: a document not in the table --cleaning-limit seconds later.
* file names on a terminal (index): a file named with an escape sequence, Rich markup or a bidi
  override, indexed on a pseudo-terminal; a failure: one of its sequences reaches the terminal, a
  MarkupError or traceback, or a non-zero exit.

Prints one Markdown table (family, attempts, failures, seconds).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env  # noqa: E402
from tests.support import hostile_pages  # noqa: E402
from tests.support.terminal import read_all  # noqa: E402

ACCEPT = "application/json, text/event-stream"
TIMEOUT = 30.0
BARE = "Error executing tool"
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attacks", "version": "1"}},
}


def bad_arguments() -> list[tuple[str, dict[str, Any]]]:
    big = "x" * 60_000
    hostile = [
        "../../etc/passwd",
        "/etc/passwd",
        "x' OR '1'='1",
        "a\x00b",
        "\u202e\ufeff",
        "%s%n",
        "${jndi:x}",
        "*",
        "",
        " ",
        "\\",
        "documents; DROP TABLE documents",
        big,
    ]
    cases: list[tuple[str, dict[str, Any]]] = []
    for value in hostile:
        cases += [
            ("lancedb_search", {"query": value}),
            ("lancedb_search", {"query": "refund", "table": value}),
            ("lancedb_search", {"query": "refund", "textColumn": value}),
            ("lancedb_search", {"query": "refund", "pathPrefix": value}),
            ("lancedb_search", {"query": "refund", "filters": {value or "k": value}}),
            ("lancedb_query", {"question": value}),
            ("lancedb_query", {"question": "x", "table": value}),
            ("lancedb_document", {"source": value}),
            ("lancedb_document", {"id": value}),
        ]
    for value in [0, -1, 201, 10**12, 1.5, "10", None, True, [], {}]:
        cases += [
            ("lancedb_search", {"query": "refund", "limit": value}),
            ("lancedb_query", {"question": "refund", "contextBudget": value}),
            ("lancedb_document", {"source": "faq.txt", "before": value}),
        ]
    for value in [None, 1, [], {}, ["refund"], True]:
        cases += [("lancedb_search", {"query": value}), ("lancedb_search", {"query": "x", "searchType": value})]
    cases += [
        ("lancedb_search", {"query": "refund", "textColumn": "tags"}),
        ("lancedb_search", {"query": "refund", "vectorColumn": "tags", "searchType": "vector"}),
        ("lancedb_search", {"query": "refund", "filters": {"tags": ["a", {"b": 1}]}}),
        ("lancedb_search", {"query": "refund", "searchType": "fuzzy"}),
        ("lancedb_search", {}),
        ("lancedb_status", {"verbose": "yes"}),
        ("lancedb_version", {"extra": 1}),
        ("lancedb_drop_table", {"table": "documents"}),
        ("", {}),
        ("x" * 10_000, {}),
    ]
    return cases


def explains(reply: Any, request_id: Any) -> bool:
    """An acceptable reply: JSON-RPC, to this id, and an error says more than "Error executing tool X"."""
    if not isinstance(reply, dict) or reply.get("id") != request_id:
        return False
    if "error" in reply:
        return 0 < len(reply["error"].get("message", "")) <= 2000
    result = reply.get("result") or {}
    if not result.get("isError"):
        return True
    text = "".join(part.get("text", "") for part in result.get("content", [])).strip()
    return bool(text) and text.rstrip(".") not in {f"{BARE} {name}" for name in TOOL_NAMES} and len(text) <= 2000


TOOL_NAMES = ("lancedb_search", "lancedb_query", "lancedb_document", "lancedb_status", "lancedb_version")


# -- processes ----------------------------------------------------------------------------------


class Stdio:
    def __init__(self, db: Path, config: Path) -> None:
        env = subprocess_env(
            LANCEDB_PATH=str(db),
            LANCELOT_CONFIG_DIR=str(config),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        )
        self.proc = subprocess.Popen(
            [*lancelot_command(), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.buffer = b""

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = json.dumps(line).encode() if isinstance(line, dict) else line
        assert self.proc.stdin
        self.proc.stdin.write(data.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float | None = None) -> Any:
        assert self.proc.stdout
        deadline = time.monotonic() + (TIMEOUT if timeout is None else timeout)
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20) if ready else b""
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"stdout-not-json": line[:200].decode(errors="replace")}

    def reply_to(self, request_id: Any) -> Any:
        """The reply with this id, skipping late replies to earlier requests (None after TIMEOUT)."""
        deadline = time.monotonic() + TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            reply = self.receive(left)
            if (
                reply is None
                or not isinstance(reply, dict)
                or reply.get("id") == request_id
                or "stdout-not-json" in reply
            ):
                return reply
        return None

    def initialize(self) -> None:
        self.send(INIT)
        self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def alive(self) -> bool:
        self.pings = getattr(self, "pings", 0) + 1
        ping_id = f"ping-{self.pings}"
        self.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
        reply = self.reply_to(ping_id)
        return isinstance(reply, dict) and reply.get("id") == ping_id

    def stop(self) -> None:
        if self.proc.stdin:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Http:
    def __init__(self, db: Path, config: Path, **env: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        environ = subprocess_env(
            LANCEDB_PATH=str(db),
            LANCELOT_CONFIG_DIR=str(config),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            **env,
        )
        self.proc = subprocess.Popen(
            [*lancelot_command(), "serve", "--http", str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=environ,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit("lancelot serve --http did not start") from None
                time.sleep(0.1)

    def post(
        self, body: bytes, headers: dict[str, str] | None = None, method: str = "POST", path: str = "/mcp"
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        sent = {"Content-Type": "application/json", "Accept": ACCEPT}
        sent.update(headers or {})
        sent = {k: v for k, v in sent.items() if v is not None}
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            return response.status, response.read()
        except OSError as exc:
            return 0, str(exc).encode()
        finally:
            conn.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def rpc(name: str, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def json_rpc_error(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "error" in message


# -- families: each returns (attempts, failures) ----------------------------------------------------


def bad_args_stdio(server: Stdio, cases: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    failures = 0
    for n, (name, arguments) in enumerate(cases):
        server.send(rpc(name, arguments, n))
        failures += not explains(server.reply_to(n), n)
    return len(cases), failures


def bad_args_http(server: Http, cases: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    failures = 0
    for n, (name, arguments) in enumerate(cases):
        body = json.dumps(rpc(name, arguments, n)).encode()
        status, data = server.post(body)
        if len(body) > 64 * 1024:  # over the body limit: 413 is the right answer
            failures += not (status == 413 and json_rpc_error(data))
            continue
        try:
            reply = json.loads(data)
        except ValueError:
            reply = None
        failures += not (status == 200 and explains(reply, n))
    return len(cases), failures


def protocol_stdio(server: Stdio) -> tuple[int, int]:
    """Each frame must get the reply shown (None: no reply due), and the server must still answer a ping."""
    frames: list[tuple[bytes, Any]] = [
        (b"not json", -32700),
        (b"{oops", -32700),
        (b"\xff\xfe\x00", -32700),
        (b"   ", -32700),
        (b'{"a":' * 3000 + b"1" + b"}" * 3000, -32700),
        (b"[" * 5000 + b"]" * 5000, -32700),
        (b"42", -32600),
        (b"null", -32600),
        (b'"x"', -32600),
        (b"[]", -32600),
        (b"[1,2]", -32600),
        (b'{"foo":1}', -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":3}', -32600),
        # The SDK reads a request with an id of another type as a notification (no reply is due);
        # the server must stay up.
        (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":7,"method":"no/such/method"}', -32601),
        (b'{"jsonrpc":"2.0","id":8,"method":"tools/call"}', "error"),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[]}', "error"),
        (b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"lancedb_search"}}', "any"),
        (b'{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}', "error"),
        (b'{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"../../etc"}}', "error"),
        (b'{"jsonrpc":"2.0","id":13,"method":"initialize","params":{}}', "error"),
        (b'{"jsonrpc":"2.0","method":"notifications/unknown"}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}', None),
        (b'{"jsonrpc":"2.0","id":"' + b"i" * 50_000 + b'","method":"ping"}', "any"),
        (json.dumps(rpc("lancedb_search", {"query": "q" * 500_000}, 14)).encode(), "any"),
    ]
    failures = 0
    for frame, expected in frames:
        server.send(frame)
        if expected is not None:
            reply = server.receive()
            if not isinstance(reply, dict):
                ok = False
            elif expected == "any":
                ok = "result" in reply or "error" in reply
            elif expected == "error":
                ok = "error" in reply or bool((reply.get("result") or {}).get("isError"))
            else:
                ok = (reply.get("error") or {}).get("code") == expected
            failures += not ok
        failures += not server.alive()
    return len(frames), failures


def pre_initialize(db: Path, config: Path) -> tuple[int, int]:
    server = Stdio(db, config)
    try:
        server.send(rpc("lancedb_version", {}, 1))
        reply = server.receive() or {}
        return 1, int("initialize" not in (reply.get("error") or {}).get("message", ""))
    finally:
        server.stop()


def http_status(server: Http) -> tuple[int, int]:
    port = server.port
    good = json.dumps(rpc("lancedb_version", {})).encode()
    cases: list[tuple[str, str, dict[str, str | None], bytes, int]] = [
        ("POST", "/mcp", {}, good, 200),
        ("POST", "/mcp/", {}, good, 200),
        ("GET", "/mcp", {}, b"", 405),
        ("DELETE", "/mcp", {}, b"", 405),
        ("PUT", "/mcp", {}, good, 405),
        ("PATCH", "/mcp", {}, good, 405),
        ("OPTIONS", "/mcp", {}, b"", 405),
        ("HEAD", "/mcp", {}, b"", 405),
        ("POST", "/", {}, good, 404),
        ("POST", "/mcpx", {}, good, 404),
        ("POST", "/mcp/x", {}, good, 404),
        ("POST", "/../mcp", {}, good, 404),
        ("POST", "/MCP", {}, good, 404),
        ("POST", "/mcp", {"Host": "evil.example"}, good, 403),
        ("POST", "/mcp", {"Host": "localhost"}, good, 403),
        ("POST", "/mcp", {"Host": f"localhost:{port}"}, good, 200),
        ("POST", "/mcp", {"Host": f"[::1]:{port}"}, good, 200),
        ("POST", "/mcp", {"Origin": "https://evil.example"}, good, 403),
        ("POST", "/mcp", {"Origin": "null"}, good, 403),
        ("POST", "/mcp", {}, good + b" " * 70_000, 413),
        ("POST", "/mcp", {}, b"{oops", 400),
        ("POST", "/mcp", {}, b"", 400),
        ("POST", "/mcp", {}, b"42", 400),
        ("POST", "/mcp", {"MCP-Protocol-Version": "1999-01-01"}, good, 400),
        ("POST", "/mcp", {"MCP-Protocol-Version": "2025-06-18"}, good, 200),
        ("POST", "/mcp", {"Content-Type": None}, good, 415),
    ]
    failures = 0
    for method, path, headers, body, expected in cases:
        status, data = server.post(body, headers, method=method, path=path)
        failures += status != expected or (expected >= 400 and method != "HEAD" and not json_rpc_error(data))
    return len(cases), failures


def nested_http(server: Http) -> tuple[int, int]:
    failures = attempts = 0
    for depth in (2, 10, 60, 65, 100, 500, 1000, 3000, 5000):
        for opener, closer in ((b'{"a":', b"}"), (b"[", b"]")):
            inner = opener * depth + b"1" + closer * depth
            body = (
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lancedb_version",'
                b'"arguments":{},"_x":' + inner + b"}}"
            )
            status, data = server.post(body)
            attempts += 1
            if depth + 2 <= 64:
                failures += status != 200
            else:
                failures += not (status == 400 and json.loads(data)["error"]["code"] == -32700)
    return attempts, failures


def nested_stdio(server: Stdio) -> tuple[int, int]:
    failures = attempts = 0
    for depth in (100, 1000, 3000, 5000, 20_000):
        for opener, closer in ((b'{"a":', b"}"), (b"[", b"]")):
            server.send(opener * depth + b"1" + closer * depth)
            reply = server.receive()
            attempts += 1
            failures += not (
                isinstance(reply, dict)
                and (reply.get("error") or {}).get("code") in (-32700, -32600)
                and server.alive()
            )
    return attempts, failures


def content_types(server: Http) -> tuple[int, int]:
    good = json.dumps(rpc("lancedb_version", {})).encode()
    served = [
        "application/json",
        "APPLICATION/JSON",
        "Application/Json",
        "application/json; charset=utf-8",
        'application/json; charset="UTF-8"',
        "application/json;charset=utf8",
        "application/json ; x=y",
    ]
    refused = [
        "application/jsonx",
        "application/json-patch+json",
        "application/json5",
        "text/json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin-1",
        "application/json; charset=utf-16",
        "",
        "*/*",
        "application/*",
        "json",
    ]
    failures = 0
    for value in served:
        failures += server.post(good, {"Content-Type": value})[0] != 200
    for value in refused:
        status, data = server.post(good, {"Content-Type": value})
        failures += not (status == 415 and json_rpc_error(data))
    return len(served) + len(refused), failures


def concurrent_http(server: Http, count: int) -> tuple[int, int]:
    def one(n: int) -> bool:
        status, data = server.post(json.dumps(rpc("lancedb_search", {"query": f"refund {n % 7}"}, n)).encode())
        try:
            reply = json.loads(data)
        except ValueError:
            return False
        return status == 200 and reply.get("id") == n and not reply["result"].get("isError")

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(one, range(count)))
    return count, results.count(False)


def concurrent_stdio(server: Stdio, count: int) -> tuple[int, int]:
    for n in range(count):
        server.send(rpc("lancedb_search", {"query": f"refund {n % 7}"}, f"c{n}"))
    seen: set[str] = set()
    for _ in range(count):
        reply = server.receive()
        if isinstance(reply, dict) and not (reply.get("result") or {}).get("isError", True):
            seen.add(str(reply.get("id")))
    return count, count - len(seen & {f"c{n}" for n in range(count)})


CRAFTED_BODIES = {  # 64 KB each: a scan before the JSON parser that is not linear stalls on them (issue 37)
    "escaped quotes, unterminated": b'"' + b'\\"' * 32_700,
    "escaped quotes in an object": b'{"a":"' + b'\\"' * 32_700,
    "backslashes, unterminated": b'"' + b"\\\\" * 32_700,
    "quotes and brackets": b'["' + b'\\"[' * 21_800,
    "brackets": b"[" * 65_000,
}


def crafted_bodies(server: Http) -> tuple[int, int]:
    """Each crafted body must be a 400 at once, and an ordinary call made meanwhile answered within 2 s."""
    failures = 0
    with ThreadPoolExecutor(2) as pool:
        for body in CRAFTED_BODIES.values():
            attack = pool.submit(server.post, body)
            time.sleep(0.3)  # the crafted body is in the server before the ordinary call
            started = time.monotonic()
            status, _ = server.post(json.dumps(rpc("lancedb_version", {})).encode())
            waited = time.monotonic() - started
            failures += status != 200 or waited > 2.0 or attack.result()[0] != 400
    return len(CRAFTED_BODIES), failures


ODD_REQUEST_IDS: list[Any] = [{}, [], [1], {"a": 1}, None, 1.5, True, "x" * 10_000]


def odd_cancellations(db: Path, config: Path) -> tuple[int, int]:
    """`notifications/cancelled` with a requestId of any JSON type, to a new server before and after
    `initialize`: it must still answer a ping."""
    failures = 0
    for request_id in ODD_REQUEST_IDS:
        server = Stdio(db, config)
        try:
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
            server.send(cancel)
            server.initialize()
            server.send(cancel)
            failures += not server.alive()
        except BrokenPipeError:  # the server ended
            failures += 1
        finally:
            server.stop()
    return len(ODD_REQUEST_IDS), failures


def oversized_lines(server: Stdio) -> tuple[int, int]:
    """Lines of 5, 20 and 64 MB: each answered -32600 with its id (never read whole), then a ping."""
    failures = 0
    sizes = (5, 20, 64)
    for n, megabytes in enumerate(sizes):
        padding = "x" * (megabytes * 1024 * 1024)
        server.send(rpc("lancedb_search", {"query": "refund", "queries": [padding]}, f"big-{n}"))
        reply = server.reply_to(f"big-{n}")
        ok = isinstance(reply, dict) and reply.get("error", {}).get("code") == -32600
        failures += not ok or not server.alive()
    return len(sizes), failures


def long_phrasings(server: Stdio) -> tuple[int, int]:
    """Phrasings over the cap (limits.MAX_PHRASING_CHARS) alone and seven at once: each a tool error
    naming the cap, answered within 10 s (unbounded, seven of 1 MB took 9.7 s), then a ping."""
    from lancelot_cli.limits import MAX_PHRASING_CHARS, MAX_PHRASINGS_CHARS

    calls = [
        ("lancedb_search", {"query": "w " * 2_500}),
        ("lancedb_query", {"question": "refund", "queries": ["w " * 2_500]}),
        ("lancedb_search", {"query": "w " * 1_900, "queries": ["v " * 1_900] * 6}),
        ("lancedb_search", {"query": "refund " * 70_000, "queries": ["policy " * 70_000] * 6}),
    ]
    failures = 0
    for n, (tool, arguments) in enumerate(calls):
        started = time.monotonic()
        server.send(rpc(tool, arguments, f"long-{n}"))
        reply = server.reply_to(f"long-{n}")
        text = json.dumps(reply)
        named = f"{MAX_PHRASING_CHARS:,}" in text or f"{MAX_PHRASINGS_CHARS:,}" in text
        ok = isinstance(reply, dict) and reply.get("result", {}).get("isError") and named
        failures += not ok or time.monotonic() - started > 10 or not server.alive()
    return len(calls), failures


def echo_bounds(server: Stdio) -> tuple[int, int]:
    """A 1 MB resource URI or prompt name and a 100 MB context budget: each reply under 2,000
    characters (an error), the server still answering."""
    huge = "a" * 1_000_000
    calls = [
        {"method": "resources/read", "params": {"uri": "lancelot://documents/" + huge}},
        {"method": "resources/read", "params": {"uri": "lancelot://nothing/" + huge}},
        {"method": "prompts/get", "params": {"name": huge}},
        {
            "method": "tools/call",
            "params": {"name": "lancedb_query", "arguments": {"question": "refund", "contextBudget": 10**8}},
        },
        {
            "method": "tools/call",
            "params": {"name": "lancedb_document", "arguments": {"source": "faq.txt", "contextBudget": 10**8}},
        },
    ]
    failures = 0
    for n, call in enumerate(calls):
        server.send({"jsonrpc": "2.0", "id": f"echo-{n}", **call})
        reply = server.reply_to(f"echo-{n}")
        failures += not isinstance(reply, dict) or len(json.dumps(reply)) > 2000 or not server.alive()
    return len(calls), failures


def slow_clients(server: Http, count: int, deadline: float) -> dict[str, tuple[int, int, float]]:
    """Slowloris, a stalled body and silent connections, with legitimate requests in between."""
    port = server.port
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: {ACCEPT}\r\nContent-Length: 200\r\n\r\n"
    ).encode()
    out: dict[str, tuple[int, int, float]] = {}
    for kind in ("slowloris", "stalled body", "silent"):
        started = time.monotonic()
        sockets = []
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.setblocking(False)
            if kind == "stalled body":
                sock.sendall(head + b'{"jsonrpc"')
            sockets.append(sock)
        opened = time.monotonic()
        open_ = set(range(count))
        legit_failures = legit = 0
        step = 0
        while open_ and time.monotonic() - opened < deadline + 4:
            for i in list(open_):
                sock = sockets[i]
                try:
                    if kind == "slowloris" and step < len(head):
                        sock.send(head[step : step + 1])
                    data = sock.recv(4096)
                    if not data:
                        open_.discard(i)
                except BlockingIOError:
                    pass
                except OSError:
                    open_.discard(i)
            step += 1
            if step % 5 == 0:  # a legitimate client, meanwhile
                t0 = time.monotonic()
                status, _ = server.post(json.dumps(rpc("lancedb_version", {})).encode())
                legit += 1
                legit_failures += status != 200 or time.monotonic() - t0 > 5
            time.sleep(0.1)
        for sock in sockets:
            sock.close()
        out[kind] = (count, len(open_), time.monotonic() - started)
        out[f"legitimate during {kind}"] = (legit, legit_failures, time.monotonic() - started)
    return out


def hash_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- `lancelot index` on hostile documents and file names (issue 37) ---------------------------------

FINE = "# Fine\n\nAn ordinary page about refunds.\n"


def indexed_paths(db: Path) -> set[str]:
    """The paths in the table of ``db`` (none while it is not written yet)."""
    import lancedb

    try:
        return {row["path"] for row in lancedb.connect(db).open_table("documents").to_arrow().to_pylist()}
    except Exception:  # noqa: BLE001 - not there yet, or being written
        return set()


def index_within(src: Path, db: Path, env: dict[str, str], limit: float) -> bool:
    """Whether `lancelot index SRC DB` exits 0 within ``limit`` seconds (killed otherwise)."""
    try:
        done = subprocess.run(
            [*lancelot_command(), "index", str(src), str(db), "--no-embed"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def cleaning(work: Path, size: int, limit: float) -> tuple[int, int]:
    """One hostile document beside an ordinary page per run (see the module doc)."""
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(work / "cfg-cleaning"))
    pages = hostile_pages.pages(size)
    failures = 0
    for n, (name, text) in enumerate(pages.items()):
        src, db = work / f"cleaning-{n}", work / f"cleaning-{n}-db"
        src.mkdir()
        (src / name).write_text(text, encoding="utf-8")
        (src / "fine.md").write_text(FINE, encoding="utf-8")
        done = index_within(src, db, env, limit) and indexed_paths(db) >= {name, "fine.md"}
        failures += not done
        print(f"    {name}: {'ok' if done else 'FAILED'}", file=sys.stderr)
        shutil.rmtree(src)
        shutil.rmtree(db, ignore_errors=True)
    return len(pages), failures


def cleaning_watch(work: Path, size: int, limit: float) -> tuple[int, int]:
    """A watcher given every hostile document at once, then an ordinary page (see the module doc)."""
    import signal

    src, db = work / "watched", work / "watched-db"
    src.mkdir()
    (src / "fine.md").write_text(FINE, encoding="utf-8")
    wanted = {*hostile_pages.pages(size), "later.md"}
    watcher = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(db), "--no-embed", "--watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(work / "cfg-watch")),
    )
    try:
        if not _wait(lambda: "fine.md" in indexed_paths(db), 60):
            return len(wanted), len(wanted)
        hostile_pages.write(src, size)
        (src / "later.md").write_text(FINE, encoding="utf-8")
        _wait(lambda: indexed_paths(db) >= wanted, limit)
        return len(wanted), len(wanted - indexed_paths(db))
    finally:
        watcher.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            watcher.wait(timeout=15)
        watcher.kill()  # one stuck in a pass (nothing once it has stopped)
        watcher.wait()


def _wait(condition: Any, seconds: float) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (asked every quarter second)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.25)
    return bool(condition())


# A name each; the sequences of it that must not reach the terminal (the bar shows the last 40
# characters of a name: the last two hide their sequence there).
TERMINAL_NAMES = [
    ("a\x1b]0;PWNED\x07\x1b[2J.md", ("\x1b]0;", "\x1b[2J", "\x07")),
    ("[link=mailto:x@evil.example]a.md", ("\x1b]8;",)),
    ("x[/bold].md", ()),  # a folder "x[" holding "bold].md": a closing tag with nothing open
    ("\u202eevil.md", ("\u202e",)),
    ("y" * 30 + "\x1b]0;PWNED\x07.md", ("\x1b]0;", "\x07")),
    ("z" * 35 + "[/x].md", ()),
]


def names_on_terminal(work: Path, limit: float) -> tuple[int, int]:
    """Each of TERMINAL_NAMES, the only file of a folder, indexed on a pseudo-terminal."""
    import pty

    failures = 0
    for n, (name, sequences) in enumerate(TERMINAL_NAMES):
        src = work / f"names-{n}"
        (src / name).parent.mkdir(parents=True)
        (src / name).write_text(FINE, encoding="utf-8")
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [*lancelot_command(), "index", str(src), str(work / f"names-{n}-db"), "--no-embed"],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=subprocess_env(TERM="xterm-256color", COLUMNS="160", LANCELOT_CONFIG_DIR=str(work / "cfg-names")),
        )
        os.close(follower)
        output = read_all(leader).decode("utf-8", "replace")
        os.close(leader)
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        bad = code != 0 or "MarkupError" in output or "Traceback" in output
        failures += bad or any(sequence in output for sequence in sequences)
    return len(TERMINAL_NAMES), failures


# -- main --------------------------------------------------------------------------------------------


def main() -> None:
    global TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrent", type=int, default=1000, help="searches per concurrent family")
    parser.add_argument(
        "--slow",
        type=int,
        default=200,
        help="connections per slow-client family (the server's cap is 256 open connections)",
    )
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds to wait for one reply")
    parser.add_argument("--cleaning-size", type=int, default=hostile_pages.SIZE, help="bytes of each hostile document")
    parser.add_argument(
        "--cleaning-limit", type=float, default=60.0, help="seconds one `lancelot index` of a hostile document may take"
    )
    parser.add_argument("--only", choices=("serve", "index"), help="run the families of one command (default: both)")
    args = parser.parse_args()
    TIMEOUT = args.timeout

    work = Path(tempfile.mkdtemp(prefix="lancelot-attacks-"))
    rows: list[tuple[str, int, int, float]] = []

    def run(name: str, fn: Any, *fn_args: Any) -> None:
        started = time.monotonic()
        attempts, failures = fn(*fn_args)
        rows.append((name, attempts, failures, time.monotonic() - started))
        print(f"  {name}: {attempts} attempts, {failures} failures", file=sys.stderr)

    try:
        if args.only != "serve":
            run("cleaning (index)", cleaning, work, args.cleaning_size, args.cleaning_limit)
            run("cleaning (index --watch)", cleaning_watch, work, args.cleaning_size, args.cleaning_limit)
            run("file names on a terminal (index)", names_on_terminal, work, args.cleaning_limit)
        if args.only != "index":
            serve_families(work, args, run, rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("| family | attempts | failures | seconds |")
    print("|---|---:|---:|---:|")
    for name, attempts, failures, seconds in rows:
        print(f"| {name} | {attempts} | {failures} | {seconds:.1f} |")
    print(f"| **total** | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} | {sum(r[3] for r in rows):.1f} |")


def serve_families(work: Path, args: Any, run: Any, rows: list[tuple[str, int, int, float]]) -> None:
    """The families against `lancelot serve` (stdio and HTTP) over an indexed copy of the samples."""
    from lancelot_cli.indexer import index_folder

    docs = work / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    (docs / "tagged.md").write_text("---\ntags: [a, b]\nkind: adr\n---\n# Refunds\n\nThe refund policy.\n")
    db = work / "db"
    index_folder(docs, str(db))
    before = hash_tree(db)
    cases = bad_arguments()

    stdio = Stdio(db, work / "cfg")
    try:
        stdio.initialize()
        run("bad arguments (stdio)", bad_args_stdio, stdio, cases)
        run("protocol abuse (stdio)", protocol_stdio, stdio)
        run("nested JSON (stdio)", nested_stdio, stdio)
        run("concurrent searches (stdio)", concurrent_stdio, stdio, args.concurrent)
        run("oversized lines (stdio)", oversized_lines, stdio)
        run("long phrasings (stdio)", long_phrasings, stdio)
        run("echo bounds (stdio)", echo_bounds, stdio)
    finally:
        stdio.stop()
    run("call before initialize (stdio)", pre_initialize, db, work / "cfg")
    run("odd cancellations (stdio)", odd_cancellations, db, work / "cfg")

    served = Http(db, work / "cfg")
    try:
        run("bad arguments (http)", bad_args_http, served, cases)
        run("http status cases", http_status, served)
        run("nested JSON (http)", nested_http, served)
        run("content types (http)", content_types, served)
        run("concurrent searches (http)", concurrent_http, served, args.concurrent)
        run("crafted bodies (http)", crafted_bodies, served)
    finally:
        served.stop()

    slow = Http(
        db,
        work / "cfg",
        LANCELOT_HTTP_HEADER_TIMEOUT="2",
        LANCELOT_HTTP_BODY_TIMEOUT="2",
        LANCELOT_HTTP_IDLE_TIMEOUT="2",
    )
    try:
        for name, (attempts, failures, seconds) in slow_clients(slow, args.slow, 2.0).items():
            rows.append((f"{name} (http)", attempts, failures, seconds))
    finally:
        slow.stop()
    changed = sum(1 for k, v in hash_tree(db).items() if before.get(k) != v) + len(set(before) - set(hash_tree(db)))
    rows.append(("database files changed", len(before), changed, 0.0))


if __name__ == "__main__":
    main()
