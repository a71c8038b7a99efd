"""Option types shared by the commands, so every command spells them the same way."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from lancelot_cli import settings as settings_module
from lancelot_cli.limits import MAX_BUDGET, MAX_LIMIT, MAX_PHRASINGS, MIN_BUDGET
from lancelot_cli.location import Location
from lancelot_cli.requests import PER_DOCUMENT, Query, Search, bounds
from lancelot_cli.settings import BY_NAME, DEFAULT_TABLE, Settings


def complete_table(ctx: typer.Context, incomplete: str) -> list[str]:
    """Table names for `--table <TAB>`: the ``*.lance`` folders in the database folder.

    The folder comes from the command's ``--db``, else the global one, else ``LANCEDB_PATH``, else the
    settings file. Only the folder is listed (no lancedb import), so completion stays fast; anything
    unexpected (no folder, a remote URI, a settings file that cannot be read) gives no suggestions.
    """
    try:
        given = _completion_db(ctx)
        location = Location.parse(given) if given else None
        if location is None or not location.is_local:
            return []
        names = sorted(
            entry.name[: -len(".lance")]
            for entry in os.scandir(location.folder)
            if entry.is_dir() and entry.name.endswith(".lance") and not entry.name.startswith(".")
        )
    except Exception:  # noqa: BLE001 - completion must never print a traceback into the shell
        return []
    return [name for name in names if name.startswith(incomplete)]


def _completion_db(ctx: typer.Context) -> str | None:
    current: Any = ctx
    while current is not None:  # the command's --db (index: its DB argument), then the root's
        params = current.params or {}
        value = params.get("db") or params.get("database")
        if not value and "database" in params and len(current.args) > 1:
            # `index SRC DB --table <TAB>`: with --table's value missing, click leaves SRC and DB unparsed
            value = current.args[1]
        if value:
            return str(value)
        current = current.parent
    value = os.environ.get("LANCEDB_PATH")
    if not settings_module.blank(value):
        return value
    return settings_module.read_stored(settings_module.config_dir()).get("LANCEDB_PATH")


Json = Annotated[bool, typer.Option("--json", help="Print the MCP tool's JSON reply on stdout (for scripts).")]


def _few_phrasings(values: list[str] | None) -> list[str] | None:
    """At most MAX_PHRASINGS --also: a usage error naming the option (the engine's own error names
    the tools' `queries`)."""
    if values and len(values) > MAX_PHRASINGS:
        raise typer.BadParameter(f"at most {MAX_PHRASINGS} other phrasings, got {len(values)}; keep the best ones")
    return values


Also = Annotated[
    list[str] | None,
    typer.Option(
        "--also",
        metavar="TEXT",
        help="Another phrasing, searched with it and fused into one ranking (the tools' queries); repeat, "
        f"up to {MAX_PHRASINGS}: the documents' own words, synonyms, a sentence the answer might contain.",
        show_default=False,
        callback=_few_phrasings,
    ),
]
Table = Annotated[
    str | None,
    typer.Option(
        "--table",
        "-t",
        metavar="NAME",
        autocompletion=complete_table,
        help=f"Table to use [default: LANCEDB_TABLE or {DEFAULT_TABLE}].",
        show_default=False,
    ),
]
Limit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=bounds(Query, "limit").low,
        max=bounds(Query, "limit").high,
        metavar="N",
        help=f"Maximum results, 1 to {MAX_LIMIT} [default: LANCEDB_DEFAULT_LIMIT "
        f"or {BY_NAME['LANCEDB_DEFAULT_LIMIT'].default}].",
        show_default=False,
    ),
]
Db = Annotated[
    str | None,
    typer.Option("--db", help="Database folder [default: LANCEDB_PATH].", metavar="PATH", show_default=False),
]

PathPrefix = Annotated[
    str | None,
    typer.Option(
        "--path-prefix",
        metavar="PREFIX",
        show_default=False,
        help="Only documents whose path starts with PREFIX (a folder needs its trailing slash: docs/adr/).",
    ),
]
PerDocument = Annotated[
    int | None,
    typer.Option(
        "--per-document",
        min=bounds(Search, "per_document").low,
        max=bounds(Search, "per_document").high,
        metavar="N",
        show_default=False,
        help=f"At most N chunks of one document among the hits [default: {PER_DOCUMENT}]; 0: every chunk.",
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


def parse_filters(values: list[str] | None) -> dict[str, Any] | None:
    """["status=accepted", "status=proposed", "kind=adr"] -> {"status": [...], "kind": "adr"}."""
    from lancelot_cli.cli.quick import filters_of

    try:
        return filters_of(values)
    except ValueError as exc:
        raise typer.BadParameter(f"{exc.args[0]!r} is not COLUMN=VALUE", param_hint="'--filter'") from None


def load_settings(ctx: typer.Context, db: str | None = None, **flags: Any) -> Settings:
    """Settings with --db (the command's, else the global one) and other flags on top.

    Order: flag > environment > stored settings file > default.
    """
    obj = ctx.obj or {}
    merged = {"LANCEDB_PATH": db or obj.get("db"), **flags}
    return settings_module.load(flags={k: None if v is None else str(v) for k, v in merged.items()})
