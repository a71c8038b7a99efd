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
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Literal, NamedTuple

from lancelot_cli import redact
from lancelot_cli.errors import ConfigError
from lancelot_cli.location import Location

SETTINGS_FILE = "settings.json"

OBJECT_STORE_CONSISTENCY = 5.0

LOG_LEVELS = {
    "error": 40,
    "warn": 30,
    "warning": 30,
    "info": 20,
    "http": 15,
    "verbose": 15,
    "debug": 10,
    "silly": 5,
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
        raise ConfigError(
            f"cannot read the settings file {path}: {exc}; fix or delete it, or run `lancelot init`"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"the settings file {path} is not a JSON object; delete it or run `lancelot init`")
    return {str(k): str(v) for k, v in data.items() if v is not None}


def private_folder(directory: Path) -> Path:
    """``directory`` made if missing, readable by this user only (mode 0700): the config folder holds
    the settings, the key file and what was indexed from where (issue 37: `index` before `init`
    left it 0755). An existing folder of this user's that others can read is closed too."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.stat()
    if info.st_mode & 0o077 and info.st_uid == os.getuid():
        directory.chmod(0o700)
    return directory


def write_stored(directory: Path, values: Mapping[str, str]) -> Path:
    """Write the settings file atomically (a reader sees the old file or the new one), mode 0600 in a
    private folder: it may hold an endpoint URL with a password."""
    path = private_folder(directory) / SETTINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)  # a tmp file left by an older run keeps its mode through O_CREAT
        out.write(json.dumps(dict(values), indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


# How a setting's text is converted (see `_setting`).
SettingKind = Literal["str", "int", "list", "seconds", "minutes", "json"]


def _setting(
    env: str, default: Any, kind: SettingKind, description: str, *, status: bool = False, unset: str = "(not set)"
) -> Any:
    """One row of the settings table, as a dataclass field (see `Settings`).

    Args:
        env: the environment variable (also the key in the settings file and in ``flags``).
        default: the value when no layer sets it.
        kind: how the text is converted: "str", "int" (at least 1), "list" (comma-separated),
            "seconds" (0 to 86400), "minutes" (0 to 1440, fractions allowed) or "json" (an object of strings).
        description: one line for people (`init --show`, the README).
        status: `lancelot status` lists it too.
        unset: what a person sees when the value is None.
    """
    return field(
        default=default,
        metadata={"env": env, "kind": kind, "description": description, "status": status, "unset": unset},
    )


@dataclass(frozen=True)
class Settings:
    """Effective settings. ``sources`` says where each came from: flag, env, file or default.

    The fields declared with `_setting` are THE table of settings: `FIELDS` (and with it `load`,
    `rows` for `status` and `init --show`, and `ENVIRONMENT` for the tests) is read from them.
    """

    db_uri: str | None = _setting(
        "LANCEDB_PATH", None, "str", "database folder or object-store URI (s3://, gs://, az://)", status=True
    )
    table: str = _setting("LANCEDB_TABLE", "documents", "str", "table used when a call names none", status=True)
    # storage/read/pins.py: a number is a version, anything else a tag (`lancelot index --tag NAME`)
    table_version: str | None = _setting(
        "LANCELOT_TABLE_VERSION",
        None,
        "str",
        "read LANCEDB_TABLE at this version number or tag, not the latest (`serve --table-version`)",
        status=True,
        unset="(latest)",
    )
    text_column: str = _setting("LANCEDB_TEXT_COLUMN", "text", "str", "column searched as text", status=True)
    vector_column: str = _setting("LANCEDB_VECTOR_COLUMN", "vector", "str", "column searched as vectors", status=True)
    default_limit: int = _setting(
        "LANCEDB_DEFAULT_LIMIT", 20, "int", "hits returned when a call names no limit", status=True
    )
    context_budget: int = _setting(
        "LANCEDB_CONTEXT_BUDGET", 8000, "int", "characters of context a reply packs by default", status=True
    )
    openai_base_url: str | None = _setting(
        "OPENAI_BASE_URL", None, "str", "OpenAI-compatible embeddings endpoint", status=True, unset="OpenAI"
    )
    embedding_model: str = _setting(
        "EMBEDDING_MODEL",
        "text-embedding-ada-002",
        "str",
        "model that embeds queries (and `index --embed`)",
        status=True,
    )
    embedding_dimensions: int = _setting(
        "EMBEDDING_DIMENSIONS", 1536, "int", "size of the model's vectors", status=True
    )
    log_level: str = _setting("LANCELOT_LOG_LEVEL", "info", "str", "error, warn, info, debug (stderr)")
    allowed_origins: tuple[str, ...] = _setting(
        "LANCELOT_ALLOWED_ORIGINS", (), "list", "browser origins the HTTP server accepts (comma-separated)"
    )
    allowed_hosts: tuple[str, ...] = _setting(
        "LANCELOT_ALLOWED_HOSTS", (), "list", "Host headers the HTTP server accepts besides loopback (comma-separated)"
    )
    base_path: str | None = _setting("LANCELOT_BASE_PATH", None, "str", "URL path prefix of the HTTP endpoint")
    # None: 0 s for a folder, 5 s for an object store (see consistency_seconds)
    read_consistency: float | None = _setting(
        "LANCELOT_READ_CONSISTENCY", None, "seconds", "how stale a running server's view of a table may get, in seconds"
    )
    storage_options: Mapping[str, str] | None = _setting(
        "LANCELOT_STORAGE_OPTIONS", None, "json", "object-store options as a JSON object"
    )
    http_header_timeout: float = _setting(
        "LANCELOT_HTTP_HEADER_TIMEOUT",
        10.0,
        "seconds",
        "HTTP: seconds a client has to send a request's headers (0: no limit)",
    )
    http_body_timeout: float = _setting(
        "LANCELOT_HTTP_BODY_TIMEOUT",
        10.0,
        "seconds",
        "HTTP: seconds a client has to send a request's body once its headers are in (0: no limit)",
    )
    http_idle_timeout: float = _setting(
        "LANCELOT_HTTP_IDLE_TIMEOUT", 5.0, "seconds", "HTTP: seconds an idle keep-alive connection stays open"
    )
    http_max_connections: int = _setting(
        "LANCELOT_HTTP_MAX_CONNECTIONS",
        256,
        "int",
        "HTTP: connections open at once; one more is answered 503 and closed",
    )
    # Login and metrics for `serve --http` and Lambda (issue 50; server/transports/auth.py, exposition.py)
    http_tokens: tuple[str, ...] = _setting(
        "LANCELOT_HTTP_TOKENS",
        (),
        "list",
        "HTTP and Lambda: bearer tokens, comma-separated; set, every request must carry one (hidden in output); "
        "unset: the token `lancelot init --http-token` stored",
    )
    http_no_login: str | None = _setting(
        "LANCELOT_HTTP_NO_LOGIN", None, "str", "HTTP: 1 lets --host listen beyond loopback with no login"
    )
    metrics: str | None = _setting("LANCELOT_METRICS", None, "str", "HTTP: 1 serves Prometheus metrics at /metrics")
    oauth_issuer: str | None = _setting(
        "LANCELOT_OAUTH_ISSUER",
        None,
        "str",
        "HTTP and Lambda: issuer URL of the authorization server whose tokens count",
    )
    oauth_resource: str | None = _setting(
        "LANCELOT_OAUTH_RESOURCE", None, "str", "HTTP and Lambda: this server's public MCP URL (the tokens' audience)"
    )
    oauth_jwks_url: str | None = _setting(
        "LANCELOT_OAUTH_JWKS_URL",
        None,
        "str",
        "HTTP and Lambda: the issuer's signing keys (default: from its metadata)",
    )
    index_cache_mb: int = _setting(
        "LANCELOT_INDEX_CACHE_MB",
        128,
        "int",
        "MiB of index data (full-text posting "
        "lists, vector partitions) kept in memory between searches; LanceDB's own "
        "default is 6 GiB",
    )
    warm_minutes: float = _setting(
        "LANCELOT_WARM",
        10.0,
        "minutes",
        "CLI: minutes a background `lancelot "
        "serve` (answering search, query, show, status) stays alive while idle; 0: none",
    )
    keep_versions_minutes: float = _setting(
        "LANCELOT_KEEP_VERSIONS_FOR",
        10.0,
        "minutes",
        "index: minutes after its commit that an older version of a table is kept, for a reader still on it; "
        "0: none (LanceDB's own default is 7 days)",
    )
    config_dir: Path = field(default_factory=lambda: Path("."))
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def database(self) -> Location | None:
        """Where the database is, parsed once for every command and ``serve`` (location.py): what
        they open, lock and send. ``db_uri`` stays as given, for the words `status` prints."""
        return Location.parse(self.db_uri) if self.db_uri else None

    @property
    def log_level_number(self) -> int:
        return LOG_LEVELS.get(self.log_level.lower(), 20)

    @property
    def consistency_seconds(self) -> float:
        """How stale a running server's view of a table may get. A folder is checked on every read
        (cheap); an object store every 5 s by default, since each check is a request."""
        if self.read_consistency is not None:
            return self.read_consistency
        location = self.database
        return 0.0 if location is None or location.is_local else OBJECT_STORE_CONSISTENCY


class SettingField(NamedTuple):
    """One setting: its variable name, the `Settings` attribute, default, kind and description."""

    name: str
    attr: str
    default: Any
    kind: SettingKind
    description: str
    status: bool
    unset: str


FIELDS: tuple[SettingField, ...] = tuple(
    SettingField(
        f.metadata["env"],
        f.name,
        f.default,
        f.metadata["kind"],
        f.metadata["description"],
        f.metadata["status"],
        f.metadata["unset"],
    )
    for f in dataclass_fields(Settings)
    if "env" in f.metadata
)
BY_NAME: Mapping[str, SettingField] = {f.name: f for f in FIELDS}
DEFAULT_TABLE: str = BY_NAME["LANCEDB_TABLE"].default

# Variables read outside the table: the key (credentials), the key file's passphrase (keyfile),
# the config folder (config_dir), the switch for the deferred lancedb import (storage.lancedb_import),
# the organisation/project the openai client sends, and lancedb's own log filter (startup.py).
OTHER_ENVIRONMENT: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "LANCELOT_KEY_PASSPHRASE",
    "LANCELOT_CONFIG_DIR",
    "LANCELOT_NO_FAST_IMPORT",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "LANCEDB_LOG",
)
# Every variable that changes what Lancelot does: the tests clear these so a developer's shell cannot leak in.
ENVIRONMENT: tuple[str, ...] = tuple(f.name for f in FIELDS) + OTHER_ENVIRONMENT


# Settings whose values are secrets: `status` and `init --show` say how many, never what.
SECRET_SETTINGS = frozenset({"LANCELOT_HTTP_TOKENS"})


def display(value: Any, setting: SettingField) -> str:
    """A setting's value as a person reads it: lists comma-separated, object-store options with
    their secrets hidden, None as the field's ``unset`` text."""
    if value is None or value == "" or value == ():
        return setting.unset
    if setting.name in SECRET_SETTINGS:
        return f"({len(value)} set, hidden)"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, Mapping):
        secret = ("secret", "key", "token", "password", "credential")
        return json.dumps({k: "***" if any(s in k.lower() for s in secret) else v for k, v in value.items()})
    return redact.url(str(value)) or ""  # a password in OPENAI_BASE_URL or a database URI (issue 37)


def rows(settings: Settings, *, status_only: bool = False) -> list[tuple[str, str, str]]:
    """``(name, value, source)`` for every setting in table order: what `status` (``status_only``:
    the rows marked status) and `init --show` print. Source is flag, env, file or default."""
    return [
        (f.name, display(getattr(settings, f.attr), f), settings.sources.get(f.name, "default"))
        for f in FIELDS
        if f.status or not status_only
    ]


_SPANS = {"seconds": 86400, "minutes": 1440}  # kind -> the largest value (a day)


def _convert(name: str, raw: str, kind: SettingKind, origin: str) -> Any:
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
    if kind in _SPANS:  # a number of seconds or minutes, 0 up to a day
        try:
            amount = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number of {kind}, got {raw!r} (from {origin})") from None
        if not 0 <= amount <= _SPANS[kind]:
            raise ConfigError(f"{name} must be between 0 and {_SPANS[kind]} {kind}, got {raw!r} (from {origin})")
        return amount
    if kind == "json":
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ConfigError(f'{name} must be a JSON object such as {{"allow_http": "true"}} (from {origin})')
        return {str(k): str(v) for k, v in data.items()}
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
    for setting in FIELDS:
        for origin, layer in (("flag", flags or {}), ("env", env), ("file", stored)):
            raw = layer.get(setting.name)
            if raw is not None and not blank(raw):
                values[setting.attr] = _convert(setting.name, raw, setting.kind, origin)
                sources[setting.name] = origin
                break
        else:
            values[setting.attr] = setting.default
            sources[setting.name] = "default"
    return Settings(**values, config_dir=directory, sources=sources)
