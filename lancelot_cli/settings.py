"""Settings: command-line flag > environment > the file `lancelot init` writes > defaults.

An environment variable that is empty or only white space counts as unset (MCP clients pass ""
for blank optional values), so the stored value is looked at next. The stored file is
``<config dir>/settings.json``: a JSON object keyed by the same names as the environment
variables (``{"LANCEDB_PATH": "/abs/db", "LANCEDB_TABLE": "documents"}``). The OpenAI key is
never in it (see ``credentials``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.errors import ConfigError

SETTINGS_FILE = "settings.json"

# name -> (default, kind); kind is "str", "int" or "list"
_FIELDS: dict[str, tuple[Any, str]] = {
    "LANCEDB_PATH": (None, "str"),
    "LANCEDB_TABLE": ("documents", "str"),
    "LANCEDB_TEXT_COLUMN": ("text", "str"),
    "LANCEDB_VECTOR_COLUMN": ("vector", "str"),
    "LANCEDB_DEFAULT_LIMIT": (20, "int"),
    "LANCEDB_CONTEXT_BUDGET": (8000, "int"),
    "OPENAI_BASE_URL": (None, "str"),
    "EMBEDDING_MODEL": ("text-embedding-ada-002", "str"),
    "EMBEDDING_DIMENSIONS": (1536, "int"),
    "LANCELOT_LOG_LEVEL": ("info", "str"),
    "LANCELOT_ALLOWED_ORIGINS": ((), "list"),
    "LANCELOT_ALLOWED_HOSTS": ((), "list"),
    "LANCELOT_BASE_PATH": (None, "str"),
    "LANCELOT_READ_CONSISTENCY": (None, "seconds"),
    "LANCELOT_STORAGE_OPTIONS": (None, "json"),
}

OBJECT_STORE_CONSISTENCY = 5.0

LOG_LEVELS = {
    "error": 40, "warn": 30, "warning": 30, "info": 20, "http": 15, "verbose": 15, "debug": 10, "silly": 5,
}


def blank(value: str | None) -> bool:
    """True for None, "" and white space: the SPEC's "counts as unset"."""
    return value is None or not value.strip()


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user folder for settings and the encrypted key file (`LANCELOT_CONFIG_DIR` wins)."""
    env = os.environ if environ is None else environ
    override = env.get("LANCELOT_CONFIG_DIR")
    if not blank(override):
        return Path(override.strip()).expanduser()  # type: ignore[union-attr]
    from platformdirs import user_config_dir

    return Path(user_config_dir("lancelot", appauthor=False))


def read_stored(directory: Path) -> dict[str, str]:
    """The stored settings file as a dict of strings; a missing file is an empty dict."""
    path = directory / SETTINGS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the settings file {path}: {exc}; fix or delete it, or run `lancelot init`") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"the settings file {path} is not a JSON object; delete it or run `lancelot init`")
    return {str(k): str(v) for k, v in data.items() if v is not None}


def write_stored(directory: Path, values: Mapping[str, str]) -> Path:
    """Write the settings file atomically (a reader sees the old file or the new one)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SETTINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(dict(values), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


@dataclass(frozen=True)
class Settings:
    """Effective settings. ``sources`` says where each came from: flag, env, file or default."""

    db_path: str | None = None
    table: str = "documents"
    text_column: str = "text"
    vector_column: str = "vector"
    default_limit: int = 20
    context_budget: int = 8000
    openai_base_url: str | None = None
    embedding_model: str = "text-embedding-ada-002"
    embedding_dimensions: int = 1536
    log_level: str = "info"
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    base_path: str | None = None
    read_consistency: float | None = None  # None: 0 s for a folder, 5 s for an object store
    storage_options: Mapping[str, str] | None = None
    config_dir: Path = field(default_factory=lambda: Path("."))
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def log_level_number(self) -> int:
        return LOG_LEVELS.get(self.log_level.lower(), 20)

    @property
    def consistency_seconds(self) -> float:
        """How stale a running server's view of a table may get. A folder is checked on every read
        (cheap); an object store every 5 s by default, since each check is a request."""
        if self.read_consistency is not None:
            return self.read_consistency
        return 0.0 if not self.db_path or "://" not in self.db_path or self.db_path.startswith("file://") \
            else OBJECT_STORE_CONSISTENCY


_ATTR = {
    "LANCEDB_PATH": "db_path",
    "LANCEDB_TABLE": "table",
    "LANCEDB_TEXT_COLUMN": "text_column",
    "LANCEDB_VECTOR_COLUMN": "vector_column",
    "LANCEDB_DEFAULT_LIMIT": "default_limit",
    "LANCEDB_CONTEXT_BUDGET": "context_budget",
    "OPENAI_BASE_URL": "openai_base_url",
    "EMBEDDING_MODEL": "embedding_model",
    "EMBEDDING_DIMENSIONS": "embedding_dimensions",
    "LANCELOT_LOG_LEVEL": "log_level",
    "LANCELOT_ALLOWED_ORIGINS": "allowed_origins",
    "LANCELOT_ALLOWED_HOSTS": "allowed_hosts",
    "LANCELOT_BASE_PATH": "base_path",
    "LANCELOT_READ_CONSISTENCY": "read_consistency",
    "LANCELOT_STORAGE_OPTIONS": "storage_options",
}


def _convert(name: str, raw: str, kind: str, origin: str) -> Any:
    raw = raw.strip()
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, got {raw!r} (from {origin})") from None
        if value < 1:
            raise ConfigError(f"{name} must be at least 1, got {value} (from {origin})")
        return value
    if kind == "list":
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    if kind == "seconds":
        try:
            seconds = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number of seconds, got {raw!r} (from {origin})") from None
        if not 0 <= seconds <= 86400:
            raise ConfigError(f"{name} must be between 0 and 86400 seconds, got {raw!r} (from {origin})")
        return seconds
    if kind == "json":
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise ConfigError(f"{name} must be a JSON object such as {{\"allow_http\": \"true\"}} (from {origin})")
        return {str(k): str(v) for k, v in value.items()}
    return raw


def load(
    flags: Mapping[str, str | None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every setting.

    Args:
        flags: values given on the command line, keyed by variable name (e.g. ``{"LANCEDB_PATH": ...}``);
            None or blank values are ignored.
        environ: the environment (``os.environ`` when None).
    """
    env = os.environ if environ is None else environ
    directory = config_dir(env)
    stored = read_stored(directory)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, (default, kind) in _FIELDS.items():
        for origin, layer in (("flag", flags or {}), ("env", env), ("file", stored)):
            raw = layer.get(name)
            if not blank(raw):
                values[_ATTR[name]] = _convert(name, raw, kind, origin)  # type: ignore[arg-type]
                sources[name] = origin
                break
        else:
            values[_ATTR[name]] = default
            sources[name] = "default"
    return Settings(**values, config_dir=directory, sources=sources)
