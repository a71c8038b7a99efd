"""The `lancelot` entry point (``main``), light: it decides how to run before anything heavy loads.

A read command a running background server can answer (`search`, `query`, `show`, `status`) goes
through cli/quick.py (a plain `index` re-run a `--watch` process takes: cli/quick_index.py): its
options read with the standard library, the request sent, the reply
drawn as the command draws it, byte for byte (issue 49). Anything else, and any such command the
quick path does not take on (help, an unusual option, a value to check, no server), runs the
Typer app of cli/commands.py, imported then. ``app``, ``run`` and the rest of cli/commands.py
are reachable here as before (``from lancelot_cli.cli.app import app``), loaded on first use.

`lancelot serve` on stdio: the cyclic garbage collector stays off while typer, mcp, pydantic and
lancedb load (server/process/collector.py); run_stdio sets the deadline that turns it back on. Decided in
``main`` at start-up from the arguments it runs, not when a module is imported.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from lancelot_cli._version import __version__


def main() -> None:
    """Console-script entry point. Ctrl-C outside a command (while the CLI starts) is one line too.

    The process ends with ``os._exit`` once its output is flushed: tearing down an interpreter that
    loaded lancedb takes 0.2 s on an idle machine and seconds on a busy one, and a Ctrl-C in that
    window would kill the process without its line. Nothing of ours waits for interpreter exit
    (no atexit handlers; writer locks, staging folders and workers are released in ``finally``).
    """
    argv = sys.argv[1:]
    from lancelot_cli.startup import start

    start(argv)  # the process-wide set-up (gc pause for a stdio serve, the lancedb import deferral)
    from lancelot_cli.cli import quick

    code = quick.run(argv)
    if code is quick.NOT_TAKEN and argv[:1] == ["index"]:  # a plain re-run a watcher takes (cli/quick_index.py)
        from lancelot_cli.cli import quick_index

        code = quick_index.run(argv)  # NOT_TAKEN too is quick_common's
    if code is quick.NOT_TAKEN:
        from lancelot_cli.cli import commands

        commands._PROCESS_EXIT = True
        code = commands.run()
    daemon = sys.modules.get("lancelot_cli.background.daemon")  # loaded by a read command, LANCELOT_WARM on
    if daemon is not None and code in (0, None):  # a failed command (a mistyped --db) starts none
        try:
            _flush_output()  # whoever reads our output need not wait for the start
            daemon.start_pending()  # after the output: the next read command finds a server
        except KeyboardInterrupt:
            _exit_now(130)
    _exit_now(code)


def _exit_now(code: Any) -> None:
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): print it, exit 1, as Python would
        sys.stderr.write(f"{code}\n")
        code = 1
    logging = sys.modules.get("logging")  # its handlers flushed, when something loaded it
    if logging is not None:
        logging.shutdown()
    _flush_output()
    os._exit(code)


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`) or a closed stream
            stream.flush()


def __getattr__(name: str) -> Any:
    """``app``, ``run`` and the rest of the Typer app (cli/commands.py), imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    from lancelot_cli.cli import commands

    return getattr(commands, name)


__all__ = ["__version__", "app", "main", "run"]  # noqa: F822 - app and run: from cli/commands.py (__getattr__)
