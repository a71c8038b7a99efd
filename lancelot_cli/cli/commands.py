"""The `lancelot` Typer app: global options, the error boundary, and the subcommands.

The entry point (cli/app.py ``main``) imports this module only when the quick path (cli/quick.py)
does not answer the command.

Heavy libraries (lancedb, mcp, openai, trafilatura, questionary) are imported inside the commands
that need them, so `lancelot --help` and shell completion stay fast. Two more things keep them fast
(see tests/benchmarks/cli_speed.py):

* Help screens are drawn by `helpfmt.help_screen` (standard library only) instead of Typer's rich
  help, whose module imports rich.markdown, markdown-it, rich.traceback and pygments up front: more
  than half of the time `lancelot --help` took. The app therefore runs with ``rich_markup_mode=None``;
  help texts are plain text (no rich markup), so "[default: ...]" in a help string shows as written.
* Typer 0.29 builds a pydantic TypeAdapter for a parameter the first time it processes any value of
  it, even an absent one or a default; parsing `lancelot search --help` or a completion request
  processes the root's `--db` (and, for `--table <TAB>`, every option of the command), and so
  imported pydantic (~40 ms, more than the rest of the run). `_DeferredCoercion` builds it only for
  a value that needs converting; absent values and values already of the declared type are
  returned as typer's adapter would return them. Measured (paired runs, load 4-5): `lancelot search
  --help` 435 ms against 737 ms with Typer's own coercion, a background-answered search 525 against
  762 ms (medians). It runs only on the Typer layout it was written for (`_typer_layout_known`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from lancelot_cli._version import __version__
from lancelot_cli.cli.quick_common import say_error
from lancelot_cli.errors import LancelotError

EXIT_CODES = (
    "Exit status: 0 success (also a search that finds nothing); 1 a user error (missing database, table "
    "or column, unreachable embeddings endpoint, no key where one is needed); 2 a usage error (unknown "
    "command or option, a value out of range); 130 interrupted. Errors are one line on stderr saying what "
    "to do next; LANCELOT_LOG_LEVEL=debug shows the traceback of an unexpected one."
)


class _DeferredCoercion:
    """Stands in for a parameter's typer runtime coercion until it is really needed (see the module doc).

    Typer's own coercion returns None (or () for a multi-value parameter) for an absent value before
    it looks at its adapter; so does this. A value that already is exactly the declared plain type
    (a str for a ``str`` parameter, the enum member default of an enum option) and has no parser,
    range or file handling is what the adapter would return, so it is returned as is. Anything else
    (an int, an enum or a range given on the command line) goes to typer's real coercion, built then,
    with typer's own messages.
    """

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if not multi and _already_plain(param, value):
            return value
        from typer._coercion import build_runtime_param

        real = build_runtime_param(param.type_descriptor)
        param._runtime_param = real
        return real.coerce(value, param=param, ctx=ctx)


def _already_plain(param: Any, value: Any) -> bool:
    """True when ``value`` is exactly of the parameter's plain declared type, with nothing to check
    but a range it lies in (`serve --idle`'s default 0.0 in 0..1440: what typer's adapter returns)."""
    descriptor = param.type_descriptor
    info = descriptor.parameter_info
    if info.parser is not None or descriptor.file_annotation is not None:
        return False
    annotation = descriptor.annotation
    members = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if getattr(annotation, "__args__", None) and len(members) == 1 and type(None) in annotation.__args__:
        annotation = members[0]  # Optional[X] / X | None
    if not (isinstance(annotation, type) and type(value) is annotation):
        return False
    if info.min is None and info.max is None:
        return True
    return (
        type(value) in (int, float)
        and (info.min is None or value >= info.min)
        and (info.max is None or value <= info.max)
    )


def _defer_coercion(params: list[Any]) -> None:
    if not _typer_layout_known():
        return
    for param in params:
        # Only where typer 0.29's lazy slot exists and is still empty; anything else is left alone.
        if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
            param._runtime_param = _DeferredCoercion()


_LAYOUT: list[bool] = []  # the answer of _typer_layout_known, once per process


def _typer_layout_known() -> bool:
    """True when the deferral may run: not turned off (``LANCELOT_NO_FAST_IMPORT=1``, the switch of
    storage/lancedb_import.py too) and Typer's private ``typer._coercion.build_runtime_param`` is
    there, read from its source without importing it (that import is what is deferred). Another
    Typer layout gets Typer's own coercion: slower, never wrong, and no pin on Typer's version."""
    if not _LAYOUT:
        off = os.environ.get("LANCELOT_NO_FAST_IMPORT", "").strip() not in ("", "0")
        source = os.path.join(os.path.dirname(typer.__file__), "_coercion.py")
        try:
            with open(source, encoding="utf-8") as fh:
                known = "\ndef build_runtime_param(" in fh.read()
        except OSError:
            known = False
        _LAYOUT.append(known and not off)
    return _LAYOUT[0]


def _help(command: Any, ctx: Any, formatter: Any, plain: Any) -> None:
    if not typer.core.HAS_RICH:  # TYPER_USE_RICH=0: the classic plain help
        plain(ctx, formatter)
        return
    from lancelot_cli.cli import helpfmt

    formatter.write(helpfmt.help_screen(command, ctx))
    if helpfmt.styling()[0] and ctx.color is None:
        ctx.color = True  # styled on purpose (FORCE_COLOR): the help option's echo must not strip it


class LancelotCommand(TyperCommand):
    """A subcommand: help drawn by `helpfmt.help_screen`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _defer_coercion(self.get_params(ctx))
        rest = super().parse_args(ctx, args)
        _check_text(self, ctx)
        return rest

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _help(self, ctx, formatter, super().format_help)


# Arguments that name files or folders take any bytes the system allows (a name that is not UTF-8
# arrives with surrogate escapes and is used as it is); every other argument is text a search, a
# table or a setting holds, which must be UTF-8.
_FILE_ARGUMENTS = frozenset({"db", "database", "socket", "metrics_log", "questions", "exclude"})
_FILE_ARGUMENTS_OF = {"index": frozenset({"source", "ext"})}


def _check_text(command: Any, ctx: Any) -> None:
    """A usage error for a text argument that is not UTF-8 (`lancelot search $'\\xff'`; issue 46),
    rather than an unexpected UnicodeEncodeError wherever it is first encoded."""
    skip = _FILE_ARGUMENTS | _FILE_ARGUMENTS_OF.get(command.name, frozenset())
    for param in command.get_params(ctx):
        if param.name in skip:
            continue
        for text in _texts(ctx.params.get(param.name)):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raw = str(os.fsencode(text))[2:-1]  # the bytes as given: 'caf\\xe9'
                raw = raw if len(raw) <= 60 else raw[:59] + "…"
                raise typer.BadParameter(
                    f"not valid UTF-8: '{raw}'; pass it as UTF-8 text (is the terminal set to another encoding?)",
                    ctx=ctx,
                    param=param,
                ) from None


def _texts(value: Any) -> Iterator[str]:
    """The strings in a parsed argument: itself, a repeated option's values, a mapping's keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)


class LancelotGroup(TyperGroup):
    """One error boundary for every command: a known error is one line on stderr and an exit code."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _help(self, ctx, formatter, super().format_help)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _defer_coercion(self.get_params(ctx))  # typer adds the completion options after __init__
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
        except BrokenPipeError:  # `lancelot status | head`: the reader has what it wanted; exit 1, quietly,
            raise typer.Exit(1) from None  # as rich's own closed-pipe handling does
        except Exception as exc:
            if os.environ.get("LANCELOT_LOG_LEVEL", "").strip().lower() in {"debug", "silly"}:
                raise
            _fail(f"unexpected {type(exc).__name__}: {exc} (set LANCELOT_LOG_LEVEL=debug to see the traceback)", 1)


# Set by `main` (the console script), never by in-process test runners: see `_fail`.
_PROCESS_EXIT = False


def _fail(message: str, code: int) -> None:
    say_error(message)
    if code >= 128 and _PROCESS_EXIT:
        # Stopped by a signal: the run has already put everything back (writer lock, staging
        # folders, workers). Interpreter shutdown with lancedb's runtime loaded can take seconds
        # on a busy machine; a person who pressed Ctrl-C wants the prompt back now.
        sys.stdout.flush()
        os._exit(code)
    raise typer.Exit(code)


def _usage_fail(exc: typer.TyperException) -> None:
    """A usage error as one line naming the help to read; bare `lancelot` still shows its help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    sub = getattr(exc, "ctx", None)
    where = sub.command_path if sub is not None else "lancelot"
    # pydantic's "Value error, " before a validator's own sentence (typer coerces through pydantic)
    message = exc.format_message().strip().rstrip(".").replace(": Value error, ", ": ")
    dashed = _dash_hint(exc, sub)
    if dashed:
        message = f"{message}; {dashed}"
    # "No such command 'serch'. Did you mean 'search', 'serve'?" ends a sentence of its own.
    _fail(message + (f" See `{where} --help`." if message.endswith("?") else f"; see `{where} --help`"), exc.exit_code)


# What a command's argument is, for "to search for text starting with '-', put `--` before it".
_ARGUMENT_WORDS = {"search": "search for text", "query": "ask a question", "show": "show a source"}


def _dash_hint(exc: typer.TyperException, sub: Any) -> str | None:
    """For an unknown option that may have been meant as the command's argument (`lancelot search
    "--exclude-table"`: the shell drops the quotes): how to pass it. Said even when click offers a
    near option (its guesses are loose: --table for --exclude-table); None for a command without
    an argument."""
    name = getattr(exc, "option_name", None)
    if type(exc).__name__ != "NoSuchOption" or not name or sub is None:
        return None
    if not any(getattr(p, "param_type_name", "") == "argument" for p in sub.command.params):
        return None
    import shlex

    what = _ARGUMENT_WORDS.get(sub.command.name, "pass an argument")
    return f"to {what} starting with '-', put `--` before it: `{sub.command_path} -- {shlex.quote(name)}`"


app = typer.Typer(
    name="lancelot",
    cls=LancelotGroup,
    help="Search your own documents from an AI assistant (MCP) and from a terminal.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # never print locals: the API key can sit in them
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # help is drawn by helpfmt.help_screen (see the module doc)
)


def _print_version(value: bool) -> None:
    """``--version``/``-V``: the version on stdout, exit 0, before any command runs."""
    if value:
        typer.echo(f"lancelot {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database folder for every command (overrides LANCEDB_PATH).",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    """Lancelot: read-only MCP server and CLI over a LanceDB database of your documents."""
    ctx.obj = {"db": db}


def _register() -> None:
    from lancelot_cli.cli import bench, index, init, read, search, serve

    def command(name: str, help: str, function: Any, epilog: str | None = None) -> None:  # noqa: A002
        app.command(name, help=help, epilog=epilog, cls=LancelotCommand)(function)

    # The order `lancelot --help` lists them in: a newcomer's first command first (issue 45 item 10),
    # then the everyday ones.
    command("init", init.HELP, init.init)
    command("index", index.HELP, index.index)
    command("search", search.SEARCH_HELP, search.search, search.SEARCH_EPILOG)
    command("query", read.QUERY_HELP, read.query)
    command("show", read.SHOW_HELP, read.show)
    command("status", read.STATUS_HELP, read.status, read.STATUS_EPILOG)
    command("serve", serve.HELP, serve.serve)
    command("ls", read.LS_HELP, read.ls)
    command("version", read.VERSION_HELP, read.version)
    command("bench", bench.HELP, bench.bench)


_register()


def run() -> Any:
    """Run the app on ``sys.argv`` and return its exit code instead of exiting (tests probe this)."""
    try:
        app(prog_name="lancelot")
    except SystemExit as exc:
        return exc.code
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    return 0


__all__ = ["__version__", "app", "run"]
