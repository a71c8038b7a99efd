"""What `lancelot init` is told (`InitOptions`, the flags) and what it will do (`Plan`, every write)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# What init does with the key: store ``api_key``, keep whatever is stored, remove (forget) it, or nothing.
KeyAction = Literal["store", "keep", "remove", "none"]
# How documents get vectors: the key questions decide, a local model, or none (text search only).
EmbeddingChoice = Literal["key", "local", "none"]


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

    db_uri: str
    create_db: bool
    table: str
    key_action: KeyAction
    api_key: str | None = field(default=None, repr=False)
    stored: dict[str, str] = field(default_factory=dict)  # the settings file's new content
