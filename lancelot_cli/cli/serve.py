"""`lancelot serve`: the read-only MCP server, on stdio (default) or Streamable HTTP."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from lancelot_cli.cli.options import Db, load_settings
from lancelot_cli.errors import ConfigError
from lancelot_cli.limits import MAX_WORKERS
from lancelot_cli.location import Location
from lancelot_cli.settings import Settings

HELP = (
    "Run the read-only MCP server: on stdio (what an MCP client starts; stdout carries MCP messages "
    "only), with --http [PORT] on Streamable HTTP at http://HOST:PORT/mcp, or with --socket PATH on a "
    "Unix socket (what the CLI's read commands use in the background)."
)

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
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            metavar="[PORT]",
            min=0,
            max=65535,
            show_default=False,
            help=f"Serve Streamable HTTP instead of stdio, on PORT (default {DEFAULT_HTTP_PORT}).",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=0, max=65535, show_default=False, help="HTTP port (same as --http PORT)."),
    ] = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help=(
                "HTTP bind address. Beyond loopback a login is required: set LANCELOT_HTTP_TOKENS or "
                "LANCELOT_OAUTH_*, or LANCELOT_HTTP_NO_LOGIN=1 behind a proxy that authenticates."
            ),
        ),
    ] = "127.0.0.1",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            metavar="N",
            min=1,
            max=MAX_WORKERS,
            show_default=False,
            help=f"With --http: serve from N processes sharing the port (1 to {MAX_WORKERS}; default 1, "
            "this process). One process uses about 1.4 cores under load; N of them scale calls per "
            "second with the cores, and each has its own caches (N times the memory) and its own "
            "lancelot://stats.",
        ),
    ] = None,
    metrics_log: Annotated[
        str | None,
        typer.Option(
            "--metrics-log",
            metavar="FILE",
            show_default=False,
            help="Append one JSON line per tool call (tool, argument size, "
            "ms, tokens, error) to FILE; a relative name is put in the "
            "config folder.",
        ),
    ] = None,
    socket: Annotated[
        str | None,
        typer.Option(
            "--socket",
            metavar="PATH",
            show_default=False,
            help="Serve on a Unix socket at PATH instead of stdio: "
            "newline-delimited JSON-RPC, one MCP session per "
            "connection (the socket is made 0600).",
        ),
    ] = None,
    idle: Annotated[
        float,
        typer.Option(
            "--idle",
            metavar="MINUTES",
            min=0,
            max=1440,
            help="With --socket: exit after MINUTES without a connection (0: never).",
        ),
    ] = 0.0,  # a float, as declared: no pydantic adapter is built for the default (cli/app.py)
    table_version: Annotated[
        str | None,
        typer.Option(
            "--table-version",
            metavar="VERSION|TAG",
            show_default=False,
            help="Serve the default table at this version number or tag (made by `lancelot index --tag "
            "NAME`), not the latest: replicas serve one version while a new one is built, and a tag "
            "moved by the next `index --tag` switches them [default: LANCELOT_TABLE_VERSION, else the latest].",
        ),
    ] = None,
    db: Db = None,
) -> None:
    settings = load_settings(ctx, db, LANCELOT_TABLE_VERSION=table_version)
    log_file = metrics_log_path(metrics_log, settings) if metrics_log else None
    warn_missing_database(settings)
    if socket is None:  # the CLI's background server says it at the call that reads the table
        check_table_version(settings)
    if workers is not None and http is None and port is None:
        raise typer.BadParameter(
            "--workers needs --http: stdio and --socket serve from one process", param_hint="'--workers'"
        )
    if socket is not None:
        if http is not None or port is not None:
            raise typer.BadParameter("use one of --socket and --http", param_hint="'--socket'")
        from lancelot_cli.server.transports.unix import run_unix

        run_unix(settings, socket, idle or float("inf"), metrics_log=log_file)
        return
    if http is None and port is None:
        say_waiting_on_terminal()
        from lancelot_cli.server.transports.stdio import run_stdio

        run_stdio(settings, metrics_log=log_file)
        return
    from lancelot_cli.server.transports.http import run_http

    chosen = port if port is not None else http
    run_http(settings, host=host, port=chosen, metrics_log=log_file, workers=workers or 1)  # type: ignore[arg-type]


def say_waiting_on_terminal() -> None:
    """`lancelot serve` typed at a terminal: stdio MCP prints nothing until a client writes, which
    looks like a hang. Say on stderr what it waits for and how to stop (stdout stays MCP's). An MCP
    client starts it with pipes, and never sees this."""
    try:
        terminal = sys.stdin.isatty()
    except (AttributeError, ValueError):  # no stdin, or a closed one
        terminal = False
    if terminal:
        sys.stderr.write(
            "lancelot: serving MCP on stdio: waiting for an MCP client to write JSON-RPC to stdin "
            "(clients start `lancelot serve` themselves; `lancelot init` prints their configurations). "
            "Ctrl-D or Ctrl-C stops it.\n"
        )
        sys.stderr.flush()


def warn_missing_database(settings: Settings) -> None:
    """One line on stderr when no database is configured or its folder is not there yet (stdout
    belongs to MCP). The server still starts: tools report the problem until it is fixed."""
    if not settings.db_uri:
        sys.stderr.write(
            "lancelot: warning: no database configured; tools will say so until LANCEDB_PATH is set "
            "(in the client's env), --db is given, or `lancelot init` stores one\n"
        )
        sys.stderr.flush()
        return
    location = Location.parse(settings.db_uri)
    if not location.is_local:
        return
    path = location.folder
    if not os.path.isdir(path):
        what = "is not a folder" if path.exists() else "does not exist yet"
        shown = location.display
        sys.stderr.write(
            f"lancelot: warning: database folder {shown} {what}; tools will say so until "
            f"`lancelot index SRC {shown}` creates it\n"
        )
        sys.stderr.flush()


def check_table_version(settings: Settings) -> None:
    """A pin (``--table-version``, LANCELOT_TABLE_VERSION) that names no version or tag of the table
    stops the server before it starts, in one line naming the table's tags: a replica must not serve
    something else than asked. A database or table not there yet is left to the tools to report, as
    for a server without a pin."""
    if not settings.table_version or not settings.db_uri:
        return
    location = Location.parse(settings.db_uri)
    if location.is_local and not location.folder.is_dir():
        return
    from lancelot_cli.engine import Engine
    from lancelot_cli.errors import DatabaseNotFoundError, TableNotFoundError

    try:
        Engine(settings).database().table(settings.table)
    except (DatabaseNotFoundError, TableNotFoundError):
        return


def metrics_log_path(name: str, settings: Settings) -> Path:
    """Where --metrics-log writes: a relative name goes to the config folder; never the database folder."""
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = settings.config_dir / path
    path = path.resolve()
    if settings.db_uri and (location := Location.parse(settings.db_uri)).is_local:
        db = location.folder.resolve()
        if path == db or db in path.parents:
            raise ConfigError(
                f"--metrics-log must not write into the database folder {db}; give a name (it goes "
                f"to {settings.config_dir}) or another path"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
