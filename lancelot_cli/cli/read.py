"""`status`, `query`, `show`, `ls`, `version`: the engine's models, drawn for a person (`render`) or as
JSON (`wire`).

`search` has a module of its own (cli/search.py), re-exported here with its terminal limit. `render`
(rich) and the engine (lancedb) are imported inside the commands: `--help` needs neither. The read
commands (not `version`) are answered by the background server when one runs (cli/answer.py,
cli/background.py), else by the engine in-process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

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
    Table,
    load_settings,
    parse_filters,
)

# `search` and its terminal limit, where they were before cli/search.py (tests/test_listing.py imports them here)
from lancelot_cli.cli.search import SEARCH_EPILOG, SEARCH_HELP, TERMINAL_LIMIT, search, terminal_limit  # noqa: F401
from lancelot_cli.limits import BUDGET_PARAMETER, MAX_LIMIT
from lancelot_cli.settings import Settings
from lancelot_cli.wire import context_from_wire, document_from_wire, status_from_wire, to_json

if TYPE_CHECKING:
    from lancelot_cli.engine import Engine
    from lancelot_cli.models import Document


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
    reply, text = answer(
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
    reply, text = answer(
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
    reply, text = answer(
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

    reply = ask(lambda: Engine(load_settings(ctx, db)).documents(prefix, table=table))
    if json_out:
        typer.echo(to_json(reply))
    else:
        from lancelot_cli.cli import render

        render.document_list(reply)
