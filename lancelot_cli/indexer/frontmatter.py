"""YAML front matter of Markdown files: split it off the text, and turn it into table columns.

The block between a first line ``---`` and the next ``---`` (or ``...``) is parsed with PyYAML's
safe loader. Its keys become columns (lower-cased, other characters as ``_``), so searches can
filter on them (``{"status": "accepted"}``); ``title`` becomes the document's title; the block
itself never reaches the chunk text. Values are normalised here (dates as ISO text, mappings as
JSON text, lists as lists of text); the writer picks each new column's type from its values.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

_BLOCK = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
# Columns the indexer owns: a front-matter key with one of these names is stored as "meta_<name>".
RESERVED = {"id", "path", "title", "chunk", "text", "hash", "file_size", "file_mtime", "file_hash", "vector",
            "heading", "line_start", "line_end"}


class FrontMatterError(ValueError):
    """The block is not valid YAML or not a mapping."""


def split(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, the text after it). No block: ({}, text)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    match = _BLOCK.match(text)
    if not match:
        return {}, text
    import yaml

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    return data, text[match.end():]


def column_name(key: Any) -> str:
    name = re.sub(r"[^0-9a-z_]", "_", str(key).strip().lower()).strip("_") or "field"
    if name[0].isdigit():
        name = f"f_{name}"
    return f"meta_{name}" if name in RESERVED else name


def normalise(value: Any) -> Any:
    """A YAML value as something Arrow can store: scalars as they are, dates as ISO text,
    lists as lists of text, mappings as JSON text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple, set)):
        items = [normalise(v) for v in value]
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in items]
    if isinstance(value, dict):
        return json.dumps({str(k): normalise(v) for k, v in value.items()}, ensure_ascii=False, sort_keys=True)
    return str(value)


def columns(meta: dict[str, Any]) -> dict[str, Any]:
    """Front matter as {column name: normalised value}, without the title (it has its own column)."""
    return {column_name(k): normalise(v) for k, v in meta.items() if str(k).strip().lower() != "title"}
