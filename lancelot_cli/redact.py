"""Secrets out of everything Lancelot prints or returns (issue 37 #2).

An OpenAI-compatible endpoint, or a proxy in front of it, may answer an error with a body that
echoes the request's ``Authorization`` header; an ``OPENAI_BASE_URL`` (or a database URI) may carry
a user and password. Such text reaches a tool reply's ``note`` (so an agent's transcript), the
CLI's output and its errors. ``text`` takes out of a string:

* every secret this process was handed (``remember``: the API key when it is found or used;
  ``remember_url``: the user and password of the endpoint's URL, in every form the HTTP client
  sends them, issue 46 #3),
* the user information of any URL (``https://user:pass@host`` -> ``https://***@host``),
* ``Bearer <token>`` and strings shaped like OpenAI keys (``sk-…``), whoever's they are.

Every pattern here is linear in its input (a hostile endpoint writes the text being cleaned).
Standard library only: a leaf any layer may import.
"""

from __future__ import annotations

import base64
import re
import threading
from urllib.parse import unquote

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


def remember_url(value: str | None) -> None:
    """Hide the user information of the URL ``value`` (``http://user:pass@host``) from every later
    ``text``, in each form it can come back in: an endpoint may echo the ``Authorization: Basic``
    header it was sent (base64 of the percent-decoded ``user:pass``, as httpx builds it) without the
    word "Basic", or the decoded ``user:pass``, and the URL form itself is hidden by ``url``.

    Remembered: ``user:pass`` raw and percent-decoded; base64 of each (standard and URL-safe, with
    and without the ``=`` padding); the password alone, raw and percent-decoded. Like every remembered
    secret, a form shorter than ``_MIN_SECRET`` is not kept: a short password alone ("test",
    "admin") would hide ordinary words in every reply, and guards nothing a longer form does not.
    The user name alone is not a secret (unless it is all there is: ``https://token@host``)."""
    if not value or "://" not in value:
        return
    authority = value.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    userinfo = authority.rpartition("@")[0]
    if not userinfo:
        return
    user, _, password = userinfo.partition(":")
    decoded = f"{unquote(user)}:{unquote(password)}"  # what httpx puts in the Basic header
    forms = {userinfo, decoded if password else unquote(user), password, unquote(password)}
    for plain in (userinfo, decoded):
        raw = plain.encode()
        for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
            forms.update((encoded, encoded.rstrip("=")))
    for form in forms:
        remember(form)


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
