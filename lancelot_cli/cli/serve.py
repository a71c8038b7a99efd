"""`lancelot serve`: the read-only MCP server, on stdio (default) or Streamable HTTP."""

from __future__ import annotations

from typing import Annotated

import typer

from lancelot_cli.cli.options import Db, load_settings

HELP = ("Run the read-only MCP server: on stdio (what an MCP client starts; stdout carries MCP messages "
        "only) or, with --http [PORT], on Streamable HTTP at http://HOST:PORT/mcp.")

DEFAULT_HTTP_PORT = 3000


def with_http_default(args: list[str]) -> list[str]:
    """Typer has no optional-value options: a bare `--http` (last, or before another option)
    becomes `--http 3000`, so `--http` and `--http 8080` both work as in the original."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        if arg == "--http" and (i + 1 == len(out) or not out[i + 1].isdigit()):
            out.insert(i + 1, str(DEFAULT_HTTP_PORT))
            break
    return out


def serve(
    ctx: typer.Context,
    http: Annotated[int | None, typer.Option("--http", metavar="[PORT]", min=0, max=65535, show_default=False,
                                             help=f"Serve Streamable HTTP instead of stdio, on PORT "
                                                  f"(default {DEFAULT_HTTP_PORT}).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=0, max=65535, show_default=False,
                                             help="HTTP port (same as --http PORT).")] = None,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address. Beyond loopback there is no "
                                                     "authentication: put a proxy that has it in front.")
                    ] = "127.0.0.1",
    db: Db = None,
) -> None:
    settings = load_settings(ctx, db)
    if http is None and port is None:
        from lancelot_cli.server.stdio import run_stdio

        run_stdio(settings)
        return
    from lancelot_cli.server.http import run_http

    run_http(settings, host=host, port=port if port is not None else http)  # type: ignore[arg-type]
