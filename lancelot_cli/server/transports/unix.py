"""`lancelot serve --socket PATH`: the read-only MCP server on a Unix socket, one session per connection.

This is what the CLI's read commands talk to (background/client.py), and any local MCP client may too:
newline-delimited JSON-RPC, exactly as over stdio (the SDK's stdio transport, given the connection's
streams, through the same bad-line handling as `serve`). Sessions run side by side over one engine
and one lifespan, so lancedb, open tables and a local model stay loaded between commands.

A call may name the database it is about (server/databases.py): one server answers for every
database its user asks about with the settings it was started with. The socket file is made with
mode 0600 (the folder it is in is the caller's business: the CLI's is 0700, see background/daemon.py).
Beside it, ``PATH.lock`` holds this process's id, then the databases it has open, one a line, under
an exclusive lock: a second server for the same path exits at once. The server exits, removing its socket file,
after ``idle_minutes`` without a connection, when its socket file is removed or replaced (the next
server's), when a module of the package changed since it started (checked on each connection,
which it then closes unanswered: the client runs the call itself), or on SIGTERM, SIGHUP or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from pathlib import Path
from typing import Any

from lancelot_cli.server.transports.logs import configure_logging
from lancelot_cli.server.transports.stdin_lines import MAX_LINE
from lancelot_cli.settings import Settings

CHECK_EVERY = 2.0  # seconds between checks of the socket file and of being idle
# A message is at most MAX_LINE bytes, as over stdio (a longer one ends the connection); it was 64 MB,
# and one 16 MB call cost 86 s and 2.64 GiB (issue 46).


def run_unix(settings: Settings, path: str, idle_minutes: float, metrics_log: Path | None = None) -> int:
    """Serve on ``path`` until one of the module doc's reasons; 0 also when another server has it."""
    from lancelot_cli.server.process.memory import log_tuning, tune_malloc

    tuned = tune_malloc()  # first: while this is the only thread (see server/process/memory.py)
    lock = _take_lock(path)
    if lock is None:
        return 0
    import anyio

    from lancelot_cli.server.app import build_server
    from lancelot_cli.server.metrics import Metrics
    from lancelot_cli.server.transports.stdio import _InitGate

    server = build_server(
        settings, metrics=Metrics(metrics_log), any_database=True, on_databases=lambda uris: _record(lock, uris)
    )
    configure_logging(settings)
    log_tuning(tuned)
    lowlevel = server._lowlevel_server
    lowlevel.middleware.append(_InitGate())
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)
    made: list[int] = []  # the socket file's inode, once listening
    try:
        anyio.run(_listen, lowlevel, path, idle_minutes * 60, made)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        # Here, not at the end of _listen: SIGTERM's SystemExit leaves the event loop without it (issue 46).
        if made and _ours(path, made[0]):
            with contextlib.suppress(OSError):
                os.unlink(path)
        _remove_lock(path, lock)
    return 0


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _take_lock(path: str) -> int | None:
    """The lock file's descriptor, locked and holding our pid; None when another server holds it."""
    try:
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _record(fd: int, databases: list[str]) -> None:
    """The lock file: our pid, then the databases open (what `lancelot status` shows)."""
    text = "".join(f"{line}\n" for line in (str(os.getpid()), *databases))
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode("utf-8", "surrogateescape"), 0)


def _remove_lock(path: str, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(f"{path}.lock")  # still ours: a successor waits for our lock before writing it
    os.close(fd)


async def _listen(lowlevel: Any, path: str, idle_seconds: float, made: list[int]) -> None:
    import anyio
    from mcp.server.runner import serve_dual_era_loop

    from lancelot_cli.server.transports.stdio import serve_session

    code = code_fingerprint()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # stale: only the lock holder serves
    listener = await anyio.create_unix_listener(path, mode=0o600)
    inode = os.stat(path).st_ino
    made.append(inode)  # run_unix removes the file at the end, when it is still ours
    active, last = 0, time.monotonic()
    init_options = lowlevel.create_initialization_options()

    async def handle(stream: Any) -> None:
        nonlocal active, last
        active += 1
        try:
            async with stream:
                if code_fingerprint() != code:  # edited or upgraded: this process runs the old code
                    tg.cancel_scope.cancel()
                    return

                async def run(read: Any, write: Any) -> None:
                    await serve_dual_era_loop(lowlevel, read, write, lifespan_state=state, init_options=init_options)

                await serve_session(run, _Lines(stream), _Writer(stream))
        except Exception:  # noqa: BLE001 - a client that left mid-reply ends its session, not the server
            pass
        finally:
            active -= 1
            last = time.monotonic()

    async with lowlevel.lifespan(lowlevel) as state, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        while _ours(path, inode) and (active or time.monotonic() - last < idle_seconds):
            await anyio.sleep(CHECK_EVERY)
        tg.cancel_scope.cancel()


def _ours(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def code_fingerprint() -> tuple[int, int]:
    """The newest modification time of the package's modules, and how many there are."""
    import lancelot_cli

    newest, count, pending = 0, 0, [os.path.dirname(os.path.abspath(lancelot_cli.__file__))]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    newest, count = max(newest, entry.stat().st_mtime_ns), count + 1
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return newest, count


class _Lines:
    """A connection's bytes as the text lines the SDK's stdio transport iterates over."""

    def __init__(self, stream: Any) -> None:
        from anyio.streams.buffered import BufferedByteReceiveStream

        self._buffered = BufferedByteReceiveStream(stream)

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        import anyio

        try:
            line = await self._buffered.receive_until(b"\n", MAX_LINE)
        except (
            anyio.EndOfStream,
            anyio.IncompleteRead,
            anyio.DelimiterNotFound,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ):
            raise StopAsyncIteration from None
        return line.decode("utf-8", errors="replace")


class _Writer:
    """The SDK's stdio transport writes each message and flushes; a socket needs no flush."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def write(self, text: str) -> None:
        await self._stream.send(text.encode("utf-8"))

    async def flush(self) -> None:
        return None
