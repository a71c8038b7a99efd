"""Secrets out of everything Lancelot prints or returns (issue 37 #2).

An OpenAI-compatible endpoint, or a proxy in front of it, may answer an error with a body that
echoes the request's ``Authorization`` header; an ``OPENAI_BASE_URL`` (or a database URI) may carry
a user and password. Such text reaches a tool reply's ``note`` (so an agent's transcript), the
CLI's output and its errors. ``text`` takes out of a string:

* every secret this process was handed (``remember``: the API key when it is found or used),
* the user information of any URL (``https://user:pass@host`` -> ``https://***@host``),
* ``Bearer <token>`` and strings shaped like OpenAI keys (``sk-…``), whoever's they are.

Every pattern here is linear in its input (a hostile endpoint writes the text being cleaned).
Standard library only: a leaf any layer may import.
"""

from __future__ import annotations

import re
import threading

HIDDEN = "***"
_MIN_SECRET = 8  # shorter values are not kept: replacing every "test" in a reply would hide words, not keys

_secrets: set[str] = set()
_lock = threading.Lock()

# After "://", the user information runs to the first "@" before any "/", space or quote: one scan
# from each "://", never further than the next "/".
_USERINFO = re.compile(r"(?<=://)[^/@\s\"'<>]+@")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
_KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")


def remember(secret: str | None) -> None:
    """Hide ``secret`` from every later ``text`` in this process."""
    if secret and len(secret.strip()) >= _MIN_SECRET:
        with _lock:
            _secrets.add(secret.strip())


def url(value: str | None) -> str | None:
    """``value`` with the user information of any URL in it hidden (None stays None)."""
    if value is None or "://" not in value:
        return value
    return _USERINFO.sub(HIDDEN + "@", value)


def text(value: str) -> str:
    """``value`` with remembered secrets, URL user information, bearer tokens and key-shaped strings hidden."""
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)  # a key that contains another goes first
    for secret in known:
        if secret in value:
            value = value.replace(secret, HIDDEN)
    value = url(value) or ""
    value = _BEARER.sub(lambda m: f"{m.group(1)} {HIDDEN}", value)
    return _KEY_SHAPED.sub(HIDDEN, value) if "sk-" in value else value
