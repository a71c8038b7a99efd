"""`lancelot serve`: the read-only MCP server (stdio)."""

from __future__ import annotations

import typer

from lancelot_cli.cli.options import Db, load_settings

HELP = ("Run the read-only MCP server on stdio (what an MCP client starts). "
        "Stdout carries MCP messages only; logs go to stderr.")


def serve(ctx: typer.Context, db: Db = None) -> None:
    settings = load_settings(ctx, db)
    from lancelot_cli.server.stdio import run_stdio

    run_stdio(settings)
