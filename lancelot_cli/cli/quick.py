"""The warm terminal path: `search`, `query`, `show` and `status` answered by a running background
server without Typer (issue 49).

A command line of one of these commands, with options written the plain way (``--limit 5``,
``--limit=5``, ``-n 5``), is read here with the standard library, built into its request
(lancelot_cli/requests.py) and sent to the background server (background/client.py); its reply is
drawn by the same code the command uses, so the output is the same byte for byte. Typer, click,
pydantic and the ten command modules are never imported, and rich only by the drawing (a terminal
table, or the stderr notes the commands write with it).

Anything else is ``NOT_TAKEN`` and runs the Typer app (cli/commands.py) as before, which gives its
own help and usage errors: help, an option not listed here or written another way (``-n5``, a
bundle of short flags), a value Typer would convert or refuse (a number that is not plain digits
within its bounds, an unknown search type), two of --json and --jsonl, no background server, or a
call it did not answer. Nothing is printed before the reply is in hand, so a command not taken here
runs as if this module did not exist. Each option below is checked against the command's Typer
option of the same name (tests/test_quick_path.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from lancelot_cli.cli.quick_common import NOT_TAKEN, say_error, utf8
from lancelot_cli.limits import BUDGET_PARAMETER, MAX_BUDGET, MAX_PHRASINGS, MIN_BUDGET
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.requests import Query, Read, Request, Search, Status, bounds

if TYPE_CHECKING:
    from lancelot_cli.models import Document
    from lancelot_cli.settings import Settings

TERMINAL_LIMIT = 10  # hits `search` shows on a terminal when no limit is asked for (a screenful)


@dataclass(frozen=True)
class Number:
    """An option taking a whole number from ``low`` to ``high``, written as plain digits."""

    low: int
    high: int | None = None

    def read(self, text: str) -> int | None:
        if not (text.isascii() and text.isdigit()):
            return None  # "+5", " 5", "1_0", "-1": Typer converts or refuses them
        value = int(text)
        return value if value >= self.low and (self.high is None or value <= self.high) else None


FLAG, TEXT, MANY = "flag", "text", "many"  # a switch; a string; a repeatable string
Kind = str | Number

_LIMIT = Number(bounds(Search, "limit").low or 1, bounds(Search, "limit").high)
_PER_DOCUMENT = Number(bounds(Search, "per_document").low or 0, bounds(Search, "per_document").high)
_BUDGET = Number(MIN_BUDGET, MAX_BUDGET)
_AROUND = Number(bounds(Read, "before").low or 0, bounds(Read, "before").high)
_COMMON: dict[str, tuple[str, Kind]] = {"--db": ("db", TEXT), "--json": ("json_out", FLAG)}
_TABLE: dict[str, tuple[str, Kind]] = {"--table": ("table", TEXT), "-t": ("table", TEXT)}
_NARROWING: dict[str, tuple[str, Kind]] = {
    "--limit": ("limit", _LIMIT),
    "-n": ("limit", _LIMIT),
    "--path-prefix": ("path_prefix", TEXT),
    "--filter": ("filters", MANY),
    "-f": ("filters", MANY),
    "--also": ("also", MANY),
    "--per-document": ("per_document", _PER_DOCUMENT),
}
# Each command's options as its Typer command spells them: option -> (parameter, kind).
OPTIONS: dict[str, dict[str, tuple[str, Kind]]] = {
    "search": {
        **_COMMON,
        **_TABLE,
        **_NARROWING,
        "--type": ("search_type", TEXT),
        "--text-column": ("text_column", TEXT),
        "--vector-column": ("vector_column", TEXT),
        "--jsonl": ("jsonl_out", FLAG),
    },
    "query": {
        **_COMMON,
        **_TABLE,
        **_NARROWING,
        "--budget": ("budget", _BUDGET),
        "-b": ("budget", _BUDGET),
        "--warm-start": ("warm_start", FLAG),
    },
    "show": {
        **_COMMON,
        **_TABLE,
        "--before": ("before", _AROUND),
        "--after": ("after", _AROUND),
        "--page": ("page", Number(bounds(Read, "page").low or 1)),
        "--budget": ("budget", _BUDGET),
        "-b": ("budget", _BUDGET),
    },
    "status": {**_COMMON, "--verbose": ("verbose", FLAG), "-v": ("verbose", FLAG)},
}
ARGUMENTS = {"search": (1, 1), "query": (0, 1), "show": (1, 1), "status": (0, 0)}  # how many, at least and most


def parse(argv: Sequence[str]) -> tuple[str, dict[str, Any], list[str]] | None:
    """The command, its options and its arguments, or None when this is not a plain command line
    of a command taken here. A root ``--db`` before the command is read as the command's default."""
    args = list(argv)
    root_db = None
    while args and (args[0] == "--db" or args[0].startswith("--db=")):
        name, eq, value = args.pop(0).partition("=")
        if not eq:
            if not args:
                return None
            value = args.pop(0)
        root_db = value
    if not args or args[0] not in OPTIONS:
        return None
    command, options = args[0], OPTIONS[args[0]]
    given: dict[str, Any] = {}
    positional: list[str] = []
    rest = args[1:]
    while rest:
        token = rest.pop(0)
        if not utf8(token):
            return None  # Typer's usage error says which argument (cli/commands.py _check_text)
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        name, eq, value = token.partition("=")
        if name not in options or (eq and not name.startswith("--")):
            return None
        parameter, kind = options[name]
        if kind == FLAG:
            if eq:
                return None
            given[parameter] = True
            continue
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
            if value.startswith("-") and value != "-" and not isinstance(kind, Number):
                return None  # `--table --json`: Typer reads it as the value; let it say so its way
        if not utf8(value):
            return None
        if isinstance(kind, Number):
            number = kind.read(value)
            if number is None:
                return None
            given[parameter] = number
        elif kind == MANY:
            given.setdefault(parameter, []).append(value)
        else:
            given[parameter] = value
    low, high = ARGUMENTS[command]
    if not low <= len(positional) <= high:
        return None
    given["db"] = given.get("db") or root_db  # the command's --db, else the root's (options.load_settings)
    return command, given, positional


def run(argv: Sequence[str]) -> Any:
    """Answer the command line through the background server: its exit code, or ``NOT_TAKEN``."""
    parsed = parse(argv)
    if parsed is None:
        return NOT_TAKEN
    command, given, positional = parsed
    try:
        from lancelot_cli import settings as settings_module

        settings = settings_module.load(flags={"LANCEDB_PATH": given.get("db")})
        if settings.warm_minutes <= 0 or not settings.db_uri:
            return NOT_TAKEN
        request = _REQUESTS[command](settings, given, positional)
    except Exception:  # noqa: BLE001 - a settings file or value Typer's path words as an error of its own
        return NOT_TAKEN
    if request is None:
        return NOT_TAKEN
    from lancelot_cli.errors import LancelotError

    try:
        from lancelot_cli.background import client
        from lancelot_cli.cli.answer import ask

        whole = ask(lambda: client.call(settings, str(request.tool), request.arguments()))
        if whole is None:
            return NOT_TAKEN  # no server, or it did not answer: in-process, as always
        from lancelot_cli.wire import compact

        reply = request.reply_from_wire(whole)
        _DRAW[command](settings, given, reply, compact(whole))
    except LancelotError as exc:
        say_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        say_error("interrupted; nothing was changed by the unfinished step")
        return 130
    except BrokenPipeError:  # `lancelot search x | head`: the reader has what it wanted (cli/commands.py)
        return 1
    except _Exit as done:
        return done.code
    return 0


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def echo(text: str) -> None:
    """A line on stdout, as ``typer.echo`` writes it."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


# -- what each command asks and draws: the same as cli/search.py and cli/read.py -----------------


def terminal_limit(settings: Settings, limit: int | None, on_terminal: bool) -> int | None:
    """The limit of a search for a person: as asked, else LANCEDB_DEFAULT_LIMIT when it was set,
    else a screenful on a terminal (20 hits drew 136 lines). Piped, scripts and the MCP tool keep
    the setting's default."""
    if limit is not None or not on_terminal or settings.sources.get("LANCEDB_DEFAULT_LIMIT", "default") != "default":
        return limit
    return min(TERMINAL_LIMIT, settings.default_limit)


def filters_of(values: Sequence[str] | None) -> dict[str, Any] | None:
    """["status=accepted", "status=proposed", "kind=adr"] -> {"status": [...], "kind": "adr"};
    raises ValueError for a value that is not COLUMN=VALUE (the CLI's option says so)."""
    if not values:
        return None
    found: dict[str, list[str]] = {}
    for value in values:
        column, sep, wanted = value.partition("=")
        if not sep or not column.strip():
            raise ValueError(value)
        found.setdefault(column.strip(), []).append(wanted)
    return {column: vals[0] if len(vals) == 1 else vals for column, vals in found.items()}


def _search(settings: Settings, given: Mapping[str, Any], positional: list[str]) -> Search | None:
    also = given.get("also")
    if (given.get("json_out") and given.get("jsonl_out")) or given.get("search_type", "auto") not in SEARCH_TYPES:
        return None
    if also and len(also) > MAX_PHRASINGS:
        return None
    plain = not (given.get("json_out") or given.get("jsonl_out"))
    return Search(
        positional[0],
        limit=terminal_limit(settings, given.get("limit"), plain and sys.stdout.isatty()),
        search_type=given.get("search_type", "auto"),
        table=given.get("table"),
        text_column=given.get("text_column"),
        vector_column=given.get("vector_column"),
        path_prefix=given.get("path_prefix"),
        filters=filters_of(given.get("filters")),
        per_document=given.get("per_document"),
        queries=also or None,
    )


def _query(settings: Settings, given: Mapping[str, Any], positional: list[str]) -> Query | None:
    also = given.get("also")
    if (not positional and not given.get("warm_start")) or (also and len(also) > MAX_PHRASINGS):
        return None
    return Query(
        positional[0] if positional else "",
        context_budget=given.get("budget"),
        warm_start=bool(given.get("warm_start")),
        table=given.get("table"),
        limit=given.get("limit"),
        path_prefix=given.get("path_prefix"),
        filters=filters_of(given.get("filters")),
        queries=also or None,
        per_document=given.get("per_document"),
    )


def read_request(
    source: str, before: int, after: int, page: int | None, budget: int | None, table: str | None
) -> Read | None:
    """`show SOURCE` (or SOURCE#N: the chunks around chunk N) as its request; None for SOURCE#N
    with a page (the command's usage error)."""
    _, sep, number = source.rpartition("#")
    around = bool(sep and number.isdigit())
    if around and page is not None:
        return None
    read = Read(id=source, before=before, after=after) if around else Read(source, page=page)
    return replace(read, context_budget=budget, table=table)


def _show(settings: Settings, given: Mapping[str, Any], positional: list[str]) -> Read | None:
    return read_request(
        positional[0],
        given.get("before", 2),
        given.get("after", 2),
        given.get("page"),
        given.get("budget"),
        given.get("table"),
    )


def _status(settings: Settings, given: Mapping[str, Any], positional: list[str]) -> Status:
    return Status(verbose=bool(given.get("verbose")))


def own_words(reply: Document) -> Document:
    """The document with its "cut to fit" line naming `--budget`, the option a person passes here,
    instead of the tool's parameter (``BUDGET_PARAMETER``); --json keeps the tool's reply as it is."""
    tool, own = f"(or a larger {BUDGET_PARAMETER})._\n", "(or a larger --budget)._\n"
    if not reply.context.endswith(tool):
        return reply
    return replace(reply, context=reply.context[: -len(tool)] + own)


def _draw_search(settings: Settings, given: Mapping[str, Any], reply: Any, text: str) -> None:
    if given.get("json_out"):
        echo(text)
        return
    from lancelot_cli.cli import plain

    if given.get("jsonl_out"):
        if not plain.search_lines(reply):
            from lancelot_cli.cli import hits

            hits.search_lines(reply)
    elif not plain.search_reply(reply):
        from lancelot_cli.cli import hits
        from lancelot_cli.cli.links import folder_of

        hits.search_reply(reply, folder_of(settings, reply.table), given.get("also") or ())


def _draw_query(settings: Settings, given: Mapping[str, Any], reply: Any, text: str) -> None:
    if given.get("json_out"):
        echo(text)
    else:
        from lancelot_cli.cli import render

        render.context_block(reply)


def _draw_show(settings: Settings, given: Mapping[str, Any], reply: Any, text: str) -> None:
    if given.get("json_out"):
        echo(text)
    else:
        from lancelot_cli.cli import render

        render.document(own_words(reply))


def _draw_status(settings: Settings, given: Mapping[str, Any], reply: Any, text: str) -> None:
    if given.get("json_out"):
        echo(text)
    else:
        from lancelot_cli.background.daemon import status_line
        from lancelot_cli.cli import render

        render.status_reply(reply, settings, status_line(settings))
    if not reply.connection.ok:
        raise _Exit(1)


_REQUESTS: dict[str, Callable[[Settings, Mapping[str, Any], list[str]], Request[Any] | None]] = {
    "search": _search,
    "query": _query,
    "show": _show,
    "status": _status,
}
_DRAW: dict[str, Callable[[Settings, Mapping[str, Any], Any, str], None]] = {
    "search": _draw_search,
    "query": _draw_query,
    "show": _draw_show,
    "status": _draw_status,
}
