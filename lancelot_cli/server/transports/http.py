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

Login (issue 50, ``auth.py``): with ``LANCELOT_HTTP_TOKENS`` or the ``LANCELOT_OAUTH_*`` settings
set, a request to ``/mcp`` that passed 1-3 and carries no accepted ``Authorization: Bearer`` token
-> 401 with ``WWW-Authenticate``; the header is removed before the SDK sees the request. With OAuth
on, the protected-resource metadata (``oauth.py``) is served to anyone who passed 1 and 2.

``serve --http`` also answers ``GET /healthz`` (200, before the Host and Origin checks: a load
balancer probes by address; no login, no database) and, with ``LANCELOT_METRICS`` on,
``GET /metrics`` (Prometheus text, ``exposition.py``; after the Host and Origin checks, behind the
login). The Lambda handler serves neither.

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

from lancelot_cli._version import __version__
from lancelot_cli.errors import LancelotError
from lancelot_cli.server.transports.auth import Login, switch
from lancelot_cli.server.transports.exposition import CONTENT_TYPE, CountingMetrics, served_versions
from lancelot_cli.server.transports.http_body import BATCH, json_problem, media_type_problem, repaired
from lancelot_cli.server.transports.http_body import _depth as _depth  # (tests/test_linear_passes.py imports it here)
from lancelot_cli.settings import Settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Refused = tuple[int, str, list[tuple[bytes, bytes]]]

MAX_BODY = 64 * 1024
MAX_HEAD = 16 * 1024  # bytes of request line and headers
CLOSE = [(b"connection", b"close")]
DROPPED_HEADERS = (b"content-type", b"authorization")
ENDPOINT = "/mcp"
HEALTH = "/healthz"
METRICS = "/metrics"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
READ_METHODS = (b"allow", b"GET, HEAD")

log = logging.getLogger(__name__)


def default_allowed_hosts(host: str, port: int) -> set[str] | None:
    """Host values allowed when LANCELOT_ALLOWED_HOSTS is unset: loopback names, or None (no check)."""
    if host in LOOPBACK:
        return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    return None


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` listens on this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    import ipaddress

    if host.lower() in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def _plain(send: Send, status: int, content_type: bytes, body: bytes, head_only: bool = False) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head_only else body})


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
        login: the bearer-token check for ``/mcp`` and ``/metrics``, or None (no login).
        health: answer ``GET /healthz`` (`serve --http`; not the Lambda handler, whose every path may be MCP).
        metrics: counts each reply's status; with ``metrics_page``, served at ``GET /metrics``.
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
        login: Login | None = None,
        health: bool = False,
        metrics: CountingMetrics | None = None,
        metrics_page: bool = False,
    ) -> None:
        self._build_inner = build_inner
        self.login = login
        self.health = health
        self.metrics = metrics
        self.metrics_page = metrics_page and metrics is not None
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
        if self.metrics is not None:
            send = _counted(send, self.metrics)
        headers: dict[str, str] = {}
        head_bytes = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
        for raw_name, raw_value in scope.get("headers", []):
            headers.setdefault(raw_name.decode("latin-1").lower(), raw_value.decode("latin-1"))
            head_bytes += len(raw_name) + len(raw_value) + 4
        refused = self._framing_refusal(headers, head_bytes)
        if refused is None and self.health and scope["path"] == HEALTH:
            return await self._read_only_page(scope, send, b"text/plain; charset=utf-8", b"ok\n")
        refused = refused or self._origin_refusal(headers)
        oauth = self.login.oauth if self.login is not None else None
        if refused is None and oauth is not None and scope["path"] in oauth.metadata_paths:
            # RFC 9728: for anyone, so that a client finds the authorization server
            return await self._read_only_page(scope, send, b"application/json", oauth.metadata)
        if refused is None and self.metrics_page and scope["path"] == METRICS:
            refused = await self._login_refusal(headers)
            if refused is None:
                assert self.metrics is not None  # (metrics_page implies it)
                return await self._read_only_page(scope, send, CONTENT_TYPE, self.metrics.exposition(__version__))
        if refused is None and not self._route(scope):
            refused = 404, "Not found: this is not the MCP endpoint", []
        refused = refused or await self._login_refusal(headers) or self._request_refusal(scope, headers)
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
        # and the token stays here: nothing after the login needs it, so nothing after can leak it
        raw_headers = [(name, value) for name, value in scope.get("headers", []) if name.lower() not in DROPPED_HEADERS]
        raw_headers.append((b"content-type", b"application/json"))
        await self._inner(
            {**scope, "path": ENDPOINT, "raw_path": ENDPOINT.encode(), "headers": raw_headers},
            _replay(repaired(body), receive),
            send,
        )

    # Each ``*_refusal`` gives (status, message, extra headers) for a request refused on its head
    # alone, else None; ``__call__`` asks them in the order of the module docstring.

    @staticmethod
    def _framing_refusal(headers: dict[str, str], head_bytes: int) -> Refused | None:
        # uvicorn's h11 limit holds only while a head is incomplete: one that arrives whole is checked here.
        if head_bytes > MAX_HEAD:
            return 431, f"Request head over {MAX_HEAD} bytes", CLOSE
        # Both framings at once is how request smuggling gets past a proxy (RFC 9112 §6.3): refuse, close.
        if "transfer-encoding" in headers and "content-length" in headers:
            return 400, "Transfer-Encoding with Content-Length: send one of them", CLOSE
        return None

    def _origin_refusal(self, headers: dict[str, str]) -> Refused | None:
        if self.allowed_hosts is not None and headers.get("host", "").lower() not in self.allowed_hosts:
            return 403, "Host not allowed (set LANCELOT_ALLOWED_HOSTS)", []
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.allowed_origins:
            return 403, "Origin not allowed (set LANCELOT_ALLOWED_ORIGINS)", []
        return None

    async def _login_refusal(self, headers: dict[str, str]) -> Refused | None:
        refusal = await self.login.refusal(headers.get("authorization")) if self.login is not None else None
        return None if refusal is None else (refusal.status, refusal.message, refusal.headers)

    def _request_refusal(self, scope: Scope, headers: dict[str, str]) -> Refused | None:
        if scope["method"] != "POST":
            return 405, "Method not allowed: this stateless server takes POST only", [(b"allow", b"POST")]
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            return 413, f"Request body over {MAX_BODY} bytes", []
        problem = media_type_problem(headers.get("content-type"))
        return (415, problem, []) if problem else None

    @staticmethod
    async def _read_only_page(scope: Scope, send: Send, content_type: bytes, body: bytes) -> None:
        """``/healthz`` and ``/metrics``: GET and HEAD only (a body sent with them is not read)."""
        if scope["method"] not in ("GET", "HEAD"):
            return await _reply(send, 405, "Method not allowed: GET or HEAD", headers=[READ_METHODS])
        await _plain(send, 200, content_type, body, head_only=scope["method"] == "HEAD")

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


def _counted(send: Send, metrics: CountingMetrics) -> Send:
    async def counted(message: Message) -> None:
        if message["type"] == "http.response.start":
            metrics.answered(int(message["status"]))
        await send(message)

    return counted


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
    metrics: CountingMetrics | None = None,
    pages: bool = True,
) -> Guard:
    """The HTTP app: ``Guard`` in front of the SDK's stateless JSON Streamable HTTP app, with the
    login of ``LANCELOT_HTTP_TOKENS``; ``pages``: also ``/healthz`` and (``LANCELOT_METRICS``) ``/metrics``.

    Raises:
        ConfigError: a malformed token or switch (one line, no token in it).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    from lancelot_cli.server.app import build_server
    from lancelot_cli.server.protocol import supported_versions

    login = _login(settings)
    metrics_page = pages and switch("LANCELOT_METRICS", settings.metrics)
    metrics = metrics or CountingMetrics()
    if engine is None:  # made here (it opens nothing yet) so that /metrics can say what it read
        from lancelot_cli.engine import Engine

        engine = Engine(settings)
    metrics.table_versions = served_versions(settings.table, settings.table_version, engine)
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
        login=login,
        health=pages,
        metrics=metrics,
        metrics_page=metrics_page,
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

        from lancelot_cli.server.transports.logs import configure_logging
        from lancelot_cli.server.transports.workers import watch_parent
        from lancelot_cli.startup import start

        start()  # a worker is a fresh process: the lancedb import deferral (issue 48 #4)
        watch_parent(self.parent_pid)
        configure_logging(self.settings)
        try:
            metrics = CountingMetrics(self.metrics_log, pid=os.getpid())
            return create_asgi_app(self.settings, host=self.host, port=self.port, metrics=metrics)
        except Exception as exc:  # noqa: BLE001 - one line, and the parent stops instead of restarting it
            sys.stderr.write(f"lancelot: error: HTTP worker {os.getpid()} could not start: {exc}\n")
            sys.exit(STARTUP_FAILURE)


def run_http(
    settings: Settings, host: str = "127.0.0.1", port: int = 3000, metrics_log: Path | None = None, workers: int = 1
) -> None:
    """Serve until SIGINT/SIGTERM, in this process or (``workers`` > 1) in that many worker
    processes sharing the sockets. Logs (uvicorn's too) go to stderr; nothing to stdout."""
    from lancelot_cli.server.process.memory import log_tuning, tune_malloc

    # first: while this is the only thread (see server/process/memory.py); workers get it from the environment
    tuned = tune_malloc() if workers == 1 else []
    from lancelot_cli.server.transports.connections import GuardedConfig, SignalStopServer, bind
    from lancelot_cli.server.transports.logs import configure_logging

    login = _login(settings)  # first: a bad token or switch is one line
    switch("LANCELOT_METRICS", settings.metrics)
    if login is None and not is_loopback(host) and not switch("LANCELOT_HTTP_NO_LOGIN", settings.http_no_login):
        raise LancelotError(
            f"--host {host} would let anyone who can reach the port read the database: set "
            f"LANCELOT_HTTP_TOKENS (a request then needs one) or LANCELOT_OAUTH_ISSUER and "
            f"LANCELOT_OAUTH_RESOURCE, or LANCELOT_HTTP_NO_LOGIN=1 when a proxy in front authenticates"
        )
    sockets = bind(host, port)  # first: a port in use is one line, before anything else is printed
    if port == 0:
        port = sockets[0].getsockname()[1]
    app: Any = None
    if workers == 1:
        app = create_asgi_app(settings, host=host, port=port, metrics=CountingMetrics(metrics_log))
    configure_logging(settings)
    log_tuning(tuned)
    if _allowed_hosts(settings, host, port) is None:
        unguarded = " HTTP mode has no login here; put it behind something that has." if login is None else ""
        sys.stderr.write(
            f"lancelot: warning: listening on {host} with no LANCELOT_ALLOWED_HOSTS: the Host header is not "
            f"checked.{unguarded}\n"
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
    from lancelot_cli.server.transports.workers import ACCEPT_BATCH, HEALTHCHECK_SECONDS, Supervisor, malloc_environ

    # asyncio's loop, whose accept batch is the backlog: see server.workers
    options.update(backlog=ACCEPT_BATCH, loop="asyncio", timeout_worker_healthcheck=HEALTHCHECK_SECONDS)

    os.environ.update(malloc_environ(os.environ))  # read by each worker's glibc as it starts
    factory = AppFactory(settings, host, port, metrics_log, os.getpid())
    supervisor = Supervisor(GuardedConfig(factory, factory=True, **options), sockets)
    supervisor.run()
    if supervisor.failed:
        raise LancelotError(f"{supervisor.failed}; the server stopped")


def _login(settings: Settings) -> Login | None:
    return Login.from_settings(
        settings.http_tokens, settings.oauth_issuer, settings.oauth_resource, settings.oauth_jwks_url
    )


def _allowed_hosts(settings: Settings, host: str, port: int) -> set[str] | None:
    if settings.allowed_hosts:
        return {h.lower() for h in settings.allowed_hosts}
    return default_allowed_hosts(host, port)


def _display(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
