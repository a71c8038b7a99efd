"""Counting the processes a test starts, so that one which starts any is marked ``slow`` (the fast
loop, ``pytest -m "not slow"``, starts none; tests/conftest.py fails a test that breaks this).

Every way a test starts a program goes through one of the functions wrapped here: ``subprocess``
(with asyncio's subprocesses and the MCP client's stdio transport) calls its own reference to
``_posixsubprocess.fork_exec`` or ``os.posix_spawn``; ``multiprocessing``'s spawned workers call
``_posixsubprocess.fork_exec``; ``pty.fork`` calls ``os.forkpty``; a plain fork ``os.fork``.
``os.system`` is left alone: no test runs it, and tests/test_warm.py pickles it (a pickle of a
function must find that very function under its name). A process started inside another process
is that process's business.

Not counted are the quick tools (`QUICK`, milliseconds each) that in-process work runs as a side
effect: ``git``, which the indexer asks which files a work tree ignores (indexer/gitignore.py; the
sample documents sit in this one), and ``ldconfig`` and ``uname``, which ``ctypes.util.find_library``
and ``platform`` run once per process.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

QUICK = frozenset({"git", "ldconfig", "uname"})
_programs: list[str] = []  # what each counted process ran ("?" when it cannot be told: a fork)
_lock = threading.Lock()


def started() -> int:
    """How many processes this interpreter has started since `install`."""
    return len(_programs)


def programs(since: int) -> list[str]:
    """The programs of the processes started after the first ``since``."""
    return _programs[since:]


def _program(argv: Any) -> str:
    """The name of the program an argument list runs ("" when it cannot be told)."""
    try:
        first = argv[0]
        return os.path.basename(os.fsdecode(first))
    except (TypeError, IndexError, ValueError):
        return ""


def _counting(func: Callable[..., Any], argv_at: int | None) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        program = _program(args[argv_at]) if argv_at is not None and len(args) > argv_at else ""
        if program not in QUICK:
            with _lock:
                _programs.append(program or "?")
        return func(*args, **kwargs)

    wrapper.__lancelot_counting__ = True  # type: ignore[attr-defined]
    return wrapper


def install() -> None:
    """Wrap the process-starting functions (once; they behave as before apart from the count)."""
    import _posixsubprocess
    import subprocess

    # (module, function, which positional argument is the argument list, if any)
    for module, name, argv_at in (
        (subprocess, "_fork_exec", 0),
        (_posixsubprocess, "fork_exec", 0),
        (os, "posix_spawn", 1),
        (os, "posix_spawnp", 1),
        (os, "fork", None),
        (os, "forkpty", None),
    ):
        func = getattr(module, name, None)
        if func is not None and not getattr(func, "__lancelot_counting__", False):
            setattr(module, name, _counting(func, argv_at))
