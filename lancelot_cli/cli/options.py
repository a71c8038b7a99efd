"""Option types shared by the commands, so every command spells them the same way."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from lancelot_cli import settings as settings_module
from lancelot_cli.settings import Settings

Json = Annotated[bool, typer.Option("--json", help="Print the MCP tool's JSON reply on stdout (for scripts).")]
Table = Annotated[str | None, typer.Option("--table", "-t", help="Table to use [default: LANCEDB_TABLE or documents].",
                                           show_default=False)]
Limit = Annotated[int | None, typer.Option("--limit", "-n", min=1, max=200,
                                           help="Maximum results, 1 to 200 [default: LANCEDB_DEFAULT_LIMIT or 20].",
                                           show_default=False)]
Db = Annotated[str | None, typer.Option("--db", help="Database folder [default: LANCEDB_PATH].", metavar="PATH",
                                        show_default=False)]


def load_settings(ctx: typer.Context, db: str | None = None, **flags: Any) -> Settings:
    """Settings with --db (the command's, else the global one) and other flags on top.

    Order: flag > environment > stored settings file > default.
    """
    obj = ctx.obj or {}
    merged = {"LANCEDB_PATH": db or obj.get("db"), **flags}
    return settings_module.load(flags={k: None if v is None else str(v) for k, v in merged.items()})
