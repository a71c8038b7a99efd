"""Error texts as the server sends them: secrets hidden (``redact.text``) and at most
``MAX_ERROR_CHARS``, whatever the input they echo (a 60 KB argument, a 1 MB prompt name or
resource URI: issue 37)."""

from __future__ import annotations

from lancelot_cli import redact

MAX_ERROR_CHARS = 1000


def capped(text: str) -> str:
    """``text`` without secrets, its middle cut when it is over ``MAX_ERROR_CHARS``."""
    text = redact.text(text)  # an exception's text may carry a key or a URL's password (issue 37)
    half = MAX_ERROR_CHARS // 2
    return text if len(text) <= MAX_ERROR_CHARS else f"{text[:half]} … ({len(text)} characters) … {text[-half:]}"
