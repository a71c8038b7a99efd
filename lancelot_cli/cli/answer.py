"""How a read command gets its reply: from the background server when one answers, else from the
engine in-process; the same model, the same JSON and the same errors either way.

An engine error's hint is worded for a person here (``HINTS``); the CLI's boundary prints it.
The engine (lancedb) and the background client are imported only when a command asks.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

from lancelot_cli.errors import LancelotError
from lancelot_cli.settings import Settings
from lancelot_cli.wire import compact, to_json

if TYPE_CHECKING:
    from lancelot_cli.engine import Engine

T = TypeVar("T")

# How a person is told what to do next after an engine error (``LancelotError.hint``).
HINTS = {
    "text_column": " (pass --text-column or set LANCEDB_TEXT_COLUMN)",
    "vector_column": " (pass --vector-column or set LANCEDB_VECTOR_COLUMN)",
    "find_ids": "; run `lancelot search` to find ids (shown as SOURCE#N)",
    "find_source": " (`lancelot ls` lists them; `lancelot search` finds one)",
    "search_rows": " with `lancelot search QUERY --table NAME`",
}


def answer(
    settings: Settings,
    tool: str,
    arguments: dict[str, Any],
    local: Callable[[Engine], T],
    from_wire: Callable[[dict[str, Any]], T],
) -> tuple[T, str]:
    """The reply model ``render`` draws and its ``--json`` text: from the background server when one
    answers (``tool`` with the non-None ``arguments``; background/client.py), else from the engine
    in-process (``local``). The same model, the same JSON and the same errors either way."""
    if settings.warm_minutes > 0:
        from lancelot_cli.background import client

        whole = ask(lambda: client.call(settings, tool, {k: v for k, v in arguments.items() if v is not None}))
        if whole is not None:
            return from_wire(whole), compact(whole)
    from lancelot_cli.engine import Engine
    from lancelot_cli.local_embed import announced_to

    engine = Engine(settings)
    with announced_to(_waiting):  # a search that loads a local model says so on a terminal
        reply = ask(lambda: local(engine))
    return reply, to_json(reply)


def _waiting(message: str) -> AbstractContextManager[None]:
    """render's spinner, imported (with rich) only when a model does load."""
    from lancelot_cli.cli.render import waiting

    return waiting(message)


def ask(call: Callable[[], T]) -> T:
    """Run an engine call; its error's hint worded for a person (the CLI's boundary prints it)."""
    try:
        return call()
    except LancelotError as exc:
        if exc.hint is None:
            raise
        raise type(exc)(exc.worded(HINTS)) from None
