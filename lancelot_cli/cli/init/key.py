"""The OpenAI key part of `lancelot init`: ask for it (or take it from the flags), check it with one
small embeddings call, and decide what to store.

A new key (or a kept key with a changed endpoint or model) is tried with one small embeddings call
(no retries, 15 s timeout). On a terminal a failure is shown (network, 401, unknown model) and the
person re-enters the key, changes the endpoint or model, keeps the key anyway, or goes on without
one. Without a terminal a failed check stops with exit 1 and nothing written, unless ``--yes``,
which stores the key anyway with a warning. A successful check also stores ``EMBEDDING_DIMENSIONS``
(the size of the vector that came back), which `status` reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lancelot_cli import redact
from lancelot_cli.cli.init.questions import base_url_problem, key_problem, not_blank, say
from lancelot_cli.errors import ConfigError, EmbeddingError
from lancelot_cli.install_hint import install_command
from lancelot_cli.settings import BY_NAME, blank

if TYPE_CHECKING:
    from pathlib import Path

    from lancelot_cli.cli.init.answers import InitOptions, KeyAction
    from lancelot_cli.cli.init.questions import Prompter
    from lancelot_cli.credentials import FoundKey

CHECK_TIMEOUT = 15.0  # seconds for the one embeddings call that checks a key
CHECK_TEXT = "lancelot key check"
DEFAULT_MODEL: str = BY_NAME["EMBEDDING_MODEL"].default
OPENAI = "openai"  # typed at the base URL question: back to OpenAI's own endpoint
# Said when no key is given (``{install}``: the install command for this copy, install_hint): vectors
# can be made on this machine instead (docs/design.md#issue-17).
LOCAL_HINT = (
    "No key: text search works now. For vector and hybrid search with no key, make the vectors on "
    "this machine: {install}lancelot index ./docs --embed-model "
    "local:all-MiniLM-L6-v2 (downloaded once) or --embed-model local:/path/to/onnx-model-folder."
)


def local_hint() -> str:
    """LOCAL_HINT, with the install command only when the local extra (fastembed) is missing."""
    from lancelot_cli import local_embed

    return LOCAL_HINT.format(install="" if local_embed.available() else f"{install_command('local')}, then ")


def check_key(api_key: str, base_url: str | None, model: str) -> int:
    """One small embeddings call; returns the vector size. Raises ``EmbeddingError`` saying what failed."""
    from lancelot_cli.providers import OpenAIEmbedder

    embedder = OpenAIEmbedder(api_key, model, base_url or None, timeout=CHECK_TIMEOUT, max_retries=0)
    vectors = embedder.embed([CHECK_TEXT])
    return len(vectors[0])


def described(existing: Sequence[FoundKey]) -> str:
    """A stored key as a person recognises it and where it is: ``sk-…abcd, in the keychain``."""
    from lancelot_cli import credentials

    where = " and ".join("the keychain" if k.source == "keychain" else "the key file" for k in existing)
    return f"{credentials.mask(existing[0].value)}, in {where}"


def _put(stored: dict[str, str], name: str, value: str | None) -> None:
    """Set ``name`` in the settings to ``value``; a blank value removes it (the default applies)."""
    if blank(value):
        stored.pop(name, None)
    else:
        stored[name] = value.strip()  # type: ignore[union-attr]


class KeyQuestions:
    """The key questions and checks, mixed into `flow.Wizard` (which provides the attributes below)."""

    options: InitOptions
    interactive: bool
    env: Mapping[str, str]
    config_dir: Path
    _measured: bool

    @property
    def ask(self) -> Prompter:  # provided by the Wizard
        raise NotImplementedError

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
        base = self.ask.text(
            'OpenAI-compatible base URL (e.g. http://localhost:11434/v1; "openai" or empty for OpenAI):',
            default=base or "",
            validate=lambda raw: None if raw.strip().lower() == OPENAI else base_url_problem(raw),
        ).strip()
        if base.lower() == OPENAI:
            base = ""
        model = self.ask.text("Embedding model:", default=model, validate=not_blank("a model name")).strip()
        _put(stored, "OPENAI_BASE_URL", base)
        _put(stored, "EMBEDDING_MODEL", model)
        return base or None, model

    def _key(self, stored: dict[str, str]) -> tuple[KeyAction, str | None]:
        """The key decision: ("store", key), ("keep", None), ("remove", None) or ("none", None)."""
        from lancelot_cli import credentials

        o = self.options
        base, model = self._endpoint(stored)
        if not self.interactive:
            if o.api_key is None:
                return ("none" if o.no_api_key else "keep"), None
            return self._check_unattended(o.api_key, base, model, stored)
        if not blank(self.env.get("OPENAI_API_KEY")):
            say(
                "note: OPENAI_API_KEY is set here and wins over a stored key; MCP clients do not see this "
                "shell's variables, so a stored key is still what they use"
            )
        if o.no_api_key:
            return "none", None
        existing = credentials.stored_keys(self.config_dir)
        key: str | None = o.api_key
        action: KeyAction = "store" if key else "none"
        if key is None and existing:
            choice = self.ask.select(
                "OpenAI key (for vector search):",
                [
                    ("keep", f"Keep the stored key ({described(existing)})"),
                    ("new", "Enter a new key"),
                    ("remove", "Remove the stored key (text search only)"),
                ],
                default="keep",
            )
            if choice == "remove":
                return "remove", None
            action = "keep" if choice == "keep" else "store"
        if action != "keep" and key is None:
            key = self._ask_key_value()
            action = "store" if key else "none"
        if action == "none":
            say(local_hint())
            return "none", None
        changed = False
        if (
            o.base_url is None
            and o.embedding_model is None
            and self.ask.confirm(
                f"Change the embeddings endpoint or model? (now {redact.url(base) or 'OpenAI'}, {model})", default=False
            )
        ):
            before = (base, model)
            base, model = self._ask_endpoint(stored, base, model)
            changed = (base, model) != before
        if action == "keep" and not changed:
            return "keep", None
        checked = key if action == "store" and key is not None else existing[0].value  # "store": key is set
        return self._check_interactive(action, checked, base, model, stored)

    def _ask_key_value(self) -> str | None:
        value = self.ask.password(
            "OpenAI API key (input hidden; Enter to skip, text search works without):", validate=key_problem
        )
        return value.strip() or None

    def _check_unattended(
        self, key: str, base: str | None, model: str, stored: dict[str, str]
    ) -> tuple[KeyAction, str | None]:
        try:
            dimension = check_key(key, base, model)
        except EmbeddingError as exc:
            if not self.options.yes:
                raise ConfigError(
                    f"the key check failed: {exc}. Nothing was stored; fix the key, --base-url "
                    f"or --embedding-model, or pass --yes to store the key anyway"
                ) from None
            say(f"warning: the key check failed: {exc}. Storing the key anyway (--yes)")
            return "store", key
        say(f"The key works: {redact.url(base) or 'OpenAI'} answered with {dimension}-d vectors for {model}.")
        stored["EMBEDDING_DIMENSIONS"] = str(dimension)
        self._measured = True
        return "store", key

    def _check_interactive(
        self, action: KeyAction, key: str, base: str | None, model: str, stored: dict[str, str]
    ) -> tuple[KeyAction, str | None]:
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
            say(f"The key works: {redact.url(base) or 'OpenAI'} answered with {dimension}-d vectors for {model}.")
            stored["EMBEDDING_DIMENSIONS"] = str(dimension)
            self._measured = True
            return action, (key if action == "store" else None)
