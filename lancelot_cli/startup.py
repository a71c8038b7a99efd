"""The one switch for process-wide set-up, called by the entry points (issue 48 #4).

Importing a lancelot module changes nothing in the process: no import hook, no environment
variable. What a run wants changed for the whole process is made here, once, by whoever starts
it: the `lancelot` command (``cli.app.main`` and ``python -m lancelot_cli``), and a server
transport before its first thread (``start_server``).

``start``:
* given the command line, pauses Python's cyclic garbage collector while a `lancelot serve` on
  stdio loads (server/process/collector.py says why and when it comes back);
* puts the lancedb import deferral first on ``sys.meta_path`` (storage/lancedb_import.py: about
  0.9 s of CPU less for every process that loads lancedb; ``LANCELOT_NO_FAST_IMPORT=1`` turns it
  off). It must come before lancedb loads; a process that loads lancedb without it (a library
  user, a test) gets lancedb as shipped, slower and otherwise the same.
* quiets lancedb's Rust log (env_logger, read once when lancedb loads), which prints WARN lines
  such as "Failed to read full text search configuration…" with source paths to stderr; what
  matters reaches us as an error anyway. ``LANCELOT_LOG_LEVEL=debug``, or ``LANCEDB_LOG`` set by
  hand, shows them. Set in ``os.environ`` so that processes we start inherit it.

``start_server`` adds glibc's malloc settings for a long-running server (server/process/memory.py), which
must be applied while the process has one thread.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["start", "start_server", "started"]

_started: list[bool] = []  # one entry once ``start`` ran: it runs once per process


def start(argv: Sequence[str] | None = None) -> None:
    """Set up this process for a lancelot run (``argv``: its command line, ``sys.argv[1:]``, when
    it is the `lancelot` command); later calls do nothing."""
    if _started:
        return
    _started.append(True)
    if argv is not None:
        from lancelot_cli.server.process import collector

        if collector.stdio_serve(list(argv)):
            collector.pause()
    if os.environ.get("LANCELOT_LOG_LEVEL", "").strip().lower() not in ("debug", "silly"):
        os.environ.setdefault("LANCEDB_LOG", "error")
    from lancelot_cli.storage import lancedb_import

    lancedb_import.install()


def start_server() -> list[str]:
    """``start``, then the malloc settings of a server; the names of the variables applied (for the
    log). Call it first in a transport, while this is the only thread (see server/process/memory.py)."""
    start()
    from lancelot_cli.server.process.memory import tune_malloc

    return tune_malloc()


def started() -> bool:
    return bool(_started)
