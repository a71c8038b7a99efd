"""The flow of `lancelot init`: every question in order, then every write at the end.

* **Nothing is written before the end.** All questions are answered first (and the key is checked);
  only then are the database folder created (when asked for), the key stored and the settings
  file written (atomically, `settings.write_stored`). Ctrl-C at any question leaves the previous
  settings, key and folders as they were. The one exception is asked for explicitly: "index a
  folder into it now" runs `indexer.run` there and then (so its tables can be offered), and the
  indexer itself only ever commits whole; when the answers after it give a way to embed and that
  run made no vectors, init offers to make them at the very end (`embed_now`).
* **Without a terminal** (or with ``--yes``) nothing is asked; see `command`.
* **Defaults offered.** The database folder: the current ``LANCEDB_PATH`` (environment, else the
  settings file), else the working folder when it already holds LanceDB tables (``*.lance``), else
  ``./db`` made absolute. The table: the current ``LANCEDB_TABLE`` when the database has it, else
  ``documents`` when present, else the first table found. A default is shown in the question and
  taken by Enter; it is never a prefix of what the person types.
* **A database folder that does not exist yet** is offered to be indexed into now, created empty,
  or replaced by another; without a terminal only ``--yes`` creates it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from lancelot_cli import settings as settings_module
from lancelot_cli.cli.init import vectors
from lancelot_cli.cli.init.answers import EmbeddingChoice, InitOptions, Plan
from lancelot_cli.cli.init.clients import print_client_configs
from lancelot_cli.cli.init.embed_now import Indexed, offer
from lancelot_cli.cli.init.http_token import TokenAction, TokenQuestions
from lancelot_cli.cli.init.key import KeyQuestions, described
from lancelot_cli.cli.init.questions import Prompter, db_problem, normalise_db, not_blank, say, source_problem
from lancelot_cli.cli.init.vectors import EmbeddingQuestions
from lancelot_cli.errors import ConfigError
from lancelot_cli.settings import DEFAULT_TABLE, blank
from lancelot_cli.storage.schema import is_local

# Where LANCELOT_KEY_PASSPHRASE is explained (the README does not cover it; docs/settings.md does).
KEY_DOC = "https://github.com/lancelot-cli/lancelot/blob/main/docs/settings.md#the-stored-key"


def list_tables(db_uri: str) -> list[str]:
    """The database's tables; [] when the folder is missing or cannot be read (said on stderr).

    Object-store URIs are not listed (that would need the store's credentials and network here).
    """
    if not is_local(db_uri) or not os.path.isdir(db_uri):
        return []
    from lancelot_cli.storage.read.database import quick_table_names

    try:  # the folder's listing: opening the database imported lancedb first (~10 s on a cold disk)
        return quick_table_names(db_uri) or []
    except Exception as exc:  # noqa: BLE001 - an unreadable or remote database: init can still store the path
        say(f"note: could not list the tables in {db_uri} ({type(exc).__name__}); `lancelot status` will say more")
        return []


class Wizard(KeyQuestions, EmbeddingQuestions, TokenQuestions):
    """The questions and the decisions of `lancelot init`; `apply` does the writing.

    Args:
        options: answers given as flags.
        prompter: asks the rest when ``interactive``; never called otherwise.
        interactive: a person is at a terminal and ``--yes`` was not given.
        environ: the environment (``os.environ`` when None).
        cwd: the working folder relative paths are taken from (the process's when None).
        http_token: ``--http-token`` ("new") or ``--remove-http-token`` ("remove"); None: asked or kept.
    """

    def __init__(
        self,
        options: InitOptions,
        prompter: Prompter | None,
        *,
        interactive: bool,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        http_token: TokenAction | None = None,
    ) -> None:
        self.options = options
        self.token_flag = http_token
        self.prompter = prompter
        self.interactive = interactive and prompter is not None
        self.env = os.environ if environ is None else environ
        self.cwd = cwd or Path.cwd()
        self.config_dir = settings_module.config_dir(self.env)
        self._measured = False  # True once a key check measured the vector size
        self.indexed: Indexed | None = None  # what "index a folder into it now" wrote
        self.embedding: EmbeddingChoice = "key"  # how documents get vectors, once asked
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
        db_uri, create = self._database()
        table = self._table(db_uri)
        stored = dict(self.previous)
        stored["LANCEDB_PATH"] = db_uri
        stored["LANCEDB_TABLE"] = table
        how = self._embedding(stored)  # a key, a local model (no key) or text search only
        self.embedding = how
        if how == "key":
            action, api_key = self._key(stored)
            if action == "none" and self.stored_keys():  # --no-api-key: the stored key is not touched
                say(vectors.KEY_STAYS.format(key=described(self.stored_keys())))
        elif how == "none":
            say("Text search only; run `lancelot init` again to add vectors.")
            action, api_key = self.text_only_key(), None
        else:  # a local model: a stored key is left as it is, unused by it (`--forget` removes it)
            action, api_key = "keep", None
        endpoint = ("OPENAI_BASE_URL", "EMBEDDING_MODEL")
        if not self._measured and any(stored.get(n) != self.previous.get(n) for n in endpoint):
            stored.pop("EMBEDDING_DIMENSIONS", None)  # measured for another endpoint or model: now unknown
        self._http_token(db_uri)  # the last question: a token made now is stored by `apply`
        return Plan(db_uri=db_uri, create_db=create, table=table, key_action=action, api_key=api_key, stored=stored)

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
        if o.api_key is None and not o.no_api_key and not self.flagged_local():
            missing.append("--api-key-stdin or --no-api-key")
        if missing:
            raise ConfigError(
                "no terminal to ask on (stdin or stdout is not a terminal): pass "
                + " and ".join(missing)
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
        given = self._given_db()
        while True:
            path = given if given is not None else self._asked_db()
            if not is_local(path):
                return path, False
            if os.path.isdir(path):
                self._offer_index(path)
                return path, False
            decided = self._missing_db(path)
            if decided is not None:
                return decided
            given = None  # "choose another folder"

    def _given_db(self) -> str | None:
        """The folder from ``--db``, or without a terminal the current one; None: to be asked."""
        o = self.options
        if o.db:
            problem = db_problem(o.db, self.cwd)
            if problem:
                raise ConfigError(f"--db: {problem}")
            return normalise_db(o.db, self.cwd)
        if not self.interactive:
            current = self.current("LANCEDB_PATH") or ""
            problem = db_problem(current, self.cwd)
            if problem:
                raise ConfigError(f"the current LANCEDB_PATH will not do: {problem}; pass --db PATH")
            return normalise_db(current, self.cwd)
        return None

    def _asked_db(self) -> str:
        answer = self.ask.path(
            "Database folder (LANCEDB_PATH):",
            default=self.suggested_db(),
            validate=lambda raw: db_problem(raw, self.cwd),
        )
        return normalise_db(answer, self.cwd)

    def _offer_index(self, path: str) -> None:
        """An existing folder without tables: offer to index into it now (at a terminal only)."""
        if (
            self.interactive
            and not list_tables(path)
            and self.ask.confirm(f"{path} has no tables yet. Index a folder of documents into it now?", default=True)
        ):
            self._index_into(path)

    def _missing_db(self, path: str) -> tuple[str, bool] | None:
        """A folder that does not exist: created (with ``--yes``), indexed into now, created empty,
        or None when another folder is to be chosen."""
        if not self.interactive:
            if self.options.yes:
                say(
                    f"{path} does not exist: it will be created, empty; fill it with "
                    f"`lancelot index SRC {shlex.quote(path)}`"
                )
                return path, True
            raise ConfigError(
                f"database folder {path} does not exist: create it with "
                f"`lancelot index SRC {shlex.quote(path)}`, or pass --yes to create it empty"
            )
        choice = self.ask.select(
            f"{path} does not exist yet. What now?",
            [
                ("index", "Index a folder of documents into it now (`lancelot index SRC DB`)"),
                ("create", "Create it empty; index later with `lancelot index SRC DB`"),
                ("other", "Choose another folder"),
            ],
            default="index",
        )
        if choice == "index":
            self._index_into(path)
            return path, False
        if choice == "create":
            return path, True
        return None

    def _index_into(self, db_uri: str) -> None:
        """Index a folder into ``db_uri`` now, as `lancelot index SRC DB` does (progress bar, summary on
        stderr), into the table that will be the default."""
        from lancelot_cli.cli.readable_list import READ

        say(f"Lancelot reads {READ} files, in the folder and its subfolders.")
        source = self.ask.path("Folder of documents to index:", validate=lambda raw: source_problem(raw, self.cwd))
        table = self.options.table or self.current("LANCEDB_TABLE") or DEFAULT_TABLE
        folder = (self.cwd / Path(source.strip()).expanduser()).resolve()
        from lancelot_cli.cli.index import index_with_progress

        settings = settings_module.load(flags={"LANCEDB_PATH": db_uri, "LANCEDB_TABLE": table}, environ=self.env)
        self.indexed = Indexed(str(folder), table, index_with_progress(settings, str(folder)))

    def _table(self, db_uri: str) -> str:
        tables = list_tables(db_uri)
        flagged = self.options.table
        if flagged:
            if tables and flagged not in tables:
                say(f"note: {db_uri} has no table {flagged!r} yet (it has {', '.join(tables)})")
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

    def apply(self, plan: Plan) -> None:
        """Create the folder if asked, store or remove the key, then write the settings file (atomically)."""
        from lancelot_cli import credentials

        settings_module.private_folder(self.config_dir)
        if plan.create_db:
            Path(plan.db_uri).mkdir(parents=True, exist_ok=True)
        key_note = None
        if plan.key_action == "store" and plan.api_key:
            result = credentials.store_key(self.config_dir, plan.api_key)
            if result.source == "keychain":
                key_note = "The key is in the OS keychain."
            else:
                key_note = (
                    f"No OS keychain works here ({result.keychain_error}); the key is in the encrypted "
                    f"file {result.path} (mode 0600). Any program running as you can decrypt it unless "
                    f"LANCELOT_KEY_PASSPHRASE is set: {KEY_DOC}"
                )
        elif plan.key_action == "remove":
            gone = credentials.forget_key(self.config_dir)
            key_note = "The stored key was removed." if gone.removed else "There was no stored key to remove."
            for problem in gone.problems:
                say(f"warning: {problem}")
        self._apply_http_token()
        path = settings_module.write_stored(self.config_dir, plan.stored)
        from lancelot_cli.background import daemon

        daemon.stop_all()  # a background server keeps the key and settings it started with
        say(f"Settings saved to {path}.")
        if key_note:
            say(key_note)
        say("Check the set-up with `lancelot status`; `lancelot init --show` lists every setting and its source.")


def execute(
    options: InitOptions,
    prompter: Prompter | None,
    *,
    interactive: bool,
    cwd: Path | None = None,
    http_token: TokenAction | None = None,
) -> Plan:
    """The whole of `lancelot init` after the flags are read: ask, then write, then print the
    configurations (and a new HTTP token, once)."""
    wizard = Wizard(options, prompter, interactive=interactive, cwd=cwd, http_token=http_token)
    plan = wizard.run()
    wizard.apply(plan)
    if wizard.indexed is not None and wizard.interactive and wizard.embedding != "none":  # vectors it lacks
        offer(wizard.ask, wizard.indexed, plan.db_uri, wizard.env)
    print_client_configs(plan.db_uri, new_token=wizard.new_token)
    return plan
