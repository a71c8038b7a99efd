"""`status`, `search`, `query`, `show`, `version`: the engine's models, drawn for a person (`render`) or as
JSON (`wire`).

`render` (rich) and the engine (lancedb) are imported inside the commands: `--help` needs neither. The
read commands (not `version`) are answered by the background server when one runs (`_answer`,
cli/background.py), else by the engine in-process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from lancelot_cli.cli.options import Also, Db, Json, Limit, Table, load_settings
from lancelot_cli.errors import LancelotError
from lancelot_cli.limits import BUDGET_PARAMETER, MAX_BUDGET, MAX_LIMIT, MIN_BUDGET
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.settings import BY_NAME, Settings
from lancelot_cli.wire import context_from_wire, document_from_wire, search_from_wire, status_from_wire, to_json

if TYPE_CHECKING:
    from lancelot_cli.engine import Engine
    from lancelot_cli.models import Document

T = TypeVar("T")

# How a person is told what to do next after an engine error (``LancelotError.hint``).
HINTS = {
    "text_column": " (pass --text-column or set LANCEDB_TEXT_COLUMN)",
    "vector_column": " (pass --vector-column or set LANCEDB_VECTOR_COLUMN)",
    "find_ids": "; run `lancelot search` to find ids (shown as SOURCE#N)",
    "find_source": " (`lancelot ls` lists them; `lancelot search` finds one)",
    "search_rows": " with `lancelot search QUERY --table NAME`",
}

STATUS_HELP = (
    "Show the database, a table of its tables (rows, full-text index, vectors and how many rows lack "
    "one, when each was last written), what a search does on each (hybrid or text only, and why), "
    "what `index --embed` would make vectors with, and every setting with where it came from (flag, "
    "environment, settings file, default)."
)
STATUS_EPILOG = "Exits 1 when the database cannot be opened (with --json, after printing the reply)."
SEARCH_HELP = (
    "Search the documents; what the lancedb_search tool does.\n\n"
    "On a terminal: a table of rank, score, where the hit is (its section, path:line - a link to the "
    "file where the terminal supports one - and its id for `lancelot show`) and a snippet with the "
    "query's words highlighted (a stacked list when the terminal is narrow). Piped: one plain block per "
    "hit. Notes (such as a fallback from vector to text search) and the hit count go to stderr; --json "
    "and --jsonl are the only output meant for programs."
)
SEARCH_EPILOG = (
    'Finding nothing is not an error: exit 0, with "No matches" on stderr (the --json reply has '
    "count 0; --jsonl prints no lines). Scripts read the count, as with the MCP tool, and a pipeline "
    "such as `lancelot search x --jsonl | jq` does not break on an empty result. Non-zero exits are "
    "for errors only."
)
QUERY_HELP = (
    "Print the context block for a question; what the lancedb_query tool does. On a terminal the "
    "block is shown as Markdown; piped, it is the raw Markdown text."
)
VERSION_HELP = (
    "Show Lancelot's version and the MCP protocol revisions it speaks on one line (--json: also the features)."
)
SHOW_HELP = (
    "Print one indexed document (its chunks in order, joined), or with SOURCE#N the chunks around "
    "chunk N, or with --page N page N of a PDF; what the lancedb_document tool does. Reads the "
    "database, never the files."
)

LS_HELP = (
    "List the indexed documents (those whose path starts with PREFIX): path, chunks, the file's size "
    "and title, by path. What to pass to `lancelot show`."
)

PathPrefix = Annotated[
    str | None,
    typer.Option(
        "--path-prefix",
        metavar="PREFIX",
        show_default=False,
        help="Only documents whose path starts with PREFIX (a folder needs its trailing slash: docs/adr/).",
    ),
]
Budget = Annotated[
    int | None,
    typer.Option(
        "--budget",
        "-b",
        min=MIN_BUDGET,
        max=MAX_BUDGET,
        metavar="CHARS",
        help="Maximum characters [default: LANCEDB_CONTEXT_BUDGET or 8000].",
        show_default=False,
    ),
]
Filter = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        "-f",
        metavar="COLUMN=VALUE",
        show_default=False,
        help="Only rows whose COLUMN equals VALUE (e.g. status=accepted); "
        "repeat for more columns, or repeat a column for any of "
        "several values.",
    ),
]


def parse_filters(values: list[str] | None) -> dict[str, object] | None:
    """["status=accepted", "status=proposed", "kind=adr"] -> {"status": [...], "kind": "adr"}."""
    if not values:
        return None
    found: dict[str, list[str]] = {}
    for value in values:
        column, sep, wanted = value.partition("=")
        if not sep or not column.strip():
            raise typer.BadParameter(f"{value!r} is not COLUMN=VALUE", param_hint="'--filter'")
        found.setdefault(column.strip(), []).append(wanted)
    return {column: vals[0] if len(vals) == 1 else vals for column, vals in found.items()}


SearchType = Enum("SearchType", {name: name for name in SEARCH_TYPES}, type=str)  # type: ignore[misc]


def _answer(
    settings: Settings,
    tool: str,
    arguments: dict[str, Any],
    local: Callable[[Engine], T],
    from_wire: Callable[[dict[str, Any]], T],
) -> tuple[T, str]:
    """The reply model ``render`` draws and its ``--json`` text: from the background server when one
    answers (``tool`` with the non-None ``arguments``; cli/background.py), else from the engine
    in-process (``local``). The same model, the same JSON and the same errors either way."""
    if settings.warm_minutes > 0:
        from lancelot_cli.cli import background

        whole = _ask(lambda: background.call(settings, tool, {k: v for k, v in arguments.items() if v is not None}))
        if whole is not None:
            return from_wire(whole), json.dumps(whole, ensure_ascii=False, separators=(",", ":"))
    from lancelot_cli.engine import Engine
    from lancelot_cli.local_embed import announced_to

    engine = Engine(settings)
    with announced_to(_waiting):  # a search that loads a local model says so on a terminal
        reply = _ask(lambda: local(engine))
    return reply, to_json(reply)


def _waiting(message: str) -> AbstractContextManager[None]:
    """render's spinner, imported (with rich) only when a model does load."""
    from lancelot_cli.cli.render import waiting

    return waiting(message)


def _ask(call: Callable[[], T]) -> T:
    """Run an engine call; its error's hint worded for a person (the CLI's boundary prints it)."""
    try:
        return call()
    except LancelotError as exc:
        if exc.hint is None:
            raise
        raise type(exc)(exc.worded(HINTS)) from None


TERMINAL_LIMIT = 10  # hits `search` shows on a terminal when no limit is asked for (a screenful)

SearchLimit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=1,
        max=MAX_LIMIT,
        metavar="N",
        help=f"Maximum results, 1 to {MAX_LIMIT} [default: LANCEDB_DEFAULT_LIMIT, or {TERMINAL_LIMIT} on a "
        f"terminal and {BY_NAME['LANCEDB_DEFAULT_LIMIT'].default} piped].",
        show_default=False,
    ),
]


def terminal_limit(settings: Settings, limit: int | None, on_terminal: bool) -> int | None:
    """The limit of a search for a person: as asked, else LANCEDB_DEFAULT_LIMIT when it was set,
    else a screenful on a terminal (20 hits drew 136 lines). Piped, scripts and the MCP tool keep
    the setting's default."""
    if limit is not None or not on_terminal or settings.sources.get("LANCEDB_DEFAULT_LIMIT", "default") != "default":
        return limit
    return min(TERMINAL_LIMIT, settings.default_limit)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.", metavar="QUERY", show_default=False)],
    limit: SearchLimit = None,
    search_type: Annotated[
        SearchType,
        typer.Option(
            "--type",
            help="auto: hybrid when the table has vectors it can use (made by a local model, or "
            "a key is set), else text; text: BM25 full-text; vector: by meaning (needs vectors, and a "
            "key unless a local model made them); hybrid: both, fused.",
        ),
    ] = SearchType.auto,  # type: ignore[attr-defined]
    table: Table = None,
    text_column: Annotated[
        str | None,
        typer.Option(
            "--text-column",
            metavar="COLUMN",
            help="Column holding the text [default: LANCEDB_TEXT_COLUMN or text].",
            show_default=False,
        ),
    ] = None,
    vector_column: Annotated[
        str | None,
        typer.Option(
            "--vector-column",
            metavar="COLUMN",
            help="Column holding the vectors [default: LANCEDB_VECTOR_COLUMN or vector].",
            show_default=False,
        ),
    ] = None,
    path_prefix: PathPrefix = None,
    filters: Filter = None,
    per_document: Annotated[
        int | None,
        typer.Option(
            "--per-document",
            min=0,
            max=MAX_LIMIT,
            metavar="N",
            show_default=False,
            help="At most N chunks of one document among the hits [default: 2]; 0: every chunk.",
        ),
    ] = None,
    also: Also = None,
    json_out: Json = False,
    jsonl_out: Annotated[
        bool, typer.Option("--jsonl", help="Print one JSON object per hit, one per line (the hits of --json).")
    ] = False,
    db: Db = None,
) -> None:
    """Exit 0 also when nothing matches (the count says so); non-zero only for errors."""
    if json_out and jsonl_out:
        raise typer.BadParameter("use one of --json and --jsonl", param_hint="'--jsonl'")
    wanted = parse_filters(filters)
    settings = load_settings(ctx, db)
    limit = terminal_limit(settings, limit, not (json_out or jsonl_out) and sys.stdout.isatty())
    reply, text = _answer(
        settings,
        "lancedb_search",
        {
            "query": query,
            "limit": limit,
            "searchType": search_type.value,
            "table": table,
            "textColumn": text_column,
            "vectorColumn": vector_column,
            "pathPrefix": path_prefix,
            "filters": wanted,
            "perDocument": per_document,
            "queries": also or None,
        },
        lambda engine: engine.search(
            query,
            limit=limit,
            search_type=search_type.value,
            table=table,
            text_column=text_column,
            vector_column=vector_column,
            path_prefix=path_prefix,
            filters=wanted,
            per_document=per_document,
            queries=also or None,
        ),
        lambda data: search_from_wire(data, query),
    )
    from lancelot_cli.cli import render

    if json_out:
        typer.echo(text)
    elif jsonl_out:
        render.search_lines(reply)
    else:
        from lancelot_cli.cli.links import folder_of

        render.search_reply(reply, folder_of(settings, reply.table), also or ())


def query(
    ctx: typer.Context,
    question: Annotated[
        str | None,
        typer.Argument(
            help="The question to retrieve context for (none with --warm-start).",
            metavar="QUESTION",
            show_default=False,
        ),
    ] = None,
    budget: Budget = None,
    warm_start: Annotated[bool, typer.Option("--warm-start", help="An overview of the collection instead.")] = False,
    limit: Limit = None,
    table: Table = None,
    path_prefix: PathPrefix = None,
    filters: Filter = None,
    also: Also = None,
    json_out: Json = False,
    db: Db = None,
) -> None:
    if question is None and not warm_start:
        from lancelot_cli.errors import InvalidArgumentError

        raise InvalidArgumentError(
            "missing argument QUESTION: give a question, or --warm-start for an overview of the collection; "
            "see `lancelot query --help`"
        )
    question = question or ""  # the tool's question; an overview does not read it
    wanted = parse_filters(filters)
    reply, text = _answer(
        load_settings(ctx, db),
        "lancedb_query",
        {
            "question": question,
            "contextBudget": budget,
            "warmStart": warm_start,
            "table": table,
            "limit": limit,
            "pathPrefix": path_prefix,
            "filters": wanted,
            "queries": also or None,
        },
        lambda engine: engine.query(
            question,
            context_budget=budget,
            warm_start=warm_start,
            table=table,
            limit=limit,
            path_prefix=path_prefix,
            filters=wanted,
            queries=also or None,
        ),
        lambda data: context_from_wire(data, question),
    )
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.cli import render

        render.context_block(reply)


def status(
    ctx: typer.Context,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Include each table's columns.")] = False,
    json_out: Json = False,
    db: Db = None,
) -> None:
    """Exit 1 when the database cannot be opened."""
    settings = load_settings(ctx, db)
    reply, text = _answer(
        settings,
        "lancedb_status",
        {"verbose": verbose},
        lambda engine: engine.status(verbose=verbose),
        status_from_wire,
    )
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.cli import render

        render.status_reply(reply, settings, _background_line(settings))
    if not reply.connection.ok:
        raise typer.Exit(1)


def _background_line(settings: Settings) -> str:
    """What `status` says of the background server for these settings (cli/background.py)."""
    if settings.warm_minutes <= 0:
        return "off (LANCELOT_WARM=0)"
    from lancelot_cli.cli import background

    if not background.supported():
        return "not available on this system"
    pid = background.running(settings)
    idle = f"exits after {settings.warm_minutes:g} idle minutes; LANCELOT_WARM=0 turns it off"
    if pid is not None:
        return f"running ({background.described(settings, pid)}; {idle})"
    if background.pending():
        return f"starting, for the next read command ({idle})"
    return f"not running ({idle})"


def version(ctx: typer.Context, json_out: Json = False) -> None:
    from lancelot_cli.engine import Engine
    from lancelot_cli.server.protocol import protocol_version, supported_versions
    from lancelot_cli.settings import Settings

    reply = Engine(Settings()).version(protocol_version(), supported=supported_versions())
    if json_out:
        typer.echo(to_json(reply))
    else:
        older = [v for v in reply.mcp_protocol_versions if v != reply.mcp_protocol_version]
        also = f"; also {', '.join(older)}" if older else ""
        typer.echo(f"lancelot {reply.version} (MCP protocol {reply.mcp_protocol_version}{also})")


def show(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            help="A document's path as search shows it, or SOURCE#N for the chunks around chunk N (a hit's id).",
            metavar="SOURCE[#N]",
            show_default=False,
        ),
    ],
    before: Annotated[int, typer.Option("--before", min=0, max=MAX_LIMIT, help="Chunks before chunk N.")] = 2,
    after: Annotated[int, typer.Option("--after", min=0, max=MAX_LIMIT, help="Chunks after chunk N.")] = 2,
    page: Annotated[
        int | None,
        typer.Option("--page", min=1, metavar="N", help="Only page N of a PDF (as hits say it).", show_default=False),
    ] = None,
    budget: Budget = None,
    table: Table = None,
    json_out: Json = False,
    db: Db = None,
) -> None:
    _, sep, number = source.rpartition("#")
    around = bool(sep and number.isdigit())  # SOURCE#N: the chunks around chunk N
    if around and page is not None:
        raise typer.BadParameter("give SOURCE with --page, or SOURCE#N without it", param_hint="'--page'")

    def local(engine: Engine) -> Document:
        if around:
            return engine.document(chunk_id=source, before=before, after=after, context_budget=budget, table=table)
        return engine.document(source, context_budget=budget, table=table, page=page)

    arguments = {"id": source, "before": before, "after": after} if around else {"source": source, "page": page}
    reply, text = _answer(
        load_settings(ctx, db),
        "lancedb_document",
        {**arguments, "contextBudget": budget, "table": table},
        local,
        document_from_wire,
    )
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.cli import render

        render.document(_own_words(reply))


def _own_words(reply: Document) -> Document:
    """The document with its "cut to fit" line naming `--budget`, the option a person passes here,
    instead of the tool's parameter (``BUDGET_PARAMETER``); --json keeps the tool's reply as it is."""
    from dataclasses import replace

    tool, own = f"(or a larger {BUDGET_PARAMETER})._\n", "(or a larger --budget)._\n"
    if not reply.context.endswith(tool):
        return reply
    return replace(reply, context=reply.context[: -len(tool)] + own)


def ls(
    ctx: typer.Context,
    prefix: Annotated[
        str | None,
        typer.Argument(
            help="Only documents whose path starts with PREFIX (a folder needs its trailing slash: tutorial/).",
            metavar="PREFIX",
            show_default=False,
        ),
    ] = None,
    table: Table = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the list as JSON on stdout (for scripts).")] = False,
    db: Db = None,
) -> None:
    from lancelot_cli.engine import Engine

    reply = _ask(lambda: Engine(load_settings(ctx, db)).documents(prefix, table=table))
    if json_out:
        typer.echo(to_json(reply))
    else:
        from lancelot_cli.cli import render

        render.document_list(reply)
