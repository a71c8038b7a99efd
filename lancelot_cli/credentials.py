"""Where the OpenAI key comes from: the environment first, then what `lancelot init` stored.

One function, ``find_openai_key``, walks that order. keyring is imported only when the
environment has no key, because its backend discovery costs ~170 ms. On machines with no
keychain backend (headless Linux, containers) keyring raises ``NoKeyringError`` even when only
reading: that means "no stored key", never a crash.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lancelot_cli.settings import blank

KEYRING_SERVICE = "lancelot"
KEYRING_USER = "OPENAI_API_KEY"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoundKey:
    """An API key and where it came from: "env", "keychain" or "file". ``repr`` hides the key."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"FoundKey(source={self.source!r}, value='***')"


def _from_keychain() -> str | None:
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        value = keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
    except KeyringError:
        return None
    except Exception as exc:  # a broken backend (D-Bus gone, locked store) is "no key", not a crash
        log.debug("keychain lookup failed: %s", type(exc).__name__)
        return None
    return None if blank(value) else value.strip()  # type: ignore[union-attr]


def _from_file(config_dir: Path) -> str | None:
    """The encrypted key file written by `lancelot init` where no keychain works."""
    from lancelot_cli import keyfile

    try:
        value = keyfile.read_key(config_dir)
    except Exception as exc:  # unreadable or tampered file: treat as no key, say why at debug level
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
