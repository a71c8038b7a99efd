"""Where a `lancelot index --watch` process takes re-index requests, and what they say (issue 49 #2).

Both ends import this module: the watcher (indexer/handoff.py) and the light client in
cli/handoff.py, which must not load lancedb or the indexer, so it holds the standard library only.

The socket is a Unix socket beside the table's writer lock in the database folder,
``.lancelot-index-TABLE.sock``: one per table, found from the database however it is spelled
(location.py). Object stores have none. Neither is a path longer than ``sun_path`` holds (107
bytes on Linux): then no watcher listens and every `lancelot index` runs as it always did.

The conversation is one JSON object per line. The client sends ``{"lancelot": "index",
"protocol": 1, "plan": PLAN}``; the watcher answers ``{"declined": REASON}`` (the client runs the
job itself) or ``{"accepted": PID}``, then, once its pass is done, ``{"report": SUMMARY}`` (the
summary `--json` prints) or ``{"error": MESSAGE, "exit": CODE}``. ``PLAN`` is everything that
decides what a run does (``plan``); the watcher takes only a plan equal to its own.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lancelot_cli.location import Location

PROTOCOL = 1
MAX_LINE = 1 << 20  # bytes in one message: a report lists skipped files, a request is small
SUN_PATH_MAX = 107  # bytes of a socket path, without the terminating NUL (Linux's sockaddr_un)


def socket_path(database: str | None, table: str) -> str | None:
    """The socket a watcher of ``table`` in ``database`` listens on; None for an object store, no
    database, or a path too long for a Unix socket."""
    if not database:
        return None
    where = Location.parse(database)
    if not where.is_local:
        return None
    path = os.path.join(str(where.folder), f".lancelot-index-{table}.sock")
    return path if len(os.fsencode(path)) <= SUN_PATH_MAX else None


def plan(
    source: Path | str, table: str, options: Mapping[str, Any], embedding_model: str | None, base_url: str | None
) -> dict[str, Any]:
    """What decides a run's outcome besides the files: the folder (resolved), the table, the
    command's options (indexer/job.py ``Options``, as given) and the embedding settings. In its
    JSON form, so that both ends compare the same thing (tuples are lists)."""
    made = {
        "source": str(Path(source).expanduser().resolve()),
        "table": table,
        "options": dict(options),
        "embeddingModel": embedding_model,
        "baseUrl": base_url,
    }
    normal: dict[str, Any] = json.loads(json.dumps(made))
    return normal


def encode(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"


def read_message(conn: socket.socket) -> dict[str, Any] | None:
    """One JSON object from ``conn``, up to its newline; None at the end of the stream, for a line
    too long, or for anything that is not a JSON object. Socket errors and timeouts propagate."""
    data = bytearray()
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > MAX_LINE:
            return None
    line = bytes(data[: data.index(b"\n")])
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # also a UnicodeDecodeError; RecursionError: [[[[...]]]]
        return None
    return message if isinstance(message, dict) else None
