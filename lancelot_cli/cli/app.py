"""The `lancelot` root command: global options, the error boundary, and the subcommands.

Heavy libraries (lancedb, mcp, openai, trafilatura) are imported inside the commands that need
them, so `lancelot --help` and shell completion stay fast.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from lancelot_cli._version import __version__
from lancelot_cli.errors import LancelotError


class LancelotGroup(TyperGroup):
    """One error boundary for every command: a known error is one line on stderr and an exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            if "serve" in args:
                from lancelot_cli.cli.serve import with_http_default

                args = with_http_default(args)
            return super().parse_args(ctx, args)
        except typer.TyperException as exc:  # root-level usage errors: `lancelot --bogus`
            _usage_fail(exc)
            raise  # unreachable: _usage_fail raises typer.Exit

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except LancelotError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted; nothing was changed by the unfinished step", 130)
        except typer.TyperException as exc:  # the vendored click's UsageError/BadParameter (exit 2)
            _usage_fail(exc)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("LANCELOT_LOG_LEVEL", "").strip().lower() in {"debug", "silly"}:
                raise
            _fail(f"unexpected {type(exc).__name__}: {exc} (set LANCELOT_LOG_LEVEL=debug to see the traceback)", 1)


def _fail(message: str, code: int) -> None:
    first_line = " ".join(message.split())
    sys.stderr.write(f"lancelot: error: {first_line}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


def _usage_fail(exc: typer.TyperException) -> None:
    """A usage error as one line naming the help to read; bare `lancelot` still shows its help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    sub = getattr(exc, "ctx", None)
    where = sub.command_path if sub is not None else "lancelot"
    _fail(f"{exc.format_message().rstrip('.')}; see `{where} --help`", exc.exit_code)


app = typer.Typer(
    name="lancelot",
    cls=LancelotGroup,
    help="Search your own documents from an AI assistant (MCP) and from a terminal.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # never print locals: the API key can sit in them
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="rich",
)


@app.callback()
def root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Database folder (overrides LANCEDB_PATH) for serve, status, search, query.",
                     metavar="PATH", show_default=False),
    ] = None,
) -> None:
    """Lancelot: read-only MCP server and CLI over a LanceDB database of your documents."""
    ctx.obj = {"db": db}


def _register() -> None:
    from lancelot_cli.cli import index, init_wizard, read, serve

    app.command("serve", help=serve.HELP)(serve.serve)
    app.command("index", help=index.HELP)(index.index)
    app.command("status", help=read.STATUS_HELP)(read.status)
    app.command("search", help=read.SEARCH_HELP)(read.search)
    app.command("query", help=read.QUERY_HELP)(read.query)
    app.command("version", help=read.VERSION_HELP)(read.version)
    app.command("init", help=init_wizard.HELP)(init_wizard.init)


_register()


def main() -> None:
    """Console-script entry point."""
    app(prog_name="lancelot")


__all__ = ["app", "main", "__version__"]
