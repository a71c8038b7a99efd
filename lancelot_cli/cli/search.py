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
from lancelot_cli.cli.options import Also, Db, Filter, Json, PathPrefix, Table, load_settings, parse_filters
from lancelot_cli.limits import MAX_LIMIT
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.settings import BY_NAME, Settings
from lancelot_cli.wire import search_from_wire

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
    reply, text = answer(
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
