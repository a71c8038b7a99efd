"""A plain `lancelot index SRC [DB]` handed to a watcher without Typer (issue 49 #2), as cli/quick.py
does for the read commands: half the client's CPU again (Typer, click and the command modules are
never loaded).

Taken: ``index SRC [DB]`` with only ``--table NAME`` (``-t NAME``, ``--table=NAME``) and ``--json``,
and a watcher that accepts the run (cli/handoff.py). Anything else is ``NOT_TAKEN`` and runs the
Typer command as before (which asks the watcher again, and hears the same): another option, help,
a value Typer would read another way, settings it words an error for, no watcher. Nothing is printed
before the watcher's answer, so a command line not taken here runs as if this module did not exist.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from lancelot_cli.cli.quick_common import NOT_TAKEN, say_error, utf8


def parse(argv: Sequence[str]) -> tuple[list[str], str | None, bool] | None:
    """SRC and DB, ``--table`` and ``--json``; None when this is not such a plain command line."""
    if not argv or argv[0] != "index":
        return None
    positional: list[str] = []
    table: str | None = None
    json_out = False
    rest = list(argv[1:])
    while rest:
        token = rest.pop(0)
        if not utf8(token):
            return None
        if token == "--json":
            json_out = True
        elif token in ("--table", "-t") and rest and not rest[0].startswith("-") and utf8(rest[0]):
            table = rest.pop(0)
        elif token.startswith("--table=") and not token.startswith("--table=-"):
            table = token.partition("=")[2]
        elif token.startswith("-"):
            return None  # another option, `--`, `-`, a value that looks like an option: Typer's to read
        else:
            positional.append(token)
    if not 1 <= len(positional) <= 2:
        return None
    return positional, table, json_out


def run(argv: Sequence[str]) -> Any:
    """Hand the command line's run to a watcher: its exit code, or ``NOT_TAKEN``."""
    parsed = parse(argv)
    if parsed is None:
        return NOT_TAKEN
    (source, *database), table, json_out = parsed
    from lancelot_cli import settings as settings_module
    from lancelot_cli.cli.handoff import PLAIN, hand_off
    from lancelot_cli.errors import LancelotError

    try:
        flags = {"LANCEDB_PATH": database[0] if database else None, "LANCEDB_TABLE": table}
        settings = settings_module.load(flags=flags)
    except Exception:  # noqa: BLE001 - a settings file or value the Typer command words as an error of its own
        return NOT_TAKEN
    try:
        summary = hand_off(settings, source, PLAIN)
    except LancelotError as exc:
        say_error(str(exc))
        return exc.exit_code
    if summary is None:
        return NOT_TAKEN
    from lancelot_cli.cli.links import remember
    from lancelot_cli.cli.progress import index_summary

    remember(settings, source)
    index_summary(summary)
    if json_out:
        from lancelot_cli.wire import to_json

        sys.stdout.write(to_json(summary) + "\n")
    return 0
