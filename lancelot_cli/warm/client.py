"""The CLI's side of the warm process: a stand-in for the Engine, and starting the process.

``connect(settings)`` (cli/read.py) returns a ``WarmEngine`` when a warm process for this code
answers on its socket; its ``search``, ``query``, ``document`` and ``status`` send the call there
and return the model (or raise the LancelotError) the engine gave, so the CLI renders it exactly
as it would its own. Anything wrong on the way (no answer within a second, a closed connection, a
reply it may not read) runs the call in-process instead: never a worse answer than without it.

When nothing answered, the command runs in-process as always and ``start_pending`` (called by
``cli.app.main`` once the output is written) starts a detached warm process for the next command.
This module imports neither lancedb nor the engine unless it has to run a call itself.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

from lancelot_cli.errors import LancelotError
from lancelot_cli.settings import Settings
from lancelot_cli.warm import protocol, runtime

CONNECT_TIMEOUT = 0.05  # a live warm process accepts at once (AF_UNIX)
ACK_TIMEOUT = 1.0  # a warm process answering someone else's long search, or stuck: run in-process

_pending: tuple[str, float] | None = None  # (fingerprint, minutes) of a warm process to start at exit


def connect(settings: Settings) -> WarmEngine | None:
    """A stand-in connected to this code's warm process, or None (then the caller runs in-process;
    when no warm process exists yet, one is started by ``start_pending``)."""
    global _pending
    if settings.warm_minutes <= 0 or not runtime.supported():
        return None
    try:
        where = runtime.folder()
        code = runtime.fingerprint()
    except OSError:  # no temporary folder, an unreadable package folder: in-process
        return None
    place = runtime.place(where, code)
    if place is None:
        return None
    if not os.path.lexists(where):
        if os.path.isdir(os.path.dirname(where)):  # the warm process makes it (0700) when it starts
            _pending = (code, settings.warm_minutes)
        return None
    if not runtime.safe(where):  # not ours alone: no warm process, and none is started
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(place.socket)
        sock.settimeout(ACK_TIMEOUT)
        if _ours(sock) and sock.recv(1) == protocol.ACK:
            return WarmEngine(settings, sock)
    except (FileNotFoundError, ConnectionRefusedError):  # none yet, or a stale socket file it will replace
        _pending = (code, settings.warm_minutes)
    except OSError:  # busy (no greeting in time) or anything else: this time in-process
        pass
    sock.close()
    return None


def _ours(sock: socket.socket) -> bool:
    found = protocol.peer(sock)
    return found is None or found[1] == os.getuid()


class WarmEngine:
    """The Engine's read methods, answered by the warm process (see the module doc)."""

    def __init__(self, settings: Settings, sock: socket.socket) -> None:
        self.settings = settings
        self._sock: socket.socket | None = sock
        self._engine: Any = None

    def search(self, query: str, **options: Any) -> Any:
        return self._call("search", {"query": query, **options})

    def query(self, question: str, **options: Any) -> Any:
        return self._call("query", {"question": question, **options})

    def document(self, source: str | None = None, **options: Any) -> Any:
        return self._call("document", {"source": source, **options})

    def status(self, verbose: bool = False) -> Any:
        return self._call("status", {"verbose": verbose})

    def _call(self, method: str, options: dict[str, Any]) -> Any:
        sock, self._sock = self._sock, None  # one request per connection; a second call runs here
        if sock is not None:
            try:
                request = {"protocol": runtime.PROTOCOL, "method": method, "options": options,
                           "environ": dict(os.environ), "cwd": os.getcwd(),
                           "settings": protocol.settings_to_json(self.settings)}
                protocol.send_frame(sock, json.dumps(request).encode())
                sock.settimeout(None)  # a long search is fine; Ctrl-C ends the wait
                kind, value = protocol.load_reply(protocol.recv_frame(sock, protocol.MAX_REPLY))
            except Exception as exc:  # noqa: BLE001 - a transport or reply problem, never the engine's error
                kind, value = "fallback", exc
            finally:
                sock.close()
            if kind == "ok":
                return value
            if kind == "error" and isinstance(value, LancelotError):
                raise value
        return getattr(self._local(), method)(**options)

    def _local(self) -> Any:
        if self._engine is None:
            from lancelot_cli.engine import Engine

            self._engine = Engine(self.settings)
        return self._engine


def start_pending() -> None:
    """Start the warm process ``connect`` found missing (detached, not waited for); no-op otherwise.
    Called once the command's output is written and flushed, before the process ends."""
    global _pending
    if _pending is None:
        return
    code, minutes = _pending
    _pending = None
    import subprocess

    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    flags = ["-P"] if sys.version_info >= (3, 11) else []  # not the working folder on sys.path
    try:
        subprocess.Popen([sys.executable, *flags, "-m", "lancelot_cli.warm.daemon", "--fingerprint", code,
                          "--minutes", repr(minutes)], cwd="/", env=env, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True)
    except (OSError, ValueError, TypeError, subprocess.SubprocessError):  # none this time; the command is done
        pass
