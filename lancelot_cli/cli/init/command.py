"""The `lancelot init` command: read the flags, then show, forget, or run the flow.

Without a terminal (stdin or stdout not a TTY) or with ``--yes`` nothing is asked. Answers come
from the flags; ``--yes`` takes the current answer for anything not given (the stored or
environment value, else the default), creates a missing database folder, and keeps the stored
key (and the stored HTTP token: ``--http-token`` makes a new one, ``--remove-http-token`` removes
it). Without ``--yes``, ``--db`` and one of ``--api-key-stdin``/``--no-api-key`` (or a local
``--embedding-model local:...``) are required;
missing ones are named in one error line (exit 1), never an ``EOFError`` or a hang.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from lancelot_cli.cli.helpfmt import isatty
from lancelot_cli.cli.init.answers import InitOptions
from lancelot_cli.cli.init.flow import execute
from lancelot_cli.cli.init.http_token import TokenAction
from lancelot_cli.cli.init.questions import QuestionaryPrompter, key_problem
from lancelot_cli.cli.init.show import forget, show
from lancelot_cli.errors import ConfigError, InvalidArgumentError

HELP = (
    "Set up Lancelot: the database folder, the default table and how documents are embedded: an OpenAI "
    "key (checked, then kept in the OS keychain or an encrypted file), a local model (no key), or none; "
    "prints ready-to-paste MCP client configurations. "
    "Without a terminal, answer with the flags. --show prints the settings and where each comes from; "
    "--forget removes the stored key; --http-token makes a bearer token for `serve --http`, shown once."
)


def _read_key_from_stdin() -> str:
    line = sys.stdin.readline()
    value = line.strip()
    if not value:
        raise ConfigError(
            "--api-key-stdin: stdin had no key (give it one line, e.g. `printenv OPENAI_API_KEY | "
            "lancelot init --api-key-stdin ...`)"
        )
    problem = key_problem(value)
    if problem:
        raise ConfigError(f"--api-key-stdin: {problem}")
    return value


def init(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", metavar="PATH", show_default=False, help="Database folder (made absolute). Skips the question."
        ),
    ] = None,
    table: Annotated[
        str | None,
        typer.Option("--table", "-t", metavar="NAME", show_default=False, help="Default table. Skips the question."),
    ] = None,
    api_key_stdin: Annotated[
        bool,
        typer.Option(
            "--api-key-stdin",
            help="Read the OpenAI key from stdin (one line); it is checked, "
            "then stored in the OS keychain or the encrypted key file.",
        ),
    ] = False,
    no_api_key: Annotated[
        bool,
        typer.Option(
            "--no-api-key",
            help="Ask for no key (text search only); a stored key is left as it is (--forget removes it).",
        ),
    ] = False,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            show_default=False,
            help='OpenAI-compatible embeddings endpoint (Ollama, LM Studio, vLLM); "" for OpenAI.',
        ),
    ] = None,
    embedding_model: Annotated[
        str | None,
        typer.Option(
            "--embedding-model",
            metavar="NAME",
            show_default=False,
            help="Embedding model for queries and `index --embed`; "
            "local:NAME or local:/folder runs a model on this "
            "machine (no key; the local extra).",
        ),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Ask nothing: flags, else the current answers; create a missing "
            "database folder; store a key even if its check fails.",
        ),
    ] = False,
    show_: Annotated[
        bool,
        typer.Option(
            "--show",
            help="Print the settings, where each comes from (flag, environment, file, default), and the key masked.",
        ),
    ] = False,
    forget_: Annotated[bool, typer.Option("--forget", help="Remove the stored key (keychain and key file).")] = False,
    http_token: Annotated[
        bool,
        typer.Option(
            "--http-token",
            help="Make a bearer token for `serve --http`, store it like the key (replacing a stored one) "
            "and print it once, as MCP_LANCELOT_TOKEN=...",
        ),
    ] = False,
    remove_http_token: Annotated[
        bool, typer.Option("--remove-http-token", help="Remove the stored `serve --http` token.")
    ] = False,
) -> None:
    """Exit 0 when set up; 1 for a missing answer without a terminal or a failed key check; 130 on Ctrl-C."""
    db = db or (ctx.obj or {}).get("db")
    if show_ and forget_:
        raise InvalidArgumentError("--show and --forget cannot be used together")
    if (show_ or forget_) and (api_key_stdin or no_api_key or yes or http_token or remove_http_token):
        raise InvalidArgumentError(
            f"{'--show' if show_ else '--forget'} takes no --api-key-stdin, --no-api-key, --yes, "
            f"--http-token or --remove-http-token"
        )
    if http_token and remove_http_token:
        raise InvalidArgumentError("--http-token and --remove-http-token cannot be used together")
    if api_key_stdin and no_api_key:
        raise InvalidArgumentError("--api-key-stdin and --no-api-key cannot be used together")
    if show_:
        flags = {
            "LANCEDB_PATH": db,
            "LANCEDB_TABLE": table,
            "OPENAI_BASE_URL": base_url,
            "EMBEDDING_MODEL": embedding_model,
        }
        typer.echo(show(flags))
        return
    if forget_:
        code = forget()
        if code:
            raise typer.Exit(code)
        return
    api_key = _read_key_from_stdin() if api_key_stdin else None
    options = InitOptions(
        db=db,
        table=table,
        api_key=api_key,
        no_api_key=no_api_key,
        base_url=base_url,
        embedding_model=embedding_model,
        yes=yes,
    )
    interactive = not yes and isatty(sys.stdin) and isatty(sys.stdout)
    token: TokenAction | None = "new" if http_token else "remove" if remove_http_token else None
    execute(options, QuestionaryPrompter() if interactive else None, interactive=interactive, http_token=token)
