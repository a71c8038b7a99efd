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
"""

from __future__ import annotations

import ctypes
import logging
import os

# mallopt parameter numbers from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

# (parameter, value, the variable that sets it at start)
SETTINGS = (
    (M_ARENA_MAX, 1, "MALLOC_ARENA_MAX"),
    (M_MMAP_THRESHOLD, 32 * 1024 * 1024, "MALLOC_MMAP_THRESHOLD_"),  # glibc's largest dynamic threshold
    (M_TRIM_THRESHOLD, 64 * 1024 * 1024, "MALLOC_TRIM_THRESHOLD_"),
)


def tune_malloc(environ: dict[str, str] | None = None) -> list[str]:
    """Apply ``SETTINGS`` with glibc's ``mallopt``; the names of the variables applied (empty when
    the C library is not glibc)."""
    environ = dict(os.environ) if environ is None else environ
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return []
    except (AttributeError, ValueError, OSError):  # not glibc (no such name on musl, macOS, Windows)
        return []
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: glibc's
    except (OSError, AttributeError):
        return []
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return [name for param, value, name in SETTINGS if name not in environ and mallopt(param, value) == 1]


def log_tuning(applied: list[str]) -> None:
    """Say at debug level what ``tune_malloc`` applied (call once logging is set up)."""
    if applied:
        logging.getLogger(__name__).debug("malloc set for a long-running server: %s",
                                          ", ".join(f"{name}={value}" for _, value, name in SETTINGS
                                                    if name in applied))
