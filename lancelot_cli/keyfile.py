"""The encrypted key file used where no OS keychain works (written by `lancelot init`).

Files: ``<config dir>/openai-key.enc`` (the OpenAI key) and ``http-tokens.enc`` (the bearer tokens
`lancelot init --http-token` made for `serve --http`), mode 0600, each a Fernet token (AES-128-CBC + HMAC-SHA256,
from the ``cryptography`` package). The Fernet key is derived with scrypt from a random salt
stored in the file and a secret: ``LANCELOT_KEY_PASSPHRASE`` when set, else a random per-user
secret kept in ``<config dir>/.secret`` (mode 0600). Without a passphrase this protects
against the key showing up in plain text (backups, grep, screen shares, a copied config file
without its secret), not against a process running as the same user, which can read both files.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

KEY_FILE = "openai-key.enc"
TOKENS_FILE = "http-tokens.enc"
SECRET_FILE = ".secret"
ENCRYPTED_FILES = (KEY_FILE, TOKENS_FILE)  # every file the secret decrypts: it goes with the last of them


def _write_private(path: Path, data: bytes) -> None:
    """Write atomically with mode 0600 from the first byte."""
    from lancelot_cli.settings import private_folder

    private_folder(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _secret(config_dir: Path, create: bool) -> bytes | None:
    passphrase = os.environ.get("LANCELOT_KEY_PASSPHRASE", "")
    if passphrase.strip():
        return passphrase.encode("utf-8")
    path = config_dir / SECRET_FILE
    if path.exists():
        return path.read_bytes()
    if not create:
        return None
    value = secrets.token_bytes(32)
    _write_private(path, value)
    return value


def _fernet(secret: bytes, salt: bytes) -> Fernet:
    from cryptography.fernet import Fernet
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    key = Scrypt(salt=salt, length=32, n=2**14, r=8, p=1).derive(secret)
    return Fernet(base64.urlsafe_b64encode(key))


def write_key(config_dir: Path, api_key: str, name: str = KEY_FILE) -> Path:
    """Encrypt and store the key (or, with ``name``, another secret); returns the file's path."""
    secret = _secret(config_dir, create=True)
    assert secret is not None
    salt = secrets.token_bytes(16)
    token = _fernet(secret, salt).encrypt(api_key.encode("utf-8"))
    body = {"version": 1, "kdf": "scrypt", "salt": base64.b64encode(salt).decode(), "token": token.decode()}
    path = config_dir / name
    _write_private(path, json.dumps(body).encode("utf-8"))
    return path


def read_key(config_dir: Path, name: str = KEY_FILE) -> str | None:
    """The stored key (or the file ``name``'s secret), or None when there is no file. Raises when the
    file cannot be decrypted."""
    path = config_dir / name
    if not path.exists():
        return None
    body = json.loads(path.read_text(encoding="utf-8"))
    secret = _secret(config_dir, create=False)
    if secret is None:
        raise ValueError("the key file's secret is missing")
    salt = base64.b64decode(body["salt"])
    return _fernet(secret, salt).decrypt(body["token"].encode("utf-8")).decode("utf-8")


def delete_key(config_dir: Path, name: str = KEY_FILE) -> bool:
    """Remove the key file (or the file ``name``), and the per-user secret beside it once no other
    encrypted file needs it (a new one is made by the next ``write_key``). True when there was one."""
    try:
        (config_dir / name).unlink()
        existed = True
    except FileNotFoundError:
        existed = False
    if not any((config_dir / other).exists() for other in ENCRYPTED_FILES):
        with contextlib.suppress(FileNotFoundError):
            (config_dir / SECRET_FILE).unlink()
    return existed
