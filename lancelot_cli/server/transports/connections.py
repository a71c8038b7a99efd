"""HTTP connections for `serve --http`: the listening sockets, and a uvicorn protocol that sheds slow clients.

uvicorn closes a keep-alive connection that stays idle (``timeout_keep_alive``), but has no limit on
how long a client may take to send a request's headers, and no cap on open connections (its
``limit_concurrency`` answers 503 only once a request's headers are in). So a client that connects
and sends nothing, or sends its headers a byte at a time (slowloris), held a file descriptor for
ever, and ~20,000 of them exhausted the process's descriptors. ``GuardedH11Protocol`` adds both:

* headers must be complete within ``header_timeout`` seconds of the connection opening, or of the
  first byte of the next request on a keep-alive connection; otherwise 408 and the connection is
  closed. Between requests only the idle limit applies (uvicorn's ``timeout_keep_alive``): a
  deadline started at the reply would close a kept-alive connection after ``header_timeout`` idle
  seconds whatever the idle limit said, and a client's next request, sent as it closed, failed;
* with ``max_connections`` connections open, a new one is answered 503 at once and closed.

The body-read deadline is enforced by ``Guard`` (it reads the body), and idle keep-alive by uvicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import socket
from collections.abc import Iterator
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from lancelot_cli.errors import LancelotError


def _raw_reply(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        f"connection: close\r\n\r\n"
    ).encode()
    return head + body


class GuardedConfig(uvicorn.Config):
    """uvicorn's Config with the two limits ``GuardedH11Protocol`` reads (0 s: no header deadline).

    The protocol is a module-level class that takes its limits from here, not from a closure, so
    that the Config pickles into the worker processes of ``serve --http --workers N``."""

    def __init__(self, app: Any, *, header_timeout: float, max_connections: int, **kwargs: Any) -> None:
        super().__init__(app, http=GuardedH11Protocol, **kwargs)
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self.too_slow = _raw_reply(408, "Request Timeout", f"Request headers not received within {header_timeout:g} s")
        self.busy = _raw_reply(
            503, "Service Unavailable", f"Too many connections (over {max_connections}); retry shortly"
        )


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a connection cap, from its ``GuardedConfig``."""

    _deadline: asyncio.TimerHandle | None = None
    _between_requests = False  # a reply went out: the next request's first byte starts its deadline

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        if not isinstance(config, GuardedConfig):
            raise TypeError("GuardedH11Protocol needs a GuardedConfig (its limits live there)")
        super().__init__(config, *args, **kwargs)
        self.limits = config

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            transport.write(self.limits.busy)
            transport.close()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's headers arrived: the app has it now
            self._disarm()

    def data_received(self, data: bytes) -> None:
        if self._between_requests and data:
            self._between_requests = False
            self._arm()  # the next request's headers get the same deadline, from its first byte
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.our_state is h11.IDLE:
            self._between_requests = True  # idle now: uvicorn's keep-alive limit closes it

    def _arm(self) -> None:
        self._disarm()
        if self.limits.header_timeout > 0:
            self._deadline = self.loop.call_later(self.limits.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            if self.conn.our_state is h11.IDLE:
                self.transport.write(self.limits.too_slow)
            self.transport.close()


class SignalStopServer(uvicorn.Server):
    """uvicorn re-raises a caught SIGINT/SIGTERM after its graceful shutdown, so SIGTERM would
    kill the process (exit -15). For `serve --http` a signal is the normal way to stop: exit 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()  # uvicorn 0.54's list of signals to re-raise


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` (every address the name resolves to), bound before
    anything is printed so that a port in use is one clear error.

    Raises:
        LancelotError: the address is in use, not available here, or not allowed.
    """
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise LancelotError(
            f"cannot listen on {host!r}: {exc.strerror}; give --host an address such as 127.0.0.1"
        ) from None
    sockets: list[socket.socket] = []
    seen: set[Any] = set()
    try:
        for family, kind, _proto, _name, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only then (else +40 ms a reply).
            sock = socket.socket(family, kind, socket.IPPROTO_TCP)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.set_inheritable(False)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        shown = f"[{host}]" if ":" in host else host
        if exc.errno == errno.EADDRINUSE:
            raise LancelotError(
                f"port {port} on {shown} is already in use; stop the other server or pick another port with --http PORT"
            ) from None
        raise LancelotError(
            f"cannot listen on {shown}:{port}: {exc.strerror or exc}; pick another --host or --http PORT"
        ) from None
    return sockets
