"""`lancelot init`: set up the database folder, the default table and an optional OpenAI key, then
print ready-to-paste MCP client configurations.

How it is built
---------------
* **Questions behind a `Prompter`.** The flow (`Wizard`) asks through a small protocol. The real one,
  `QuestionaryPrompter`, uses questionary (imported inside the methods: it is slow to import) and
  accepts prompt_toolkit ``input``/``output`` objects, so tests drive the real prompts through a pipe.
  Every question uses ``unsafe_ask()``: Ctrl-C raises ``KeyboardInterrupt`` (the CLI boundary says
  "interrupted", exit 130) and Ctrl-D (``EOFError``) is treated the same way.
* **Nothing is written before the end.** All questions are answered first (and the key is checked);
  only then are the database folder created (when asked for), the key stored and the settings
  file written (atomically, `settings.write_stored`). Ctrl-C at any question leaves the previous
  settings, key and folders as they were. The one exception is asked for explicitly: "index a
  folder into it now" runs `lancelot index SRC DB` there and then (so its tables can be offered),
  and the indexer itself only ever commits whole.
* **Without a terminal** (stdin or stdout not a TTY) or with ``--yes`` nothing is asked. Answers
  come from the flags; ``--yes`` takes the current answer for anything not given (the stored or
  environment value, else the default), creates a missing database folder, and keeps the stored
  key. Without ``--yes``, ``--db`` and one of ``--api-key-stdin``/``--no-api-key`` are required;
  missing ones are named in one error line (exit 1), never an ``EOFError`` or a hang.
* **The key check.** A new key (or a kept key with a changed endpoint or model) is tried with one
  small embeddings call (no retries, 15 s timeout). On a terminal a failure is shown (network, 401,
  unknown model) and the person re-enters the key, changes the endpoint or model, keeps the key
  anyway, or goes on without one. Without a terminal a failed check stops with exit 1 and nothing
  written, unless ``--yes``, which stores the key anyway with a warning (useful when the endpoint
  is not reachable from where init runs). A successful check also stores ``EMBEDDING_DIMENSIONS``
  (the size of the vector that came back), which `status` reports.
* **Where things go.** Settings: ``settings.json`` in the config folder, keyed by the variable names
  (other entries already there are kept). The key: the OS keychain through keyring, else the
  encrypted key file (`credentials.store_key`). The key never goes to the settings file, the
  database folder, the output or a log; the client configurations name only ``LANCEDB_PATH``
  (the server finds the stored key itself).
* **Defaults offered.** The database folder: the current ``LANCEDB_PATH`` (environment, else the
  settings file), else the working folder when it already holds LanceDB tables (``*.lance``), else
  ``./db`` made absolute (the folder the README's ``lancelot index ./docs ./db`` writes). The table:
  the current ``LANCEDB_TABLE`` when the database has it, else ``documents`` when present, else the
  first table found.
* **Messages** go to stderr; the client configurations (the result) and ``--show`` go to stdout, so
  ``lancelot init --db DB --no-api-key > clients.txt`` keeps only them.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol
from urllib.parse import quote

import typer

from lancelot_cli.storage.schema import is_local
from lancelot_cli import settings as settings_module
from lancelot_cli.errors import ConfigError, EmbeddingError, InvalidArgumentError
from lancelot_cli.settings import blank

HELP = ("Set up Lancelot: the database folder, the default table and an optional OpenAI key (checked, then "
        "kept in the OS keychain or an encrypted file); prints ready-to-paste MCP client configurations. "
        "Without a terminal, answer with the flags. --show prints the settings and where each comes from; "
        "--forget removes the stored key.")

CHECK_TIMEOUT = 15.0  # seconds for the one embeddings call that checks a key
CHECK_TEXT = "lancelot key check"
SERVER_NAME = "lancelot"
DEFAULT_TABLE = "documents"
DEFAULT_MODEL = "text-embedding-ada-002"

Validator = Callable[[str], "str | None"]  # None when the answer is fine, else what is wrong with it


class Prompter(Protocol):
    """The questions `lancelot init` asks. Each returns the answer or raises ``KeyboardInterrupt``."""

    def path(self, message: str, *, default: str = "", validate: Validator | None = None) -> str: ...

    def text(self, message: str, *, default: str = "", validate: Validator | None = None) -> str: ...

    def password(self, message: str, *, validate: Validator | None = None) -> str: ...

    def confirm(self, message: str, *, default: bool = True) -> bool: ...

    def select(self, message: str, choices: Sequence[tuple[str, str]], *, default: str | None = None) -> str:
        """``choices`` are ``(value, title)`` pairs; returns the chosen value."""
        ...


class QuestionaryPrompter:
    """The `Prompter` for a person at a terminal, through questionary.

    Args:
        input: a prompt_toolkit ``Input`` (tests pass ``create_pipe_input()``); None for the terminal.
        output: a prompt_toolkit ``Output`` (tests pass ``DummyOutput()``); None for the terminal.
    """

    def __init__(self, input: Any = None, output: Any = None) -> None:  # noqa: A002 - questionary's names
        self._io = {name: value for name, value in (("input", input), ("output", output)) if value is not None}

    @staticmethod
    def _ask(question: Any) -> Any:
        try:
            return question.unsafe_ask()  # Ctrl-C raises KeyboardInterrupt instead of returning None
        except EOFError:  # Ctrl-D, or input that ended: the person is not answering; same as Ctrl-C
            raise KeyboardInterrupt from None

    @staticmethod
    def _validator(validate: Validator | None) -> Any:
        if validate is None:
            return None

        def check(answer: str) -> bool | str:
            problem = validate(answer)
            return True if problem is None else problem

        return check

    def path(self, message: str, *, default: str = "", validate: Validator | None = None) -> str:
        import questionary

        return str(self._ask(questionary.path(message, default=default, validate=self._validator(validate),
                                              only_directories=True, **self._io)))

    def text(self, message: str, *, default: str = "", validate: Validator | None = None) -> str:
        import questionary

        return str(self._ask(questionary.text(message, default=default, validate=self._validator(validate),
                                              **self._io)))

    def password(self, message: str, *, validate: Validator | None = None) -> str:
        import questionary

        return str(self._ask(questionary.password(message, validate=self._validator(validate), **self._io)))

    def confirm(self, message: str, *, default: bool = True) -> bool:
        import questionary

        return bool(self._ask(questionary.confirm(message, default=default, **self._io)))

    def select(self, message: str, choices: Sequence[tuple[str, str]], *, default: str | None = None) -> str:
        import questionary

        options = [questionary.Choice(title, value=value) for value, title in choices]
        values = [value for value, _ in choices]
        return str(self._ask(questionary.select(message, choices=options,
                                                default=default if default in values else None, **self._io)))


@dataclass(frozen=True)
class InitOptions:
    """The answers given as flags. ``api_key`` is what ``--api-key-stdin`` read (never shown by repr);
    ``base_url=""`` clears a stored base URL (back to OpenAI)."""

    db: str | None = None
    table: str | None = None
    api_key: str | None = field(default=None, repr=False)
    no_api_key: bool = False
    base_url: str | None = None
    embedding_model: str | None = None
    yes: bool = False


@dataclass
class Plan:
    """What init will do at the end: every write in one place, after every question."""

    db_path: str
    create_db: bool
    table: str
    key_action: str  # "store" (api_key), "keep" (whatever is stored), "remove" (forget it), "none"
    api_key: str | None = field(default=None, repr=False)
    stored: dict[str, str] = field(default_factory=dict)  # the settings file's new content


# -- helpers ---------------------------------------------------------------------------------------


def say(message: str) -> None:
    """A note for the person (stderr; stdout is kept for the configurations)."""
    typer.echo(message, err=True)


def normalise_db(raw: str, cwd: Path | None = None) -> str:
    """An absolute folder path (``~`` expanded, ``file://`` dropped); object-store URIs as given."""
    value = raw.strip()
    if not is_local(value):
        return value
    if value.startswith("file://"):
        value = value[len("file://"):]
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return os.path.normpath(str(path))


def db_problem(raw: str, cwd: Path | None = None) -> str | None:
    """Why ``raw`` cannot be the database folder, or None."""
    if blank(raw):
        return "enter the database folder's path"
    path = normalise_db(raw, cwd)
    if not is_local(path):
        return None
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{path} is a file, not a folder"
    parent = Path(path).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, so {path} cannot be a folder"
    return None


def key_problem(raw: str) -> str | None:
    """Why ``raw`` cannot be an API key, or None (blank is fine: it means "no key"). Never quotes the key:
    a key with a character HTTP headers cannot carry would otherwise end up in an error message."""
    value = raw.strip()
    if any(ch.isspace() for ch in value):
        return "an API key has no spaces in it; paste the key alone"
    if not (value.isascii() and value.isprintable()):
        return "an API key is plain ASCII (letters, digits, - and _); this has other characters"
    return None


def source_problem(raw: str, cwd: Path | None = None) -> str | None:
    if blank(raw):
        return "enter the folder of documents to index"
    path = (cwd or Path.cwd()) / Path(raw.strip()).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder" if path.exists() else f"{path} does not exist"
    return None


def base_url_problem(raw: str) -> str | None:
    if blank(raw) or raw.strip().startswith(("http://", "https://")):
        return None
    return "a base URL starts with http:// or https:// (leave it empty for OpenAI)"


def not_blank(what: str) -> Validator:
    return lambda raw: f"enter {what}" if blank(raw) else None


def list_tables(db_path: str) -> list[str]:
    """The database's tables; [] when the folder is missing or cannot be read (said on stderr).

    Object-store URIs are not listed (that would need the store's credentials and network here).
    """
    if not is_local(db_path) or not os.path.isdir(db_path):
        return []
    from lancelot_cli.storage.reader import ReadOnlyDatabase

    try:
        return list(ReadOnlyDatabase(db_path).table_names())
    except Exception as exc:  # an unreadable or remote database: init can still store the path
        say(f"note: could not list the tables in {db_path} ({type(exc).__name__}); "
            f"`lancelot status` will say more")
        return []


def check_key(api_key: str, base_url: str | None, model: str) -> int:
    """One small embeddings call; returns the vector size. Raises ``EmbeddingError`` saying what failed."""
    from lancelot_cli.providers import OpenAIEmbedder

    embedder = OpenAIEmbedder(api_key, model, base_url or None, timeout=CHECK_TIMEOUT, max_retries=0)
    vectors = embedder.embed([CHECK_TEXT])
    return len(vectors[0])


def server_command() -> str:
    """How a client should start the server: ``lancelot`` when it is on PATH, else the script's path."""
    if shutil.which("lancelot"):
        return "lancelot"
    script = Path(sys.executable).with_name("lancelot")
    return str(script) if script.exists() else "lancelot"


def client_configs(db_path: str, command: str = "lancelot") -> dict[str, str]:
    """Ready-to-paste MCP client configurations for the database ``db_path`` (absolute).

    Only ``LANCEDB_PATH`` goes in: the server reads everything else, key included, from what
    init stored. Returns ``claude`` (a shell command), ``json`` (Claude Desktop / Cursor
    ``mcpServers``), ``vscode`` and ``cursor`` (install links).
    """
    env = {"LANCEDB_PATH": db_path}
    args = ["serve"]
    server = {"command": command, "args": args, "env": env}
    claude = " ".join([
        "claude", "mcp", "add", "--env", shlex.quote(f"LANCEDB_PATH={db_path}"), "--transport", "stdio",
        SERVER_NAME, "--", shlex.quote(command), *args,
    ])
    desktop = json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2)
    vscode = "vscode:mcp/install?" + quote(json.dumps({"name": SERVER_NAME, **server}, separators=(",", ":")),
                                            safe="")
    cursor_config = base64.b64encode(json.dumps(server, separators=(",", ":")).encode("utf-8")).decode("ascii")
    cursor = (f"cursor://anysphere.cursor-deeplink/mcp/install?name={SERVER_NAME}"
              f"&config={quote(cursor_config, safe='')}")
    return {"claude": claude, "json": desktop, "vscode": vscode, "cursor": cursor}


def print_client_configs(db_path: str) -> None:
    command = server_command()
    configs = client_configs(db_path, command)
    lines = [
        "",
        "Claude Code:",
        f"  {configs['claude']}",
        "",
        "Claude Desktop (claude_desktop_config.json) or Cursor (.cursor/mcp.json):",
        configs["json"],
        "",
        "VS Code (open the link to install):",
        f"  {configs['vscode']}",
        "",
        "Cursor (open the link to install):",
        f"  {configs['cursor']}",
    ]
    if command == "lancelot" and not shutil.which("lancelot"):
        lines.append("\n(`lancelot` is not on PATH here: give clients the script's absolute path.)")
    typer.echo("\n".join(lines))


# -- the flow --------------------------------------------------------------------------------------


class Wizard:
    """The questions and the decisions of `lancelot init`; `apply` does the writing.

    Args:
        options: answers given as flags.
        prompter: asks the rest when ``interactive``; never called otherwise.
        interactive: a person is at a terminal and ``--yes`` was not given.
        environ: the environment (``os.environ`` when None).
        cwd: the working folder relative paths are taken from (the process's when None).
    """

    def __init__(self, options: InitOptions, prompter: Prompter | None, *, interactive: bool,
                 environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        self.options = options
        self.prompter = prompter
        self.interactive = interactive and prompter is not None
        self.env = os.environ if environ is None else environ
        self.cwd = cwd or Path.cwd()
        self.config_dir = settings_module.config_dir(self.env)
        self._measured = False  # True once a key check measured the vector size
        try:
            self.previous = settings_module.read_stored(self.config_dir)
        except ConfigError as exc:  # a broken settings file is what init is there to fix
            say(f"note: {exc}; it will be replaced")
            self.previous = {}

    # the current answer to each question: environment (non-blank), else the settings file
    def current(self, name: str) -> str | None:
        for layer in (self.env, self.previous):
            value = layer.get(name)
            if not blank(value):
                return value.strip()  # type: ignore[union-attr]
        return None

    @property
    def ask(self) -> Prompter:
        assert self.prompter is not None and self.interactive
        return self.prompter

    # -- questions -----------------------------------------------------------------------------

    def run(self) -> Plan:
        """Ask (or take from flags) every answer; return the plan. Writes nothing."""
        self._require_answers()
        db_path, create = self._database()
        table = self._table(db_path)
        stored = dict(self.previous)
        stored["LANCEDB_PATH"] = db_path
        stored["LANCEDB_TABLE"] = table
        action, api_key = self._key(stored)
        endpoint = ("OPENAI_BASE_URL", "EMBEDDING_MODEL")
        if not self._measured and any(stored.get(n) != self.previous.get(n) for n in endpoint):
            stored.pop("EMBEDDING_DIMENSIONS", None)  # measured for another endpoint or model: now unknown
        return Plan(db_path=db_path, create_db=create, table=table, key_action=action, api_key=api_key,
                    stored=stored)

    def _require_answers(self) -> None:
        o = self.options
        if self.interactive:
            return
        if o.yes:
            if not o.db and not self.current("LANCEDB_PATH"):
                raise ConfigError("no database folder is set yet: pass --db PATH")
            return
        missing = []
        if not o.db:
            missing.append("--db PATH")
        if o.api_key is None and not o.no_api_key:
            missing.append("--api-key-stdin or --no-api-key")
        if missing:
            raise ConfigError(
                "no terminal to ask on (stdin or stdout is not a terminal): pass " + " and ".join(missing)
                + ", or --yes to keep the current answers; see `lancelot init --help`"
            )

    def suggested_db(self) -> str:
        current = self.current("LANCEDB_PATH")
        if current:
            return normalise_db(current, self.cwd)
        try:
            if any(child.suffix == ".lance" and child.is_dir() for child in self.cwd.iterdir()):
                return str(self.cwd)
        except OSError:
            pass
        return str(self.cwd / "db")

    def _database(self) -> tuple[str, bool]:
        """The database folder, and whether it is to be created (empty) at the end."""
        o = self.options
        if o.db:
            problem = db_problem(o.db, self.cwd)
            if problem:
                raise ConfigError(f"--db: {problem}")
            given: str | None = normalise_db(o.db, self.cwd)
        elif not self.interactive:
            current = self.current("LANCEDB_PATH") or ""
            problem = db_problem(current, self.cwd)
            if problem:
                raise ConfigError(f"the current LANCEDB_PATH will not do: {problem}; pass --db PATH")
            given = normalise_db(current, self.cwd)
        else:
            given = None
        while True:
            if given is None:
                answer = self.ask.path("Database folder (LANCEDB_PATH):",
                                       default=self.suggested_db(),
                                       validate=lambda raw: db_problem(raw, self.cwd))
                path = normalise_db(answer, self.cwd)
            else:
                path = given
            if not is_local(path):
                return path, False
            if os.path.isdir(path):
                if self.interactive and not list_tables(path) and self.ask.confirm(
                        f"{path} has no tables yet. Index a folder of documents into it now?", default=True):
                    self._index_into(path)
                return path, False
            if not self.interactive:
                if o.yes:
                    say(f"{path} does not exist: it will be created, empty; fill it with "
                        f"`lancelot index SRC {shlex.quote(path)}`")
                    return path, True
                raise ConfigError(f"database folder {path} does not exist: create it with "
                                  f"`lancelot index SRC {shlex.quote(path)}`, or pass --yes to create it empty")
            choice = self.ask.select(f"{path} does not exist yet. What now?", [
                ("index", "Index a folder of documents into it now (`lancelot index SRC DB`)"),
                ("create", "Create it empty; index later with `lancelot index SRC DB`"),
                ("other", "Choose another folder"),
            ], default="index")
            if choice == "index":
                self._index_into(path)
                return path, False
            if choice == "create":
                return path, True
            given = None

    def _index_into(self, db_path: str) -> None:
        """Run `lancelot index SRC DB` now, with its progress bar and summary (stderr)."""
        source = self.ask.path("Folder of documents to index (.md, .txt, .html):",
                               validate=lambda raw: source_problem(raw, self.cwd))
        table = self.options.table or self.current("LANCEDB_TABLE") or DEFAULT_TABLE
        from lancelot_cli.cli.index import index

        # The `lancelot index` command itself (progress bar, summary, errors); its context is only read
        # for --embed, which init does not ask for.
        folder = (self.cwd / Path(source.strip()).expanduser()).resolve()
        index(ctx=None, source=str(folder), database=db_path, table=table)  # type: ignore[arg-type]

    def _table(self, db_path: str) -> str:
        tables = list_tables(db_path)
        flagged = self.options.table
        if flagged:
            if tables and flagged not in tables:
                say(f"note: {db_path} has no table {flagged!r} yet (it has {', '.join(tables)})")
            return flagged.strip()
        current = self.current("LANCEDB_TABLE")
        if current and (not tables or current in tables):
            default = current
        elif DEFAULT_TABLE in tables or not tables:
            default = DEFAULT_TABLE
        else:
            default = tables[0]
        if not self.interactive:
            return default
        message = "Default table (used when a call names none):"
        if not tables:
            return self.ask.text(message, default=default, validate=not_blank("a table name")).strip()
        other = "\x00other"
        choice = self.ask.select(message, [*((t, t) for t in tables), (other, "Another name…")], default=default)
        if choice != other:
            return choice
        return self.ask.text("Table name:", validate=not_blank("a table name")).strip()

    # -- the key ---------------------------------------------------------------------------------

    def _endpoint(self, stored: dict[str, str]) -> tuple[str | None, str]:
        """The base URL (None: OpenAI) and model the key will be used with, flags applied to ``stored``."""
        o = self.options
        if o.base_url is not None:
            if base_url_problem(o.base_url):
                raise ConfigError(f"--base-url: {base_url_problem(o.base_url)}")
            _put(stored, "OPENAI_BASE_URL", o.base_url)
        if o.embedding_model is not None:
            if blank(o.embedding_model):
                raise ConfigError("--embedding-model: give a model name")
            _put(stored, "EMBEDDING_MODEL", o.embedding_model)
        return self._effective_endpoint(stored)

    def _effective_endpoint(self, stored: Mapping[str, str]) -> tuple[str | None, str]:
        """The endpoint to check a key against: a flag, else the environment (what the server run from
        this shell would use), else the settings being written, else OpenAI and the default model."""
        base = self.env.get("OPENAI_BASE_URL")
        model = self.env.get("EMBEDDING_MODEL")
        base = base.strip() if not blank(base) else stored.get("OPENAI_BASE_URL")  # type: ignore[union-attr]
        model = model.strip() if not blank(model) else stored.get("EMBEDDING_MODEL")  # type: ignore[union-attr]
        if self.options.base_url is not None:
            base = self.options.base_url.strip() or None
        if self.options.embedding_model is not None:
            model = self.options.embedding_model.strip()
        return (base or None), (model or DEFAULT_MODEL)

    def _ask_endpoint(self, stored: dict[str, str], base: str | None, model: str) -> tuple[str | None, str]:
        """Ask for the base URL and the model (defaults: what the key is about to be used with)."""
        base = self.ask.text("OpenAI-compatible base URL (empty for OpenAI; e.g. http://localhost:11434/v1):",
                             default=base or "", validate=base_url_problem).strip()
        model = self.ask.text("Embedding model:", default=model, validate=not_blank("a model name")).strip()
        _put(stored, "OPENAI_BASE_URL", base)
        _put(stored, "EMBEDDING_MODEL", model)
        return base or None, model

    def _key(self, stored: dict[str, str]) -> tuple[str, str | None]:
        """The key decision: ("store", key), ("keep", None), ("remove", None) or ("none", None)."""
        from lancelot_cli import credentials

        o = self.options
        base, model = self._endpoint(stored)
        if not self.interactive:
            if o.api_key is None:
                return ("none" if o.no_api_key else "keep"), None
            return self._check_unattended(o.api_key, base, model, stored)
        if not blank(self.env.get("OPENAI_API_KEY")):
            say("note: OPENAI_API_KEY is set here and wins over a stored key; MCP clients do not see this "
                "shell's variables, so a stored key is still what they use")
        if o.no_api_key:
            return "none", None
        existing = credentials.stored_keys(self.config_dir)
        key: str | None = o.api_key
        action = "store" if key else "none"
        if key is None and existing:
            where = " and ".join("the keychain" if k.source == "keychain" else "the key file" for k in existing)
            choice = self.ask.select("OpenAI key (for vector search):", [
                ("keep", f"Keep the stored key ({credentials.mask(existing[0].value)}, in {where})"),
                ("new", "Enter a new key"),
                ("remove", "Remove the stored key (text search only)"),
            ], default="keep")
            if choice == "remove":
                return "remove", None
            action = "keep" if choice == "keep" else "store"
        if action != "keep" and key is None:
            key = self._ask_key_value()
            action = "store" if key else "none"
        if action == "none":
            return "none", None
        changed = False
        if o.base_url is None and o.embedding_model is None and self.ask.confirm(
                f"Change the embeddings endpoint or model? (now {base or 'OpenAI'}, {model})", default=False):
            before = (base, model)
            base, model = self._ask_endpoint(stored, base, model)
            changed = (base, model) != before
        if action == "keep" and not changed:
            return "keep", None
        return self._check_interactive(action, key if action == "store" else existing[0].value, base, model, stored)

    def _ask_key_value(self) -> str | None:
        value = self.ask.password("OpenAI API key (input hidden; Enter to skip, text search works without):",
                                  validate=key_problem)
        return value.strip() or None

    def _check_unattended(self, key: str, base: str | None, model: str,
                          stored: dict[str, str]) -> tuple[str, str | None]:
        try:
            dimension = check_key(key, base, model)
        except EmbeddingError as exc:
            if not self.options.yes:
                raise ConfigError(f"the key check failed: {exc}. Nothing was stored; fix the key, --base-url "
                                  f"or --embedding-model, or pass --yes to store the key anyway") from None
            say(f"warning: the key check failed: {exc}. Storing the key anyway (--yes)")
            return "store", key
        say(f"The key works: {base or 'OpenAI'} answered with {dimension}-d vectors for {model}.")
        stored["EMBEDDING_DIMENSIONS"] = str(dimension)
        self._measured = True
        return "store", key

    def _check_interactive(self, action: str, key: str, base: str | None, model: str,
                           stored: dict[str, str]) -> tuple[str, str | None]:
        """Check the key until it works or the person decides what to do with it."""
        while True:
            try:
                dimension = check_key(key, base, model)
            except EmbeddingError as exc:
                say(f"The key check failed: {exc}")
                choices = [
                    ("retry", "Enter the key again") if action == "store" else ("retry", "Enter a new key"),
                    ("endpoint", "Change the endpoint or model"),
                    ("keep", "Keep the key anyway"),
                    ("none", "Go on without a key" if action == "store" else "Leave the stored key as it is"),
                ]
                choice = self.ask.select("What now?", choices, default="retry")
                if choice == "keep":
                    return (action, key if action == "store" else None)
                if choice == "none":
                    return ("none" if action == "store" else "keep"), None
                if choice == "endpoint":
                    base, model = self._ask_endpoint(stored, base, model)
                    continue
                value = self._ask_key_value()
                if value is None:
                    return ("none" if action == "store" else "keep"), None
                key, action = value, "store"
                continue
            say(f"The key works: {base or 'OpenAI'} answered with {dimension}-d vectors for {model}.")
            stored["EMBEDDING_DIMENSIONS"] = str(dimension)
            self._measured = True
            return action, (key if action == "store" else None)

    # -- the end: every write ------------------------------------------------------------------

    def apply(self, plan: Plan) -> None:
        """Create the folder if asked, store or remove the key, then write the settings file (atomically)."""
        from lancelot_cli import credentials

        self.config_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new config folder is private
        if plan.create_db:
            Path(plan.db_path).mkdir(parents=True, exist_ok=True)
        key_note = None
        if plan.key_action == "store" and plan.api_key:
            result = credentials.store_key(self.config_dir, plan.api_key)
            if result.source == "keychain":
                key_note = "The key is in the OS keychain."
            else:
                key_note = (f"No OS keychain works here ({result.keychain_error}); the key is in the encrypted "
                            f"file {result.path} (mode 0600). Any program running as you can decrypt it unless "
                            f"LANCELOT_KEY_PASSPHRASE is set; see the README.")
        elif plan.key_action == "remove":
            gone = credentials.forget_key(self.config_dir)
            key_note = "The stored key was removed." if gone.removed else "There was no stored key to remove."
            for problem in gone.problems:
                say(f"warning: {problem}")
        path = settings_module.write_stored(self.config_dir, plan.stored)
        say(f"Settings saved to {path}.")
        if key_note:
            say(key_note)
        say("Check the set-up with `lancelot status`; `lancelot init --show` lists every setting and its source.")


def execute(options: InitOptions, prompter: Prompter | None, *, interactive: bool,
            cwd: Path | None = None) -> Plan:
    """The whole of `lancelot init` after the flags are read: ask, then write, then print the configurations."""
    wizard = Wizard(options, prompter, interactive=interactive, cwd=cwd)
    plan = wizard.run()
    wizard.apply(plan)
    print_client_configs(plan.db_path)
    return plan


def _put(stored: dict[str, str], name: str, value: str | None) -> None:
    """Set ``name`` in the settings to ``value``; a blank value removes it (the default applies)."""
    if blank(value):
        stored.pop(name, None)
    else:
        stored[name] = value.strip()  # type: ignore[union-attr]


# -- --show and --forget ----------------------------------------------------------------------------

_SOURCE_WORDS = {"flag": "flag", "env": "environment", "file": "file", "default": "default",
                 "keychain": "keychain"}


def show(flags: Mapping[str, str | None], environ: Mapping[str, str] | None = None) -> str:
    """The effective settings, where each comes from, and the key masked (the text `--show` prints)."""
    from lancelot_cli import credentials, keyfile

    env = os.environ if environ is None else environ
    effective = settings_module.load(flags=flags, environ=env)
    directory = effective.config_dir
    stored = settings_module.read_stored(directory)
    settings_file = directory / settings_module.SETTINGS_FILE
    from_env = not blank(env.get("LANCELOT_CONFIG_DIR"))
    lines = [
        f"Config folder:  {directory}" + ("  (LANCELOT_CONFIG_DIR)" if from_env else "  (the platform's)"),
        f"Settings file:  {settings_file}" + ("" if settings_file.exists() else "  (not written yet)"),
        "",
    ]
    rows: list[tuple[str, str, str]] = []
    for name, attr in settings_module._ATTR.items():  # every setting, in the documented order
        value = getattr(effective, attr)
        if isinstance(value, tuple):
            value = ",".join(value)
        origin = effective.sources.get(name, "default")
        where = _SOURCE_WORDS.get(origin, origin)
        if origin != "file" and name in stored:
            where += f" (file has {stored[name]})"
        rows.append((name, "(not set)" if value in (None, "") else str(value), where))
    found = credentials.find_openai_key(directory, env)
    copies = credentials.stored_keys(directory)
    if found is None:
        key_row = ("OPENAI_API_KEY", "(none)", "vector search is off; text search works")
    else:
        where = _SOURCE_WORDS.get(found.source, found.source)
        if found.source == "file":
            where += f" ({directory / keyfile.KEY_FILE})"
        others = [c.source for c in copies if c.source != found.source]
        if others:
            where += f" (also stored: {', '.join(others)})"
        key_row = ("OPENAI_API_KEY", credentials.mask(found.value), where)
    rows.append(key_row)
    width_name = max(len(r[0]) for r in rows)
    width_value = min(48, max(len(r[1]) for r in rows))
    lines.append(f"{'setting':<{width_name}}  {'value':<{width_value}}  from")
    for name, value, where in rows:
        lines.append(f"{name:<{width_name}}  {value:<{width_value}}  {where}")
    return "\n".join(lines)


def forget(environ: Mapping[str, str] | None = None) -> int:
    """Remove the stored key from the keychain and the key file; the exit code (1 if one could not be)."""
    from lancelot_cli import credentials

    env = os.environ if environ is None else environ
    directory = settings_module.config_dir(env)
    gone = credentials.forget_key(directory)
    places = {"keychain": "the OS keychain", "file": f"the key file in {directory}"}
    if gone.removed:
        say("Removed the stored OpenAI key from " + " and ".join(places[p] for p in gone.removed) + ".")
    else:
        say("No stored OpenAI key was found (keychain and key file).")
    if not blank(env.get("OPENAI_API_KEY")):
        say("note: OPENAI_API_KEY is still set in this environment, and is still used where it is set")
    for problem in gone.problems:
        say(f"warning: {problem}")
    return 1 if gone.problems else 0


# -- the command ------------------------------------------------------------------------------------


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _read_key_from_stdin() -> str:
    line = sys.stdin.readline()
    value = line.strip()
    if not value:
        raise ConfigError("--api-key-stdin: stdin had no key (give it one line, e.g. `printenv OPENAI_API_KEY | "
                          "lancelot init --api-key-stdin ...`)")
    problem = key_problem(value)
    if problem:
        raise ConfigError(f"--api-key-stdin: {problem}")
    return value


def init(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option("--db", metavar="PATH", show_default=False,
                                           help="Database folder (made absolute). Skips the question.")] = None,
    table: Annotated[str | None, typer.Option("--table", "-t", metavar="NAME", show_default=False,
                                              help="Default table. Skips the question.")] = None,
    api_key_stdin: Annotated[bool, typer.Option("--api-key-stdin",
                                                help="Read the OpenAI key from stdin (one line); it is checked, "
                                                     "then stored in the OS keychain or the encrypted key file.")
                             ] = False,
    no_api_key: Annotated[bool, typer.Option("--no-api-key",
                                             help="Ask for no key (text search only); a stored key is left "
                                                  "as it is (--forget removes it).")] = False,
    base_url: Annotated[str | None, typer.Option("--base-url", metavar="URL", show_default=False,
                                                 help="OpenAI-compatible embeddings endpoint (Ollama, LM Studio, "
                                                      "vLLM); \"\" for OpenAI.")] = None,
    embedding_model: Annotated[str | None, typer.Option("--embedding-model", metavar="NAME", show_default=False,
                                                        help="Embedding model for queries.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y",
                                      help="Ask nothing: flags, else the current answers; create a missing "
                                           "database folder; store a key even if its check fails.")] = False,
    show_: Annotated[bool, typer.Option("--show", help="Print the settings, where each comes from "
                                                       "(flag, environment, file, default), and the key masked.")
                     ] = False,
    forget_: Annotated[bool, typer.Option("--forget", help="Remove the stored key (keychain and key file).")
                       ] = False,
) -> None:
    """Exit 0 when set up; 1 for a missing answer without a terminal or a failed key check; 130 on Ctrl-C."""
    db = db or (ctx.obj or {}).get("db")
    if show_ and forget_:
        raise InvalidArgumentError("--show and --forget cannot be used together")
    if (show_ or forget_) and (api_key_stdin or no_api_key or yes):
        raise InvalidArgumentError(f"{'--show' if show_ else '--forget'} takes no --api-key-stdin, "
                                   f"--no-api-key or --yes")
    if api_key_stdin and no_api_key:
        raise InvalidArgumentError("--api-key-stdin and --no-api-key cannot be used together")
    if show_:
        flags = {"LANCEDB_PATH": db, "LANCEDB_TABLE": table, "OPENAI_BASE_URL": base_url,
                 "EMBEDDING_MODEL": embedding_model}
        typer.echo(show(flags))
        return
    if forget_:
        code = forget()
        if code:
            raise typer.Exit(code)
        return
    api_key = _read_key_from_stdin() if api_key_stdin else None
    options = InitOptions(db=db, table=table, api_key=api_key, no_api_key=no_api_key, base_url=base_url,
                          embedding_model=embedding_model, yes=yes)
    interactive = not yes and _is_tty(sys.stdin) and _is_tty(sys.stdout)
    execute(options, QuestionaryPrompter() if interactive else None, interactive=interactive)
