"""Python's cyclic garbage collector, paused while `lancelot serve` (stdio) starts.

Starting the server imports typer, mcp, pydantic, lancedb and pyarrow: hundreds of thousands of
objects, nearly all of them kept for the life of the process. Each 700 new container objects make
the collector run, and a young generation that keeps surviving makes the older ones run too: about
300 collections (~180 ms of a ~1.5 s spawn → first search result) that freed almost nothing.

So ``pause`` turns the collector off (``gc.disable``: reference counting still frees everything that
is not in a cycle) as the command loads, and ``resume`` turns it back on once the server has warmed
up: ``warmed_up`` is called when the warm-up step or a tool call ends, and ``SETTLE_SECONDS`` later
one full collection runs, what is left is frozen (``gc.freeze``: the startup objects are never
looked at again by later collections) and the collector is enabled. A deadline (``DEADLINE_SECONDS``
after the start, set by ``run_stdio``) resumes it regardless, so a server that never gets a call
still collects. Only a pause made here is undone here: a collector someone else turned off stays off.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

SETTLE_SECONDS = 1.0  # after the warm-up: the first search's answer is out before the full collection
DEADLINE_SECONDS = 30.0  # after the start: the collector is back even if nothing ever warms the server up

_lock = threading.Lock()
_paused = False  # True while the collector is off because of `pause`
_timers: list[threading.Timer] = []
_armed = False  # a resume after warm-up is scheduled


def pause() -> bool:
    """Turn the collector off for the startup; False (and nothing done) when it was off already."""
    global _paused
    with _lock:
        if _paused or not gc.isenabled():
            return False
        gc.disable()
        _paused = True
        return True


def paused() -> bool:
    return _paused


def deadline(seconds: float = DEADLINE_SECONDS) -> None:
    """Resume at the latest ``seconds`` from now (when paused)."""
    if _paused:
        _schedule(seconds)


def warmed_up() -> None:
    """The server has warmed up (the warm-up step or a tool call ended): resume ``SETTLE_SECONDS``
    from now, once; later calls change nothing. Cheap when not paused (every tool call calls it)."""
    global _armed
    if not _paused or _armed:
        return
    with _lock:
        if _armed or not _paused:
            return
        _armed = True
    _schedule(SETTLE_SECONDS)


def resume() -> bool:
    """One full collection, freeze what is left, enable the collector; False when not paused."""
    global _paused, _armed
    with _lock:
        if not _paused:
            return False
        _paused = False
        _armed = False
        timers = list(_timers)
        _timers.clear()
    for timer in timers:
        if timer is not threading.current_thread():
            timer.cancel()
    gc.collect()
    gc.freeze()
    gc.enable()
    return True


def state() -> dict[str, Any]:
    """For the stats resource: ``{"enabled", "frozen", "collections"}`` (per generation)."""
    return {
        "enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
        "collections": [generation["collections"] for generation in gc.get_stats()],
    }


def _schedule(seconds: float) -> None:
    timer = threading.Timer(seconds, resume)
    timer.daemon = True  # never keeps a stopped server alive
    with _lock:
        if not _paused:
            return
        _timers.append(timer)
    timer.start()


NOT_STDIO = ("--http", "--port", "--socket", "--help", "-h")  # serve options that mean another transport or help


def stdio_serve(args: list[str]) -> bool:
    """True when the command line (``sys.argv[1:]``) is `lancelot serve` on stdio: ``serve``, after
    the root's ``--db PATH`` if given, with none of ``NOT_STDIO`` (read before Typer parses it)."""
    rest = list(args)
    while rest and (rest[0] == "--db" or rest[0].startswith("--db=")):
        del rest[: 2 if rest[0] == "--db" else 1]
    if not rest or rest[0] != "serve":
        return False
    return not any(arg.split("=", 1)[0] in NOT_STDIO for arg in rest[1:] if arg != "--")
