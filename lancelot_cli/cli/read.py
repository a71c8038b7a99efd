"""`status`, `query`, `show`, `ls`, `version`: the engine's models, drawn for a person (`render`) or as
JSON (`wire`).

`search` has a module of its own (cli/search.py), re-exported here with its terminal limit. `render`
(rich) and the engine (lancedb) are imported inside the commands: `--help` needs neither. The read
commands (not `version`) are answered by the background server when one runs (cli/answer.py,
background/client.py), else by the engine in-process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from lancelot_cli.cli.answer import answer, ask
from lancelot_cli.cli.options import (
    Also,
    Budget,
    Db,
    Filter,
    Json,
    Limit,
    PathPrefix,
    PerDocument,
    Table,
    load_settings,
    parse_filters,
)
from lancelot_cli.cli.quick import own_words, read_request

# `search` and its terminal limit, where they were before cli/search.py (tests/test_listing.py imports them here)
from lancelot_cli.cli.search import SEARCH_EPILOG, SEARCH_HELP, TERMINAL_LIMIT, search, terminal_limit  # noqa: F401
from lancelot_cli.limits import MAX_LIMIT
from lancelot_cli.requests import Listing, Query, Request, Status
from lancelot_cli.settings import Settings
from lancelot_cli.wire import to_json

if TYPE_CHECKING:
    pass

R = TypeVar("R")


STATUS_HELP = (
    "Show the database, a table of its tables (rows, full-text index, vectors and how many rows lack "
    "one, when each was last written), what a search does on each (hybrid or text only, and why), "
    "what `index --embed` would make vectors with, and every setting with where it came from (flag, "
    "environment, settings file, default)."
)
STATUS_EPILOG = "Exits 1 when the database cannot be opened (with --json, after printing the reply)."
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
    per_document: PerDocument = None,
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
    request = Query(
        question,
        context_budget=budget,
        warm_start=warm_start,
        table=table,
        limit=limit,
        path_prefix=path_prefix,
        filters=parse_filters(filters),
        queries=also or None,
        per_document=per_document,
    )
    reply, text = _answer(load_settings(ctx, db), request)
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.cli import render

        render.context_block(reply)


def _answer(settings: Settings, request: Request[R]) -> tuple[R, str]:
    """The request's reply and its --json text, from the background server or in-process (answer.py)."""
    return answer(settings, str(request.tool), request.arguments(), request.ask, request.reply_from_wire)


def status(
    ctx: typer.Context,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Include each table's columns.")] = False,
    json_out: Json = False,
    db: Db = None,
) -> None:
    """Exit 1 when the database cannot be opened."""
    settings = load_settings(ctx, db)
    reply, text = _answer(settings, Status(verbose=verbose))
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.background.daemon import status_line
        from lancelot_cli.cli import render

        render.status_reply(reply, settings, status_line(settings))
    if not reply.connection.ok:
        raise typer.Exit(1)


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
    read = read_request(source, before, after, page, budget, table)
    if read is None:
        raise typer.BadParameter("give SOURCE with --page, or SOURCE#N without it", param_hint="'--page'")
    reply, text = _answer(load_settings(ctx, db), read)
    if json_out:
        typer.echo(text)
    else:
        from lancelot_cli.cli import render

        render.document(own_words(reply))


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

    reply = ask(lambda: Listing(prefix, table=table).ask(Engine(load_settings(ctx, db))))
    if json_out:
        typer.echo(to_json(reply))
    else:
        from lancelot_cli.cli import render

        render.document_list(reply)
