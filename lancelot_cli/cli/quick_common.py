"""What the quick paths (cli/quick.py for the read commands, cli/quick_index.py for a re-run a
watcher takes) share with each other and with the Typer app, standard library only: ``NOT_TAKEN``, the
one error line every command gives, and the check that a command-line word is text a table can hold."""

from __future__ import annotations

import sys
from typing import Final

NOT_TAKEN: Final = object()  # what a quick path returns for a command line the Typer app runs instead


def say_error(message: str) -> None:
    """An error as the one line every command gives: on stderr, a key or URL password hidden
    (issue 37), a file name's controls written out."""
    from lancelot_cli import redact
    from lancelot_cli.cli.visible import shown

    first_line = shown(redact.text(" ".join(message.split())))
    sys.stderr.write(f"lancelot: error: {first_line}\n")
    sys.stderr.flush()


def utf8(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (a word of undecodable bytes is the Typer app's to refuse)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
