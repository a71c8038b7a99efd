"""`lancelot serve --http`: the same tools over stateless Streamable HTTP, with the rules of
docs/design.md#spec-7.

The SDK's app does the MCP part (stateless, one JSON object per POST). In front of it, ``Guard``
applies Lancelot's rules itself, for every bind address (the SDK switches its Host/Origin checks
off for non-loopback binds, and answers GET with a never-ending event stream):

1. Host not allowed -> 403. Default list on a loopback bind: ``127.0.0.1:<port>``,
   ``localhost:<port>``, ``[::1]:<port>``; with another ``--host`` and no list, no Host check.
2. An ``Origin`` header not in ``LANCELOT_ALLOWED_ORIGINS`` -> 403 (with the list unset, any Origin).
3. Path other than ``/mcp`` -> 404. ``/mcp/`` is served as ``/mcp`` (no redirect: some clients
   would turn a redirected POST into a GET).
4. Method other than POST -> 405 with ``Allow: POST``.
5. Body over 64 KB -> 413, decided from Content-Length or while reading, before the whole body;
   a body not complete within ``body_timeout`` seconds of the headers -> 408 and the connection closed.
6. A media type other than ``application/json`` (case-insensitive, parameters allowed; a charset
   must be UTF-8) -> 415. The SDK is handed the canonical ``application/json``.
7. A body that is not acceptable JSON (not UTF-8, not JSON, nested deeper than ``MAX_DEPTH``, or
   not an object or array) -> 400 with a -32700 Parse error.
8. ``MCP-Protocol-Version`` the SDK does not speak -> 400; a missing one is served as 2025-03-26.
Error replies are JSON-RPC error objects. Nothing is written to stdout. Header and idle timeouts
and the connection cap live in the uvicorn protocol (``connections.py``); the body checks of 6 and 7
in ``http_body.py``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from lancelot_cli.server.http_body import BATCH, json_problem, media_type_problem, repaired
from lancelot_cli.server.http_body import _depth as _depth  # (tests/test_linear_passes.py imports it here)
from lancelot_cli.settings import Settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024
MAX_HEAD = 16 * 1024  # bytes of request line and headers
CLOSE = [(b"connection", b"close")]
ENDPOINT = "/mcp"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}

log = logging.getLogger(__name__)


def default_allowed_hosts(host: str, port: int) -> set[str] | None:
    """Host values allowed when LANCELOT_ALLOWED_HOSTS is unset: loopback names, or None (no check)."""
    if host in LOOPBACK:
        return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    return None


async def _reply(
    send: Send, status: int, message: str, code: int = -32600, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware that enforces the HTTP rules, then hands the request to the MCP app.

    Args:
        build_inner: makes a fresh SDK app; called at each lifespan startup (the SDK's session
            manager runs once per app, and AWS Lambda adapters run a lifespan per invocation).
        allowed_hosts: lower-cased Host values, or None for no Host check.
        allowed_origins: lower-cased Origin values allowed.
        body_timeout: seconds to read the body once the headers are in (0: no limit).
        route: says whether a request is for the MCP endpoint (default: path ``/mcp`` or ``/mcp/``).
    """

    def __init__(
        self,
        build_inner: Callable[[], ASGIApp],
        *,
        allowed_hosts: set[str] | None,
        allowed_origins: set[str],
        supported_versions: set[str],
        route: Callable[[Scope], bool] | None = None,
        body_timeout: float = 0,
    ) -> None:
        self._build_inner = build_inner
        self.body_timeout = body_timeout
        self._route = route or _is_endpoint
        self._inner: ASGIApp | None = None
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        self.supported_versions = supported_versions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            self._inner = self._build_inner()
            await self._inner(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        headers: dict[str, str] = {}
        head_bytes = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
        for raw_name, raw_value in scope.get("headers", []):
            headers.setdefault(raw_name.decode("latin-1").lower(), raw_value.decode("latin-1"))
            head_bytes += len(raw_name) + len(raw_value) + 4
        refused = self._refusal(scope, headers, head_bytes)
        if refused is not None:
            status, message, extra = refused
            return await _reply(send, status, message, headers=extra)
        body = await self._body(receive, send)
        if body is None:  # answered already, or the client left
            return
        problem = json_problem(body)
        if problem:
            return await _reply(send, 400, problem, code=-32700)
        if body.lstrip()[:1] == b"[":  # the SDK answered a batch with a pydantic dump and -32602
            return await _reply(send, 400, BATCH)
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in self.supported_versions:
            supported = ", ".join(sorted(self.supported_versions))
            return await _reply(send, 400, f"Unsupported MCP-Protocol-Version {version!r}; supported: {supported}")
        if self._inner is None:
            return await _reply(send, 503, "Server is starting", code=-32603)
        # The SDK compares the media type case-sensitively: hand it the canonical form.
        raw_headers = [(name, value) for name, value in scope.get("headers", []) if name.lower() != b"content-type"]
        raw_headers.append((b"content-type", b"application/json"))
        await self._inner(
            {**scope, "path": ENDPOINT, "raw_path": ENDPOINT.encode(), "headers": raw_headers},
            _replay(repaired(body), receive),
            send,
        )

    def _refusal(
        self, scope: Scope, headers: dict[str, str], head_bytes: int
    ) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """(status, message, extra headers) for a request refused on its head alone, else None."""
        # uvicorn's h11 limit holds only while a head is incomplete: one that arrives whole is checked here.
        if head_bytes > MAX_HEAD:
            return 431, f"Request head over {MAX_HEAD} bytes", CLOSE
        # Both framings at once is how request smuggling gets past a proxy (RFC 9112 §6.3): refuse, close.
        if "transfer-encoding" in headers and "content-length" in headers:
            return 400, "Transfer-Encoding with Content-Length: send one of them", CLOSE
        if self.allowed_hosts is not None and headers.get("host", "").lower() not in self.allowed_hosts:
            return 403, "Host not allowed (set LANCELOT_ALLOWED_HOSTS)", []
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.allowed_origins:
            return 403, "Origin not allowed (set LANCELOT_ALLOWED_ORIGINS)", []
        if not self._route(scope):
            return 404, "Not found: this is not the MCP endpoint", []
        if scope["method"] != "POST":
            return 405, "Method not allowed: this stateless server takes POST only", [(b"allow", b"POST")]
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            return 413, f"Request body over {MAX_BODY} bytes", []
        problem = media_type_problem(headers.get("content-type"))
        return (415, problem, []) if problem else None

    async def _body(self, receive: Receive, send: Send) -> bytes | None:
        """The request body within the size and time limits; None when it answered or the client left."""
        body = bytearray()
        with anyio.move_on_after(self.body_timeout or None) as reading:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                body += message.get("body", b"")
                if len(body) > MAX_BODY:
                    await _reply(send, 413, f"Request body over {MAX_BODY} bytes")
                    return None
                if not message.get("more_body", False):
                    break
        if reading.cancelled_caught:  # a client stalling mid-body holds a connection: drop it
            await _reply(send, 408, f"Request body not received within {self.body_timeout:g} s", headers=CLOSE)
            return None
        return bytes(body)


def _is_endpoint(scope: Scope) -> bool:
    return scope["path"] in (ENDPOINT, ENDPOINT + "/")


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def create_asgi_app(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 3000,
    engine: Any = None,
    route: Callable[[Scope], bool] | None = None,
    metrics: Any = None,
) -> Guard:
    """The HTTP app: ``Guard`` in front of the SDK's stateless JSON Streamable HTTP app."""
    from mcp.server.transport_security import TransportSecuritySettings

    from lancelot_cli.server.app import build_server
    from lancelot_cli.server.protocol import supported_versions

    server = build_server(settings, engine, metrics=metrics)

    def build_inner() -> ASGIApp:
        # Lancelot checks Host and Origin itself (above), for every bind address.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        return server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=security,
            host=host,
            max_request_body_size=MAX_BODY,
        )

    return Guard(
        build_inner,
        allowed_hosts=_allowed_hosts(settings, host, port),
        allowed_origins={o.lower() for o in settings.allowed_origins},
        supported_versions=set(supported_versions()),
        route=route,
        body_timeout=settings.http_body_timeout,
    )


@dataclass(frozen=True)
class AppFactory:
    """Makes the HTTP app inside a worker of `serve --http --workers N`. uvicorn calls it there
    (``factory=True``); a module-level class of plain fields, so that it pickles into the spawned
    process."""

    settings: Settings
    host: str
    port: int
    metrics_log: Path | None
    parent_pid: int

    def __call__(self) -> Guard:
        from uvicorn.config import STARTUP_FAILURE

        from lancelot_cli.server.logs import configure_logging
        from lancelot_cli.server.metrics import Metrics
        from lancelot_cli.server.workers import watch_parent

        watch_parent(self.parent_pid)
        configure_logging(self.settings)
        try:
            metrics = Metrics(self.metrics_log, pid=os.getpid())
            return create_asgi_app(self.settings, host=self.host, port=self.port, metrics=metrics)
        except Exception as exc:  # noqa: BLE001 - one line, and the parent stops instead of restarting it
            sys.stderr.write(f"lancelot: error: HTTP worker {os.getpid()} could not start: {exc}\n")
            sys.exit(STARTUP_FAILURE)


def run_http(
    settings: Settings, host: str = "127.0.0.1", port: int = 3000, metrics_log: Path | None = None, workers: int = 1
) -> None:
    """Serve until SIGINT/SIGTERM, in this process or (``workers`` > 1) in that many worker
    processes sharing the sockets. Logs (uvicorn's too) go to stderr; nothing to stdout."""
    from lancelot_cli.server.memory import log_tuning, tune_malloc

    # first: while this is the only thread (see server.memory); workers get it from the environment
    tuned = tune_malloc() if workers == 1 else []
    from lancelot_cli.server.connections import GuardedConfig, SignalStopServer, bind
    from lancelot_cli.server.logs import configure_logging

    sockets = bind(host, port)  # first: a port in use is one line, before anything else is printed
    if port == 0:
        port = sockets[0].getsockname()[1]
    app: Any = None
    if workers == 1:
        from lancelot_cli.server.metrics import Metrics

        app = create_asgi_app(settings, host=host, port=port, metrics=Metrics(metrics_log))
    configure_logging(settings)
    log_tuning(tuned)
    if _allowed_hosts(settings, host, port) is None:
        sys.stderr.write(
            f"lancelot: warning: listening on {host} with no LANCELOT_ALLOWED_HOSTS: the Host header is not "
            f"checked. HTTP mode has no authentication; put it behind something that has.\n"
        )
    processes = f", {workers} worker processes" if workers > 1 else ""
    sys.stderr.write(f"lancelot: serving MCP on http://{_display(host)}:{port}{ENDPOINT}{processes} (Ctrl-C to stop)\n")
    level = "debug" if settings.log_level_number <= logging.DEBUG else "warning"
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_config": None,
        "access_log": False,
        "lifespan": "on",
        "log_level": level,
        "server_header": False,
        "timeout_keep_alive": settings.http_idle_timeout,
        "h11_max_incomplete_event_size": MAX_HEAD,  # request line + headers
        "header_timeout": settings.http_header_timeout,
        "max_connections": settings.http_max_connections,
        "workers": workers,  # given, so that uvicorn does not read WEB_CONCURRENCY
    }
    if workers == 1:
        SignalStopServer(GuardedConfig(app, **options)).run(sockets=sockets)
        return
    from lancelot_cli.errors import LancelotError
    from lancelot_cli.server.workers import ACCEPT_BATCH, HEALTHCHECK_SECONDS, Supervisor, malloc_environ

    # asyncio's loop, whose accept batch is the backlog: see server.workers
    options.update(backlog=ACCEPT_BATCH, loop="asyncio", timeout_worker_healthcheck=HEALTHCHECK_SECONDS)

    os.environ.update(malloc_environ(os.environ))  # read by each worker's glibc as it starts
    factory = AppFactory(settings, host, port, metrics_log, os.getpid())
    supervisor = Supervisor(GuardedConfig(factory, factory=True, **options), sockets)
    supervisor.run()
    if supervisor.failed:
        raise LancelotError(f"{supervisor.failed}; the server stopped")


def _allowed_hosts(settings: Settings, host: str, port: int) -> set[str] | None:
    if settings.allowed_hosts:
        return {h.lower() for h in settings.allowed_hosts}
    return default_allowed_hosts(host, port)


def _display(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
