"""What a body must be to reach the SDK over HTTP: JSON media type, UTF-8 JSON-RPC, not too deep.

Rules 6 and 7 of server/transports/http.py (the 415 and 400 replies), checked before the SDK parses anything,
and the one repair made on the way (lone surrogate escapes, as stdio reads them).
"""

from __future__ import annotations

import json
import re

from lancelot_cli.server.transports.surrogates import replace_lone

MAX_DEPTH = 64  # JSON nesting; MCP messages need under 10, and Python's parser dies near 1,000


def media_type_problem(value: str | None) -> str | None:
    """Why a Content-Type is not JSON for us, or None when it is (RFC 9110: type and subtype are
    case-insensitive; parameters may follow; JSON is UTF-8, so a charset must say so)."""
    if not value:
        return "Content-Type is missing: send application/json"
    media, _, params = value.partition(";")
    if media.strip().lower() != "application/json":
        return f"Content-Type {media.strip()[:100]!r} is not supported: send application/json"
    for param in params.split(";"):
        name, _, raw = param.partition("=")
        if name.strip().lower() == "charset" and raw.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return f"charset {raw.strip()[:40]!r} is not supported: JSON bodies are UTF-8"
    return None


def json_problem(body: bytes) -> str | None:
    """Why a body is not an acceptable JSON-RPC payload, or None. Checks depth before parsing, so
    a deeply nested body cannot reach the parser's recursion limit."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "Parse error: the body is not UTF-8"
    if _depth(text) > MAX_DEPTH:
        return f"Parse error: JSON nested deeper than {MAX_DEPTH} levels"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "Parse error: the body is not JSON"
    if not isinstance(value, (dict, list)):
        return "Parse error: the body must be a JSON-RPC object"
    return None


BATCH = "Invalid Request: batches are not supported; send one JSON-RPC message per request"


def repaired(body: bytes) -> bytes:
    """``body`` (JSON already checked) with each lone UTF-16 surrogate escape (``"\\ud800"``, half an
    emoji: valid JSON grammar that the SDK's parser refuses) as U+FFFD, as stdio reads it; the
    body itself when it has none."""
    if b"\\u" not in body.lower():
        return body
    value = json.loads(body)
    fixed = replace_lone(value)
    return body if fixed == value else json.dumps(fixed).encode()


# A string is matched by the unrolled loop with its closing quote optional, so the pattern never
# fails once it has started: an unterminated string (`"\"\"\"...`) is taken to the end of the body
# in one pass. `"(?:[^"\\]|\\.)*"` failed there and was retried from every quote inside it:
# quadratic, 10.7 s of the event loop for 64 KB (issue 37).
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def _depth(text: str) -> int:
    """Deepest bracket nesting outside strings (a linear scan, no parsing)."""
    deepest = depth = 0
    for token in _TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
