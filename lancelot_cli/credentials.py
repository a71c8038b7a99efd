"""Where the OpenAI key comes from: the environment first, then what `lancelot init` stored.

One function, ``find_openai_key``, walks that order. keyring is imported only when the
environment has no key, because its backend discovery costs ~170 ms. On machines with no
keychain backend (headless Linux, containers) keyring raises ``NoKeyringError`` even when only
reading: that means "no stored key", never a crash.

The key file is decrypted (an scrypt derivation, ~60 ms) once per process and again only when
the key file or its secret changes (their inode, size and mtime), so a server or a run of many
vector searches does not pay it per query (docs/design.md#issue-13). The environment and the keychain are read
on every call: both are cheap once keyring is imported, and a key rotated there is seen at once.

`lancelot init` stores the key with ``store_key`` (keychain, else the encrypted key file of
``keyfile``) and removes it with ``forget_key``. The key itself is never logged, and errors from a
keychain backend are reduced to their class name before anything is said about them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lancelot_cli import redact
from lancelot_cli.models import KeySource
from lancelot_cli.settings import blank

KEYRING_SERVICE = "lancelot"
KEYRING_USER = "OPENAI_API_KEY"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoundKey:
    """An API key and where it came from: "env", "keychain" or "file". ``repr`` hides the key, and
    every key found is one ``redact.text`` hides from what the program prints or returns."""

    value: str
    source: KeySource

    def __post_init__(self) -> None:
        redact.remember(self.value)

    def __repr__(self) -> str:
        return f"FoundKey(source={self.source!r}, value='***')"


def _from_keychain(user: str = KEYRING_USER) -> str | None:
    """The keychain's entry for ``user`` (the key, or the HTTP tokens of ``http_tokens``)."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        value = keyring.get_password(KEYRING_SERVICE, user)
    except KeyringError:
        return None
    except Exception as exc:  # noqa: BLE001 - a broken backend (D-Bus gone, locked store) is "no key", not a crash
        log.debug("keychain lookup failed: %s", type(exc).__name__)
        return None
    return None if blank(value) else value.strip()  # type: ignore[union-attr]


# config folder -> (signature of the key file and its secret, what they decrypted to)
_file_cache: dict[Path, tuple[tuple[tuple[int, ...], ...], str | None]] = {}
_file_lock = threading.Lock()


def _file_signature(config_dir: Path) -> tuple[tuple[int, ...], ...] | None:
    """Inode, size and mtime of the key file and its secret; None when either is missing."""
    from lancelot_cli import keyfile

    parts = []
    for name in (keyfile.KEY_FILE, keyfile.SECRET_FILE):
        try:
            info = os.stat(config_dir / name)
        except OSError:
            return None
        parts.append((info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(parts)


def _from_file(config_dir: Path) -> str | None:
    """The encrypted key file written by `lancelot init` where no keychain works (decrypted once
    per change of the files)."""
    signature = _file_signature(config_dir)
    if signature is None:  # no file (or no secret): nothing worth keeping
        return _read_file(config_dir)
    with _file_lock:
        cached = _file_cache.get(config_dir)
        if cached is not None and cached[0] == signature:
            return cached[1]
        value = _read_file(config_dir)
        _file_cache[config_dir] = (signature, value)
        return value


def _read_file(config_dir: Path) -> str | None:
    from lancelot_cli import keyfile

    try:
        value = keyfile.read_key(config_dir)
    except Exception as exc:  # noqa: BLE001 - unreadable or tampered file: no key, said at debug level
        log.debug("stored key file unreadable: %s", type(exc).__name__)
        return None
    return None if blank(value) else value.strip()  # type: ignore[union-attr]


def find_openai_key(config_dir: Path, environ: Mapping[str, str] | None = None) -> FoundKey | None:
    """The OpenAI key: ``OPENAI_API_KEY`` (non-blank), then the keychain, then the key file."""
    env = os.environ if environ is None else environ
    value = env.get("OPENAI_API_KEY")
    if not blank(value):
        return FoundKey(value.strip(), "env")  # type: ignore[union-attr]
    value = _from_keychain()
    if value:
        return FoundKey(value, "keychain")
    value = _from_file(config_dir)
    if value:
        return FoundKey(value, "file")
    return None


# -- what `lancelot init` stores and removes ---------------------------------------------------------


def mask(value: str) -> str:
    """A key shown so a person can recognise it and nobody can use it: ``sk-…abcd``.

    Keys shorter than 12 characters show nothing of themselves (four characters of an eight-character
    key would be half of it).
    """
    value = value.strip()
    if len(value) < 12:
        return "****"
    return f"{value[:3]}…{value[-4:]}"


@dataclass(frozen=True)
class StoredKey:
    """Where `store_key` put the key: ``"keychain"`` or ``"file"`` (then ``path`` is the file), and,
    for the file, why the keychain was not used (``keychain_error``: an exception's class name)."""

    source: Literal["keychain", "file"]
    path: Path | None = None
    keychain_error: str | None = None


def store_key(config_dir: Path, api_key: str) -> StoredKey:
    """Store the key in the OS keychain; where no keychain backend works, in the encrypted key file.

    The keychain write is read back before it counts (a backend that accepts and drops the value
    falls back to the file too). Only one stored copy is kept: after a keychain write the key file
    is removed, and after a file write a keychain entry is removed where that is possible (the
    keychain would otherwise shadow the new file, since it is looked at first). Any keychain
    failure (``KeyringError`` including ``NoKeyringError``, or a broken backend's own exception)
    means "use the file"; only the exception's class name is kept, never its text.
    """
    value = api_key.strip()
    if not value:
        raise ValueError("an empty key cannot be stored")
    from lancelot_cli import keyfile

    error = keychain_write(KEYRING_USER, value)
    if error is None:
        keyfile.delete_key(config_dir)
        return StoredKey("keychain")
    log.debug("keychain not used: %s", error)
    path = keyfile.write_key(config_dir, value)
    _delete_from_keychain()
    return StoredKey("file", path=path, keychain_error=error)


def keychain_write(user: str, value: str) -> str | None:
    """Put ``value`` in the keychain as ``user`` and read it back: None when it is there, else why
    not (an exception's class name only: KeyringError, NoKeyringError, a backend's own)."""
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, user, value)
        if keyring.get_password(KEYRING_SERVICE, user) != value:
            return "the keychain did not keep the value"
    except Exception as exc:  # noqa: BLE001 - KeyringError, NoKeyringError, D-Bus or OS errors from a backend
        return type(exc).__name__
    return None


def _delete_from_keychain(user: str = KEYRING_USER) -> tuple[bool, str | None]:
    """Remove the keychain entry: (removed, problem). No backend, or no entry, is not a problem."""
    try:
        import keyring
        from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return False, None
    try:
        if keyring.get_password(KEYRING_SERVICE, user) is None:
            return False, None
        keyring.delete_password(KEYRING_SERVICE, user)
    except (NoKeyringError, PasswordDeleteError):
        return False, None
    except KeyringError as exc:
        return False, type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - a broken backend: report it, do not crash
        return False, type(exc).__name__
    return True, None


@dataclass(frozen=True)
class Forgotten:
    """What `forget_key` removed (``"keychain"``, ``"file"``) and what it could not check or remove."""

    removed: tuple[str, ...]
    problems: tuple[str, ...]


def forget_key(config_dir: Path) -> Forgotten:
    """Remove the stored key from the keychain and the key file, wherever it is.

    A machine without a keychain backend (``NoKeyringError``) has nothing there to remove; that is
    not a problem. A backend that fails otherwise is reported in ``problems`` (class name only).
    """
    from lancelot_cli import keyfile

    removed: list[str] = []
    problems: list[str] = []
    gone, problem = _delete_from_keychain()
    if gone:
        removed.append("keychain")
    if problem:
        problems.append(f"the keychain could not be cleared ({problem})")
    if keyfile.delete_key(config_dir):
        removed.append("file")
    return Forgotten(tuple(removed), tuple(problems))


def stored_keys(config_dir: Path) -> list[FoundKey]:
    """Every stored copy of the key (keychain, then file), ignoring the environment."""
    found = []
    stores: tuple[tuple[KeySource, str | None], ...] = (
        ("keychain", _from_keychain()),
        ("file", _from_file(config_dir)),
    )
    for source, value in stores:
        if value:
            found.append(FoundKey(value, source))
    return found
