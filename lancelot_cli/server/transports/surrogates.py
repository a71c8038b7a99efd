"""Lone UTF-16 surrogates in JSON requests: ``"\\ud800"`` (half an emoji, valid JSON grammar) decodes in
Python to a string no UTF-8 encoder and no pydantic model takes. Both transports read such a half
as U+FFFD, the replacement character, and answer the request (docs/design.md#issue-27 item 5)."""

from __future__ import annotations

from typing import Any


def replace_lone(value: Any) -> Any:
    """``value`` (decoded JSON) with every lone surrogate in its strings, keys too, as U+FFFD; a
    surrogate pair that JSON escaped in two halves is one character already and stays."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [replace_lone(item) for item in value]
    if isinstance(value, dict):
        return {replace_lone(key): replace_lone(item) for key, item in value.items()}
    return value
