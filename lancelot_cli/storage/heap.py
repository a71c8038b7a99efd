"""The C library's heap functions, when that library is glibc: one lookup for the server's malloc
settings (server/process/memory.py) and the writer's hand-back of freed memory (storage/write/first_write.py).

Kept apart from both (no lancedb, no pyarrow) so the read side and the write side share it.
Elsewhere (musl, macOS, Windows) every function here does nothing.
"""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

# mallopt parameter numbers from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def glibc(name: str) -> CFuncPtr | None:
    """A function of the process's C library when that is glibc, else None (a ctypes function
    pointer: its ``argtypes`` and ``restype`` are set before it is called)."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
    except (AttributeError, ValueError, OSError):  # not glibc (no such name on musl, macOS, Windows)
        return None
    try:
        return getattr(ctypes.CDLL(None), name)  # the process's own symbols: glibc's
    except (OSError, AttributeError):
        return None


def mallopt(param: int, value: int) -> bool:
    """glibc's ``mallopt(param, value)``; True if it took the setting (False elsewhere)."""
    function = glibc("mallopt")
    if function is None:
        return False
    function.argtypes = [ctypes.c_int, ctypes.c_int]
    function.restype = ctypes.c_int
    return bool(function(param, value) == 1)


def trim() -> bool:
    """Hand the heap's free pages back to the system (``malloc_trim(0)``); True if glibc did."""
    function = glibc("malloc_trim")
    if function is None:
        return False
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    function(0)
    return True


def one_arena(environ: dict[str, str] | None = None) -> bool:
    """Keep every thread's allocations in one glibc arena (``M_ARENA_MAX=1``), unless the user set
    ``MALLOC_ARENA_MAX`` (glibc read it at start: it wins). glibc otherwise gives threads up to 8
    arenas per core, each keeping the freed memory of its own peak; for `lancelot index` (LanceDB's
    writer and index builders run on many threads) one arena lowered the peak RSS of a full index
    of three copies of the FastAPI docs by ~6 MiB at the same CPU time (issue 25). It applies
    only while the process has one thread (later threads get the arenas already made): call it
    first. True if it was applied."""
    environ = dict(os.environ) if environ is None else environ
    return "MALLOC_ARENA_MAX" not in environ and mallopt(M_ARENA_MAX, 1)
