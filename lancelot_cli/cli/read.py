"""`status`, `search`, `query`, `version`: the MCP tools' engine, printed for a person or as JSON."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from lancelot_cli.cli import render
from lancelot_cli.cli.options import Db, Json, Limit, Table, load_settings
from lancelot_cli.formats import to_json

STATUS_HELP = "Show the database, its tables (rows, vectors, full-text index) and whether vector search is set up."
SEARCH_HELP = "Search the documents; what the lancedb_search tool does."
QUERY_HELP = "Print the context block for a question; what the lancedb_query tool does."
VERSION_HELP = "Show Lancelot's version, the MCP protocol version and the features."


class SearchType(str, Enum):
    auto = "auto"
    text = "text"
    vector = "vector"
    hybrid = "hybrid"


def _engine(ctx: typer.Context, db: str | None):  # type: ignore[no-untyped-def]
    from lancelot_cli.engine import Engine

    return Engine(load_settings(ctx, db))


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for.", show_default=False)],
    limit: Limit = None,
    search_type: Annotated[SearchType, typer.Option("--type", help="Search type.")] = SearchType.auto,
    table: Table = None,
    text_column: Annotated[str | None, typer.Option("--text-column", help="Column holding the text.",
                                                    show_default=False)] = None,
    vector_column: Annotated[str | None, typer.Option("--vector-column", help="Column holding the vectors.",
                                                      show_default=False)] = None,
    json_out: Json = False,
    db: Db = None,
) -> None:
    """Exit 0 also when nothing matches (the count says so); non-zero only for errors."""
    engine = _engine(ctx, db)
    reply = engine.search(query, limit=limit, search_type=search_type.value, table=table,
                          text_column=text_column, vector_column=vector_column)
    if json_out:
        typer.echo(to_json(reply))
    else:
        render.search_reply(reply)


def query(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question to retrieve context for.", show_default=False)],
    budget: Annotated[int | None, typer.Option("--budget", "-b", min=200,
                                               help="Maximum characters [default: LANCEDB_CONTEXT_BUDGET or 8000].",
                                               show_default=False)] = None,
    warm_start: Annotated[bool, typer.Option("--warm-start", help="An overview of the collection instead.")] = False,
    limit: Limit = None,
    table: Table = None,
    json_out: Json = False,
    db: Db = None,
) -> None:
    engine = _engine(ctx, db)
    reply = engine.query(question, context_budget=budget, warm_start=warm_start, table=table, limit=limit)
    if json_out:
        typer.echo(to_json(reply))
    else:
        render.context_block(reply)


def status(
    ctx: typer.Context,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Include each table's columns.")] = False,
    json_out: Json = False,
    db: Db = None,
) -> None:
    """Exit 1 when the database cannot be opened."""
    engine = _engine(ctx, db)
    reply = engine.status(verbose=verbose)
    if json_out:
        typer.echo(to_json(reply))
    else:
        render.status_reply(reply, engine.settings)
    if not reply["connection"]["ok"]:
        raise typer.Exit(1)


def version(ctx: typer.Context, json_out: Json = False) -> None:
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import Settings

    from lancelot_cli.server.protocol import protocol_version

    reply = Engine(Settings()).version(protocol_version())
    if json_out:
        typer.echo(to_json(reply))
    else:
        typer.echo(f"lancelot {reply['version']} (MCP protocol {reply['mcpProtocolVersion']})")
