"""The background server's client: one MCP ``tools/call`` over its Unix socket, the tool's whole reply
(the command's ``--json`` form) or None to run in-process (the package doc says when and why)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from lancelot_cli import errors
from lancelot_cli.background.daemon import socket_path, want
from lancelot_cli.requests import DATABASE_KEY, ERROR_KEY, WHOLE_REPLY
from lancelot_cli.settings import Settings

PROTOCOL_VERSION = "2025-11-25"  # the newest MCP revision with the initialize handshake (tests check the SDK has it)
CONNECT_TIMEOUT = 0.05  # a live server accepts at once (AF_UNIX)
HANDSHAKE_TIMEOUT = 2.0  # no `initialize` answer by then: stuck, run in-process
# No reply to the call by then: stuck mid-request (issue 46: `kill -STOP` hung the command for ever),
# so its socket is removed (it exits once it runs again) and the call runs in-process. Above the
# slowest answer a working server gives: an embeddings endpoint that times out (30 s) on a retry
# started at the end of the 30-s retry budget (providers.py), or a large table and a local model
# opened on a slow machine.
REPLY_TIMEOUT = 90.0
MAX_REPLY = 64 << 20


def call(settings: Settings, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool's whole reply (the `--json` form) from the background server, None to run in-process.
    An engine error the server reports is raised here as the LancelotError it was."""
    path = socket_path(settings)
    location = settings.database
    if path is None or location is None:  # no database: in-process says how to name one
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with sock:
        try:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):  # none yet, or a stale socket file
            want(settings, path)
            return None
        except OSError:
            return None
        try:
            result = _exchange(sock, tool, dict(arguments), location.uri)
        except _NoReply:
            _retire(path)
            return None
        except (OSError, ValueError, EOFError):  # gone, stuck, or an unreadable reply: in-process
            return None
    return _reply(result)


def initialize_request(request_id: int, client: str, version: str = "1") -> dict[str, Any]:
    """The ``initialize`` request of a raw JSON-RPC client of `lancelot serve` (this module, the docs'
    sample session, the benchmarks): the handshake revision the SDK is checked to have."""
    info = {"name": client, "version": version}
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _exchange(sock: socket.socket, tool: str, arguments: dict[str, Any], database: str) -> Any:
    lines = _lines(sock)
    sock.settimeout(HANDSHAKE_TIMEOUT)
    _send(sock, initialize_request(1, "lancelot-cli", _version()))
    _answer(lines, 1)
    _send(sock, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(
        sock,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {**WHOLE_REPLY, DATABASE_KEY: database}},
        },
    )
    sock.settimeout(REPLY_TIMEOUT)  # a long search is fine; Ctrl-C ends the wait sooner
    try:
        return _answer(lines, 2)
    except TimeoutError:
        raise _NoReply from None


class _NoReply(Exception):
    """The server took the call and gave no reply within ``REPLY_TIMEOUT``."""


def _retire(path: str) -> None:
    """A server stuck mid-request: its socket removed, so it exits and the next command starts another."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    sys.stderr.write(
        f"lancelot: the background server gave no answer in {REPLY_TIMEOUT:g} s; answering here (it was told to exit)\n"
    )
    sys.stderr.flush()


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")


def _lines(sock: socket.socket) -> Iterator[bytes]:
    reader = sock.makefile("rb")
    while True:
        line = reader.readline(MAX_REPLY)
        if not line.endswith(b"\n"):
            raise EOFError("the server closed the connection")
        yield line


def _answer(lines: Iterator[bytes], request_id: int) -> Any:
    """The result of request ``request_id`` (notifications in between are skipped)."""
    for line in lines:
        message = json.loads(line)
        if isinstance(message, dict) and message.get("id") == request_id:
            if "result" not in message:
                raise ValueError(f"the server refused the request: {message.get('error')}")
            return message["result"]
    raise EOFError("no answer")


def _reply(result: Any) -> dict[str, Any] | None:
    if not isinstance(result, dict):
        return None
    if result.get("isError"):
        found = (result.get("_meta") or {}).get(ERROR_KEY)
        if isinstance(found, dict):
            raise _error(found)
        return None  # arguments the tool rejects, or an unexpected failure: in-process says it our way
    whole = result.get("structuredContent")
    return whole if isinstance(whole, dict) else None


def _error(found: dict[str, Any]) -> errors.LancelotError:
    kinds = {kind.__name__: kind for kind in _subclasses(errors.LancelotError)}
    kind = kinds.get(str(found.get("kind")), errors.LancelotError)
    hint = found.get("hint")
    return kind(str(found.get("message", "")), hint=hint if isinstance(hint, str) else None)


def _subclasses(kind: type[errors.LancelotError]) -> Iterator[type[errors.LancelotError]]:
    yield kind
    for sub in kind.__subclasses__():
        yield from _subclasses(sub)


def _version() -> str:
    from lancelot_cli._version import __version__

    return __version__
