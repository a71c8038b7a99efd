"""`lancelot serve` over stdio: stdout carries MCP messages and nothing else.

While serving, the SDK writes the protocol through a private copy of fd 1 and points fd 1 itself
at stderr, so a flushed ``print`` from any library lands on stderr. What such a print leaves in
``sys.stdout``'s buffer would be flushed at exit, after the SDK has put fd 1 back; so once the
session ends, fd 1 is pointed at stderr for good. Logs go to stderr. The server exits 0 when the
client closes stdin.

Two answers the SDK does not give are added here (and one repair: a lone UTF-16 surrogate escape,
valid JSON grammar that the SDK's parser refuses, is read as U+FFFD): a line that is not JSON gets
a -32700 Parse error reply, and a JSON line that is not a JSON-RPC message a -32600 Invalid Request (the SDK
drops both silently, so a client would wait forever); a request before ``initialize`` gets an
error that says so instead of the SDK's bare "Invalid request parameters".
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lancelot_cli.server.transports.logs import configure_logging
from lancelot_cli.settings import Settings

__all__ = ["configure_logging", "run_stdio", "serve_session"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
NOT_INITIALIZED = (
    "Server not initialized: send `initialize` (then `notifications/initialized`) before "
    "any other request, as MCP clients do"
)


def run_stdio(settings: Settings, metrics_log: Path | None = None) -> None:
    from lancelot_cli.server.process.memory import log_tuning
    from lancelot_cli.startup import start_server

    tuned = start_server()  # first: while this is the only thread (see server/process/memory.py)
    from lancelot_cli.server.process import collector

    collector.pause()  # already paused when `lancelot serve` loaded (cli/app.py); here for any other caller
    collector.deadline()  # the collector is back by then even if the server is never called
    import anyio

    from lancelot_cli.server.app import build_server
    from lancelot_cli.server.metrics import Metrics

    server = build_server(settings, metrics=Metrics(metrics_log))
    configure_logging(settings)  # after MCPServer(), which installs its own root handler
    log_tuning(tuned)
    lowlevel = server._lowlevel_server
    lowlevel.middleware.append(_InitGate())
    try:
        anyio.run(_serve, lowlevel)
    except KeyboardInterrupt:  # Ctrl-C is how a person stops a server: not an error
        pass
    finally:
        _divert_stdout_for_good()


async def _serve(lowlevel: Any) -> None:
    await serve_session(lambda read, write: lowlevel.run(read, write, lowlevel.create_initialization_options()))


async def serve_session(run: Callable[[Any, Any], Awaitable[None]], stdin: Any = None, stdout: Any = None) -> None:
    """One MCP session over newline-delimited JSON-RPC: the SDK's stdio transport (on the process's
    stdin and stdout, or on the given text streams: a Unix socket's, see server/transports/unix.py) with bad
    lines answered instead of dropped; ``run(read, write)`` serves the session's messages.

    At the end of input the session ends only once every request read before it has been answered
    (or ``DRAIN_SECONDS`` have passed): the SDK ends a session when its input closes, cancelling
    the calls still running, so a client that writes its requests and closes stdin lost them."""
    if stdin is None:  # the process's stdin: read a line at a time, at most MAX_LINE bytes each
        from lancelot_cli.server.transports.stdin_lines import BoundedLines, claimed_stdin

        with claimed_stdin() as binary:
            await _session(run, BoundedLines(binary) if binary is not None else None, stdout)
    else:
        await _session(run, stdin, stdout)


async def _session(run: Callable[[Any, Any], Awaitable[None]], stdin: Any, stdout: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        if hasattr(stdin, "refuse"):  # BoundedLines: a line over the limit is answered, not read

            async def refuse(request_id: Any) -> None:
                await write_stream.send(_too_long_reply(request_id))

            stdin.refuse = refuse
        send, receive = anyio.create_memory_object_stream[Any](0)
        unanswered = _Unanswered(write_stream)

        async def relay() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        repaired = _without_lone_surrogates(item)
                        if repaired is not None:
                            unanswered.read(repaired)
                            await send.send(repaired)
                        else:
                            await write_stream.send(_error_reply(item))
                    else:
                        unanswered.read(item)
                        await send.send(item)
                with anyio.move_on_after(DRAIN_SECONDS):
                    await unanswered.none_left()

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            await run(receive, unanswered)
            tg.cancel_scope.cancel()


DRAIN_SECONDS = 120.0  # at the end of input, how long calls still running may take to be answered


class _Unanswered:
    """The session's write stream, keeping count of the requests read and not yet answered."""

    def __init__(self, inner: Any) -> None:
        import anyio

        self._inner = inner
        self._ids: set[Any] = set()
        self._changed = anyio.Event()

    def read(self, item: Any) -> None:
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        if method is None:
            return
        request_id = getattr(message, "id", None)
        if request_id is not None:
            self._ids.add(_hashable(request_id))
        elif method == "notifications/cancelled":  # the client wants no answer to it
            params = getattr(message, "params", None)
            self._ids.discard(
                _hashable(params.get("requestId") if isinstance(params, dict) else getattr(params, "request_id", None))
            )
            self._wake()

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        message = getattr(item, "message", None)
        answered = getattr(message, "id", None)
        if getattr(message, "method", None) is None and answered in self._ids:
            self._ids.discard(answered)  # a response or an error to one of the client's requests
            self._wake()

    async def none_left(self) -> None:
        while self._ids:
            await self._changed.wait()

    def _wake(self) -> None:
        import anyio

        self._changed.set()
        self._changed = anyio.Event()

    def __getattr__(self, name: str) -> Any:  # close, aclose, clone, the context manager: the stream's own
        return getattr(self._inner, name)

    async def __aenter__(self) -> Any:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)


def _hashable(request_id: object) -> object:
    """A JSON-RPC id as a set member. Ids are strings or numbers, but a notification is not checked
    by the SDK: ``{"requestId": {}}`` in a cancellation ended the server with ``TypeError:
    unhashable`` (issue 37). Anything else matches no request."""
    return request_id if isinstance(request_id, (str, int, float)) else None


def _error_reply(exc: Exception) -> Any:
    """The JSON-RPC error for a line the SDK could not read as a message."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    errors: list[dict[str, Any]] = []
    with contextlib.suppress(AttributeError, TypeError):
        errors = list(exc.errors())  # type: ignore[attr-defined]  # a pydantic ValidationError
    kinds = {error.get("type") for error in errors}
    if not errors or kinds & {"json_invalid", "recursion_loop"}:
        code = PARSE_ERROR
        message = (
            "Parse error: the line is not JSON"
            if "recursion_loop" not in kinds
            else "Parse error: the JSON is nested too deeply"
        )
        request_id = None
    else:
        code = INVALID_REQUEST
        message = "Invalid Request: the line is JSON but not a JSON-RPC 2.0 request, notification or response"
        request_id = _request_id(errors)
    return SessionMessage(
        types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
    )


def _too_long_reply(request_id: Any) -> Any:
    """The JSON-RPC error for a message over ``stdin_lines.MAX_LINE`` bytes (with its id, if found)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from lancelot_cli.server.transports.stdin_lines import MAX_LINE

    message = f"Invalid Request: a message is at most {MAX_LINE // (1024 * 1024)} MB over stdio; this one was not read"
    return SessionMessage(
        types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=INVALID_REQUEST, message=message))
    )


def _without_lone_surrogates(exc: Exception) -> Any:
    """The message of a line that is valid JSON but for a lone UTF-16 surrogate escape (``"\\ud800"``,
    half an emoji; the SDK's parser refuses it, and the client would get a reply without its id),
    each lone surrogate read as U+FFFD; None for any other unreadable line."""
    import json

    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from lancelot_cli.server.transports.surrogates import replace_lone

    try:
        errors = list(exc.errors())  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return None
    line = next((e.get("input") for e in errors if e.get("type") == "json_invalid"), None)
    if not isinstance(line, str) or "\\u" not in line.lower():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_python(replace_lone(json.loads(line)), by_name=False)
    except Exception:  # noqa: BLE001 - not JSON for Python either, or not a message: the usual error reply
        return None
    return SessionMessage(message)


def _inputs(errors: list[dict[str, Any]]) -> list[Any]:
    return [error["input"] for error in errors if "input" in error]


def _request_id(errors: list[dict[str, Any]]) -> int | str | None:
    """The id of a malformed request when it can be read, so the client can match the reply."""
    for value in _inputs(errors):
        if isinstance(value, dict):
            found = value.get("id")
            if isinstance(found, (str, int)) and not isinstance(found, bool):
                return found
    return None


class _InitGate:
    """Server middleware: the SDK refuses requests before ``initialize`` with a bare "Invalid request
    parameters"; say what is missing instead. (Its code, -32602, is kept for clients that key on it.)"""

    def __init__(self) -> None:
        self.initialized = False

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS

        if ctx.method == "initialize":
            result = await call_next(ctx)
            self.initialized = True
            return result
        try:
            return await call_next(ctx)
        except MCPError as exc:
            bare = exc.error.code == INVALID_PARAMS and exc.error.message == "Invalid request parameters"
            if self.initialized or not bare:
                raise
            raise MCPError(code=INVALID_PARAMS, message=NOT_INITIALIZED, data=ctx.method) from None


def _divert_stdout_for_good() -> None:
    """Send whatever is still buffered for stdout (flushed at exit) to stderr, never to the client."""
    try:
        sys.stderr.flush()
        os.dup2(sys.stderr.fileno(), 1)
    except (OSError, ValueError):  # no real descriptors (embedded use): nothing to protect
        pass
