"""`lancelot search`: its options, how many hits a person gets on a terminal, and the command.

The reply comes from cli/answer.py and is drawn by `render` (hits.py), or printed as --json or
--jsonl; `render` (rich) is imported only once there is a reply to draw.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from lancelot_cli.cli.answer import answer
from lancelot_cli.cli.options import (
    Also,
    Db,
    Filter,
    Json,
    PathPrefix,
    PerDocument,
    Table,
    load_settings,
    parse_filters,
)
from lancelot_cli.cli.quick import TERMINAL_LIMIT, terminal_limit
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.requests import Search, bounds
from lancelot_cli.settings import BY_NAME

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

SearchType = Enum("SearchType", {name: name for name in SEARCH_TYPES}, type=str)  # type: ignore[misc]

LIMIT = bounds(Search, "limit")

SearchLimit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=LIMIT.low,
        max=LIMIT.high,
        metavar="N",
        help=f"Maximum results, {LIMIT.low} to {LIMIT.high} [default: LANCEDB_DEFAULT_LIMIT, or {TERMINAL_LIMIT} on a "
        f"terminal and {BY_NAME['LANCEDB_DEFAULT_LIMIT'].default} piped].",
        show_default=False,
    ),
]


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
    per_document: PerDocument = None,
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
    request = Search(
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
    )
    reply, text = answer(settings, str(request.tool), request.arguments(), request.ask, request.reply_from_wire)
    from lancelot_cli.cli import render

    if json_out:
        typer.echo(text)
    elif jsonl_out:
        render.search_lines(reply)
    else:
        from lancelot_cli.cli.links import folder_of

        render.search_reply(reply, folder_of(settings, reply.table), also or ())
