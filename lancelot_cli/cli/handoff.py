"""`lancelot index` as a light client of a watcher (issue 49 #2; the watcher's side and why:
indexer/handoff.py, the socket and messages: index_socket.py).

When a `lancelot index --watch` of the same table listens, `lancelot index SRC DB` sends it its plan
and, if the watcher accepts it, waits for the report of the pass the watcher runs for it; the
command then prints that summary as its own. This module and what it imports are the standard
library and lancelot's light modules: no lancedb, no indexer (tests/test_index_handoff.py checks
with ``python -X importtime``), which is the point: a one-file re-index costs the client little
more than starting the CLI.

``None`` (the command indexes by itself, as it always did): no socket for the table (an object
store, a path too long), nobody listening (a socket file a killed watcher left), no answer within
``GREETING_TIMEOUT_S``, or the watcher declines (another plan, or it is stopping, also after it
accepted the run but before the pass that would serve it started). Once accepted:
the report; the watcher's error as the command's error (one line, its exit code); a watcher that
dies before it answers is one line and exit 1. Ctrl-C (SIGTERM) while waiting: one line, exit 130
(143); the pass the watcher started goes on and commits (its own batch line says so), as a file
event's would.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.index_socket import PROTOCOL, encode, plan, read_message, socket_path
from lancelot_cli.settings import Settings

GREETING_TIMEOUT_S = 5.0  # for the watcher's "accepted" or "declined" (it answers at once)
# The options of a plain `lancelot index SRC` (indexer/job.py ``Options()``, the Typer defaults of
# cli/index.py; tests/test_index_handoff.py checks both), for cli/quick_index.py.
PLAIN: dict[str, Any] = {
    "embed": None,
    "chunk_size": None,
    "rebuild": False,
    "extensions": None,
    "max_file_size": 5 * 1024 * 1024,
    "exclude": None,
    "site_detection": None,
    "code": None,
    "replace": False,
}


class _Terminated(KeyboardInterrupt):
    """SIGTERM while waiting, raised like Ctrl-C."""


def hand_off(settings: Settings, source: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report of the run a watcher made for this command; None: run it here (module doc).
    ``options``: the command's indexer/job.py ``Options`` fields, as given."""
    path = socket_path(settings.db_uri, settings.table)
    if path is None or not Path(source).expanduser().is_dir():
        return None
    wanted = plan(source, settings.table, options, settings.embedding_model, settings.openai_base_url)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.closing(conn), _sigterm_interrupts():
        try:
            greeting = _greeting(conn, path, wanted)
        except KeyboardInterrupt as exc:
            raise _interrupted(exc, None) from None
        if greeting is None or not isinstance(greeting.get("accepted"), int):
            return None
        pid = int(greeting["accepted"])
        try:
            conn.settimeout(None)  # a pass takes what it takes; the watcher's death ends the wait
            reply = read_message(conn)
        except KeyboardInterrupt as exc:
            raise _interrupted(exc, pid) from None
        except OSError:
            reply = None
    return _outcome(reply, pid)


def _greeting(conn: socket.socket, path: str, wanted: dict[str, Any]) -> dict[str, Any] | None:
    """Connect, ask, and read the watcher's first answer; None when there is none to be had."""
    try:
        conn.settimeout(GREETING_TIMEOUT_S)
        conn.connect(path)
        conn.sendall(encode({"lancelot": "index", "protocol": PROTOCOL, "plan": wanted}))
        return read_message(conn)
    except OSError:  # no socket file, nobody listening, a timeout, a watcher gone meanwhile
        return None


def _outcome(reply: dict[str, Any] | None, pid: int) -> dict[str, Any] | None:
    if reply is not None and "declined" in reply:  # it stopped before it started our pass: run it here
        return None
    if reply is not None and isinstance(reply.get("report"), dict):
        report: dict[str, Any] = reply["report"]
        return report
    if reply is not None and isinstance(reply.get("error"), str):
        error = IndexingError(reply["error"])
        code = reply.get("exit")
        error.exit_code = code if isinstance(code, int) and 0 < code < 256 else 1
        raise error
    raise IndexingError(
        f"the watching `lancelot index` (pid {pid}) stopped before it finished this run; "
        "the table holds what its last commit wrote: run `lancelot index` again"
    )


def _interrupted(exc: KeyboardInterrupt, pid: int | None) -> IndexingError:
    """Ctrl-C or SIGTERM while the watcher works: what goes on, in one line, exit 130 or 143."""
    terminated = isinstance(exc, _Terminated)
    what = "terminated (SIGTERM)" if terminated else "interrupted (Ctrl-C)"
    who = "the watching `lancelot index`" if pid is None else f"the watching `lancelot index` (pid {pid})"
    error = IndexingError(f"{what}; {who} finishes and commits any pass it started for this run")
    error.exit_code = 143 if terminated else 130
    return error


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM ends the wait like Ctrl-C (as it ends a run: indexer/signals.py), main thread only."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous != signal.SIG_DFL:
            raise ValueError("someone else decides")

        def handler(signum: int, frame: Any) -> None:
            raise _Terminated

        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread, or the signal is taken
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
