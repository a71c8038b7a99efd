"""Bearer tokens for `serve --http` and the Lambda handler that `lancelot init --http-token` stored,
kept like the OpenAI key (``credentials``): in the OS keychain, else in the encrypted file
``http-tokens.enc`` of ``keyfile`` (same secret: ``LANCELOT_KEY_PASSPHRASE``, else ``.secret``).

``LANCELOT_HTTP_TOKENS`` (flag, environment or settings file) wins: these are read only when it is
unset (``server/transports/auth.py``), once per process and config folder (a server builds its login twice at
start: the keychain backend and the scrypt derivation are paid once). The tokens are handed to
``redact`` as soon as they are read, and no message here carries one.

One difference from the key: a token file that cannot be decrypted (another passphrase, a changed
file, the secret gone) is an error, never "no token", because "no token" means a server with no login.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lancelot_cli import credentials, keyfile, redact
from lancelot_cli.errors import ConfigError

KEYRING_USER = "LANCELOT_HTTP_TOKENS"
TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 43 characters, 256 bits
Place = Literal["keychain", "file"]


@dataclass(frozen=True)
class StoredTokens:
    """The stored tokens and where they were: ``"keychain"`` or ``"file"``. ``repr`` hides them."""

    tokens: tuple[str, ...]
    source: Place

    def __post_init__(self) -> None:
        for token in self.tokens:
            redact.remember(token)

    def __repr__(self) -> str:
        return f"StoredTokens(source={self.source!r}, tokens=({len(self.tokens)} hidden))"


_cache: dict[Path, StoredTokens | None] = {}
_lock = threading.Lock()


def new_token() -> str:
    """A strong token (RFC 6750's alphabet: letters, digits, - and _)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def find(config_dir: Path) -> StoredTokens | None:
    """The stored tokens (keychain, then the encrypted file), or None; read once per process.

    Raises:
        ConfigError: the token file is there but cannot be decrypted (one line, no token in it).
    """
    with _lock:
        if config_dir in _cache:
            return _cache[config_dir]
        found = _read(config_dir)
        _cache[config_dir] = found
        return found


def _read(config_dir: Path) -> StoredTokens | None:
    tokens = _split(credentials._from_keychain(KEYRING_USER))
    if tokens:
        return StoredTokens(tokens, "keychain")
    path = config_dir / keyfile.TOKENS_FILE
    try:
        tokens = _split(keyfile.read_key(config_dir, keyfile.TOKENS_FILE))
    except Exception as exc:  # noqa: BLE001 - InvalidToken, a missing secret, a damaged file: one line
        raise ConfigError(
            f"the stored HTTP token file {path} cannot be decrypted ({type(exc).__name__}): "
            f"LANCELOT_KEY_PASSPHRASE is not the one it was stored with, or the file or its secret "
            f"changed; set that passphrase, or make a new token with `lancelot init --http-token`"
        ) from None
    return StoredTokens(tokens, "file") if tokens else None


def stored(config_dir: Path) -> bool:
    """Whether a token is stored (the keychain entry or the file), without decrypting anything."""
    return bool(credentials._from_keychain(KEYRING_USER)) or (config_dir / keyfile.TOKENS_FILE).exists()


def store(config_dir: Path, token: str) -> credentials.StoredKey:
    """Keep ``token`` as the only stored one: the keychain (read back), else the encrypted file;
    the other place is cleared, as ``credentials.store_key`` does for the key."""
    redact.remember(token)
    with _lock:
        _cache.pop(config_dir, None)
    error = credentials.keychain_write(KEYRING_USER, token)
    if error is None:
        keyfile.delete_key(config_dir, keyfile.TOKENS_FILE)
        return credentials.StoredKey("keychain")
    path = keyfile.write_key(config_dir, token, keyfile.TOKENS_FILE)
    credentials._delete_from_keychain(KEYRING_USER)
    return credentials.StoredKey("file", path=path, keychain_error=error)


def forget(config_dir: Path) -> credentials.Forgotten:
    """Remove the stored tokens from the keychain and the file (a keychain failure: class name only)."""
    with _lock:
        _cache.pop(config_dir, None)
    removed: list[str] = []
    problems: list[str] = []
    gone, problem = credentials._delete_from_keychain(KEYRING_USER)
    if gone:
        removed.append("keychain")
    if problem:
        problems.append(f"the keychain could not be cleared of the HTTP token ({problem})")
    if keyfile.delete_key(config_dir, keyfile.TOKENS_FILE):
        removed.append("file")
    return credentials.Forgotten(tuple(removed), tuple(problems))
