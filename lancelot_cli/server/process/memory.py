"""glibc malloc settings for a long-running server (see "Server memory" in tests/benchmarks/README.md).

LanceDB's Rust code allocates with the C library's malloc from dozens of threads (its tokio
workers and blocking-I/O threads). glibc gives threads up to 8 arenas per core and each keeps the
freed memory of its own peak: on a 10,000-chunk table the stdio server grew to 514 MiB after 200
searches (390 MiB anonymous); with the settings below, 263 MiB. One arena with glibc's default
thresholds made hybrid searches slower (a flat vector scan's 4-32 MiB buffers were mmapped and
faulted in anew each time); a fixed 32 MiB mmap threshold keeps them in the heap for reuse, and
the trim threshold bounds what the heap keeps unused at its top.

``mallopt`` applies them while the process runs, so no re-exec is needed, but only while one
thread exists: glibc hands later threads the arenas already made (and fixes its arena limit once 8
exist), so the call comes first in each transport's start (from the warm-up thread, once the
transport's own threads had arenas, it left 321 MiB). A variable the user set (``MALLOC_ARENA_MAX``,
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``) was read by glibc at start and wins: that
setting is left alone. Elsewhere (musl, macOS) nothing is done.

Memory freed inside the heap (a search's Arrow buffers, an evicted posting list) stays with the
process until ``malloc_trim`` hands its pages back. ``release_freed``, after a tool call, trims
at once when more than ``RELEASE_ABOVE`` lies free (glibc counts free chunks whether or not their
pages went back already, so on a heap that size every look trims: 3.5 ms on a 1M-chunk server,
against its ~100 ms searches; it looks at most every ``CHECK_SECONDS``), and otherwise once the
process has been idle for ``IDLE_SECONDS``:
a trim after every call on a 10,000-chunk server handed back the buffers its next flat vector scan
reuses, and 100 searches took 38 % longer. With LanceDB's index cache capped as well
(``LANCELOT_INDEX_CACHE_MB``), a server on a 1M-chunk table held 364-369 MiB right after 100
mixed searches, instead of 466 (tests/benchmarks/README.md, "1M chunks"; measured when every call
looked, before ``CHECK_SECONDS``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections.abc import Callable

from lancelot_cli.storage.heap import M_ARENA_MAX, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, mallopt
from lancelot_cli.storage.heap import glibc as _glibc

# (parameter, value, the variable that sets it at start)
SETTINGS = (
    (M_ARENA_MAX, 1, "MALLOC_ARENA_MAX"),
    (M_MMAP_THRESHOLD, 32 * 1024 * 1024, "MALLOC_MMAP_THRESHOLD_"),  # glibc's largest dynamic threshold
    (M_TRIM_THRESHOLD, 64 * 1024 * 1024, "MALLOC_TRIM_THRESHOLD_"),
)


RELEASE_ABOVE = 64 * 1024 * 1024  # free heap bytes that make a tool call trim at once
IDLE_SECONDS = 1.0  # no call for this long: whatever lies free is handed back
# mallinfo2 walks every free list of every arena, holding each arena's lock (the searches allocate
# under it too): on an HTTP server with 8 clients, looking after every call was ~8 % of its py-spy
# samples. Looked at most this often instead; the idle trim still catches the rest.
CHECK_SECONDS = 0.25


def tune_malloc(environ: dict[str, str] | None = None) -> list[str]:
    """Apply ``SETTINGS`` with glibc's ``mallopt``; the names of the variables applied (empty when
    the C library is not glibc)."""
    environ = dict(os.environ) if environ is None else environ
    return [name for param, value, name in SETTINGS if name not in environ and mallopt(param, value)]


def log_tuning(applied: list[str]) -> None:
    """Say at debug level what ``tune_malloc`` applied (call once logging is set up)."""
    if applied:
        logging.getLogger(__name__).debug(
            "malloc set for a long-running server: %s",
            ", ".join(f"{name}={value}" for _, value, name in SETTINGS if name in applied),
        )


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _free_bytes() -> Callable[[], int] | None:
    mallinfo2 = _glibc("mallinfo2")  # glibc 2.33+
    if mallinfo2 is None:
        return None
    mallinfo2.restype = _MallInfo2
    return lambda: int(mallinfo2().fordblks)


_TRIM = _glibc("malloc_trim")
if _TRIM is not None:
    _TRIM.argtypes = [ctypes.c_size_t]
_FREE_BYTES = _free_bytes() if _TRIM is not None else None


_last_call = 0.0
_last_check = -CHECK_SECONDS
_called = threading.Event()
_idle_thread: list[threading.Thread] = []
_start_lock = threading.Lock()


def release_freed() -> bool:
    """After a tool call (in its worker thread): hand the heap's free pages back to the system
    now if more than ``RELEASE_ABOVE`` bytes lie free (looked at no more than every
    ``CHECK_SECONDS``), else once the server is idle (glibc only; elsewhere nothing). True if it
    trimmed now."""
    global _last_call, _last_check
    if _TRIM is None:
        return False
    _last_call = now = time.monotonic()
    if not _idle_thread:
        with _start_lock:
            if not _idle_thread:
                _idle_thread.append(
                    threading.Thread(target=_release_when_idle, name="lancelot-release-memory", daemon=True)
                )
                _idle_thread[0].start()
    _called.set()
    if now - _last_check < CHECK_SECONDS:
        return False
    _last_check = now
    if _FREE_BYTES is not None and _FREE_BYTES() <= RELEASE_ABOVE:
        return False
    _TRIM(0)
    return True


def _release_when_idle() -> None:
    assert _TRIM is not None  # started by release_freed, which returns first without it
    while True:
        _called.wait()
        _called.clear()
        while (left := _last_call + IDLE_SECONDS - time.monotonic()) > 0:
            time.sleep(left)
        if _called.is_set():  # a call ended while this one slept: wait out its idle second too
            continue
        _TRIM(0)
