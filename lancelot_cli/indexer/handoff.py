"""A watcher takes `lancelot index` runs of its own table (issue 49 #2): the re-index runs where
lancedb is loaded already, and the `lancelot index` process is only a light client.

Why a watcher, and no other warm writer: the background server is read-only and must stay so (the
import-linter contracts in pyproject.toml), and a watcher already holds everything the run needs
(lancedb, the embedder it chose, the folder's ledger). A table without a watcher is indexed by
`lancelot index` as before.

What the watcher does (indexer/watch.py): while it watches a local table it listens on the Unix
socket of index_socket.py, mode 0600, and answers only its own user (``SO_PEERCRED``). A request
whose plan (folder, table, options, embedding settings; index_socket.plan) is the watcher's own
is accepted at once and served by the watcher's next pass, run as for a file event, between its
batches, holding the writer lock as every pass does; the pass's report (or error) goes back to
each client it serves. A request with another plan (``--rebuild``, other ``--ext``, another
``--embed-model``...) is declined and that `lancelot index` runs as it always did (it takes the
writer lock between the watcher's batches, or is refused while one is written). Anything else on
the socket (garbage, a silent peer, a line too long) is dropped with its connection; the watcher
goes on. A request the watcher accepted but did not start when it stops is declined.

A socket file nobody listens on (a watcher killed with SIGKILL) is replaced by the next watcher;
a socket another watcher of the table answers on is left to it (two watchers of one table take
turns with the lock, as before; one serves the clients).
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
from dataclasses import dataclass
from typing import Any

from lancelot_cli.index_socket import PROTOCOL, encode, read_message

READ_TIMEOUT_S = 2.0  # a peer that connects and says nothing is dropped after this


@dataclass
class Asked:
    """A client waiting for the report of the next pass."""

    conn: socket.socket


class Handoff:
    """The listening socket of one watcher, and the clients waiting for its next pass."""

    def __init__(self, listener: socket.socket, path: str, plan: dict[str, Any]) -> None:
        self.listener, self.path, self.plan = listener, path, plan
        self.inode = os.stat(path).st_ino  # to remove only our own socket file when we stop
        self._lock = threading.Lock()
        self._waiting: list[Asked] = []
        self._closed = False
        self._thread = threading.Thread(target=self._accept_loop, name="lancelot-handoff", daemon=True)
        self._thread.start()

    @classmethod
    def listen(cls, path: str | None, plan: dict[str, Any]) -> Handoff | None:
        """Listen on ``path`` (None: no socket for this table); None when another live watcher
        answers there or the socket cannot be made (the watch goes on without it)."""
        if path is None:
            return None
        if _answers(path):
            return None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a stale socket file: its watcher is gone
        try:
            listener = _bound(path)
        except OSError:
            return None
        return cls(listener, path, plan)

    def waiting(self) -> bool:
        with self._lock:
            return bool(self._waiting)

    def take(self) -> list[Asked]:
        """The clients waiting now: the pass about to start is theirs."""
        with self._lock:
            taken, self._waiting = self._waiting, []
        return taken

    def answer(self, asked: list[Asked], message: dict[str, Any]) -> None:
        """Send ``message`` to each of ``asked`` and hang up (a client gone by now is skipped)."""
        data = encode(message)
        for one in asked:
            with contextlib.suppress(OSError):
                one.conn.settimeout(READ_TIMEOUT_S)
                one.conn.sendall(data)
            with contextlib.suppress(OSError):
                one.conn.close()

    def close(self) -> None:
        """Stop listening, remove the socket file (if still ours) and decline whoever still waits."""
        with self._lock:
            self._closed = True
            left, self._waiting = self._waiting, []
        self.answer(left, {"declined": "the watcher is stopping"})
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop
        with contextlib.suppress(OSError):
            self.listener.close()
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        self._thread.join(timeout=READ_TIMEOUT_S + 1)

    def _accept_loop(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                self._greet(conn)
            except Exception:  # noqa: BLE001 - whatever a peer sends, the watcher goes on serving
                with contextlib.suppress(OSError):
                    conn.close()

    def _greet(self, conn: socket.socket) -> None:
        """Read one request; keep the connection if it is accepted, else answer and hang up."""
        if _peer_uid(conn) != os.getuid():
            conn.close()
            return
        conn.settimeout(READ_TIMEOUT_S)
        request = read_message(conn)
        reason = _refusal(request, self.plan)
        with self._lock:
            if reason is None and self._closed:
                reason = "the watcher is stopping"
            if reason is None:
                conn.sendall(encode({"accepted": os.getpid()}))
                self._waiting.append(Asked(conn))
                return
        conn.sendall(encode({"declined": reason}))
        conn.close()


def _refusal(request: dict[str, Any] | None, plan: dict[str, Any]) -> str | None:
    """Why ``request`` is not taken (None: it is)."""
    if request is None or request.get("lancelot") != "index":
        return "not a request"
    if request.get("protocol") != PROTOCOL:
        return "another protocol"
    if request.get("plan") != plan:
        return "another plan"
    return None


def _peer_uid(conn: socket.socket) -> int:
    """The user id of the process at the other end (Linux ``SO_PEERCRED``; elsewhere, ours)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return os.getuid()
    credentials = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return int(uid)


def _answers(path: str) -> bool:
    """Whether something accepts connections on ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(READ_TIMEOUT_S)
        probe.connect(path)
    except OSError:
        return False
    else:
        return True
    finally:
        probe.close()


def _bound(path: str) -> socket.socket:
    """A socket listening on ``path``, mode 0600: bound under a private name, made 0600, then
    renamed into place, so its real name is never open to others (the process-wide umask is left
    alone; a peer of another user is refused by ``_greet`` anyway)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    draft = os.path.join(os.path.dirname(path), f".lancelot-sock-{os.getpid()}-{threading.get_ident() % 100000}")
    try:
        if len(os.fsencode(draft)) > len(os.fsencode(path)):
            draft = path  # no room for the private name: bind in place, then restrict
        listener.bind(draft)
        os.chmod(draft, 0o600)
        if draft != path:
            os.replace(draft, path)
        listener.listen(16)
    except OSError:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(draft)
        raise
    return listener
