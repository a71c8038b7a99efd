"""The process's stdin as `lancelot serve` reads it: one JSON-RPC message a line, at most
``MAX_LINE`` bytes each (issue 37: the SDK reads a line whole, and one 100 MB line cost 3.1 GB of
memory; HTTP takes at most 64 KB a request).

A longer line is read to its end and dropped, never held: the client gets a -32600 error naming
the limit, with the request's id when its first bytes hold one (``"id": 7`` comes early in what
clients send), so it does not wait for ever. Like the SDK's own claim on fd 0, the wire is read
from a private copy of the descriptor and fd 0 points at the null device meanwhile, so a library
or child that reads stdin gets end of file instead of part of a message.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, BinaryIO

MAX_LINE = 4 * 1024 * 1024  # bytes of one message; a tool call with 6 phrasings needs a few KB
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\\n]|\\.){0,200}"|-?\d{1,18})')
_DRAIN = 1 << 20


class BoundedLines:
    """The lines of ``binary`` as text, for ``mcp.server.stdio.stdio_server``'s ``stdin``; a line over
    ``limit`` bytes goes to ``refuse(request id or None)`` instead (set once the session's write
    stream exists)."""

    def __init__(self, binary: BinaryIO, limit: int = MAX_LINE) -> None:
        self._in = binary
        self._limit = limit
        self.refuse: Callable[[Any], Awaitable[None]] | None = None

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line, over = await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            if not over:
                return line
            if self.refuse is not None:
                await self.refuse(_request_id(over))

    def _read(self) -> tuple[str | None, bytes | None]:
        """(the next line, None); ("", its first bytes) for a line over the limit; (None, None) at the end."""
        data = self._in.readline(self._limit + 1)
        if not data:
            return None, None
        if len(data) <= self._limit or data.endswith(b"\n"):
            return data.decode("utf-8", errors="replace"), None
        head = data[:4096]
        del data
        while (more := self._in.readline(_DRAIN)) and not more.endswith(b"\n"):
            pass
        return "", head


def _request_id(head: bytes) -> int | str | None:
    """The ``"id"`` in a message's first bytes, when one is there (a string or a whole number)."""
    import json

    found = _ID.search(head)
    if found is None:
        return None
    with contextlib.suppress(ValueError):
        value = json.loads(found.group(1))
        if isinstance(value, (str, int)):
            return value
    return None


@contextlib.contextmanager
def claimed_stdin() -> Iterator[BinaryIO | None]:
    """fd 0's wire as a private binary file, fd 0 on the null device meanwhile; None (the SDK reads
    stdin itself) when fd 0 cannot be claimed (no real descriptor)."""
    try:
        private = os.dup(0)
    except OSError:
        yield None
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(private)
        yield None
        return
    try:
        # closefd=False: a worker thread may still block reading it after the session ends.
        yield os.fdopen(private, "rb", buffering=65536, closefd=False)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)
