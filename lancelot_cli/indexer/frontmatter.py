"""YAML front matter of Markdown files: split it off the text, and turn it into table columns.

The block between a first line ``---`` and the next ``---`` (or ``...``) is parsed with PyYAML's
safe loader. Its keys become columns (lower-cased, other characters as ``_``), so searches can
filter on them (``{"status": "accepted"}``); ``title`` becomes the document's title; the block
itself never reaches the chunk text. Values are normalised here (dates as ISO text, mappings as
JSON text, lists as lists of text); the writer picks each new column's type from its values.

Front matter is bounded before anything is built from it: YAML aliases let 300 bytes expand to
gigabytes (``&a [...]`` / ``[*a, *a, ...]`` seven levels deep), so the node graph is composed
first (aliases stay shared there, so composing is cheap) and measured as it would expand; a block
over the limits below is an error, and the file is skipped with that reason.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from lancelot_cli.storage.schema import COLUMNS, VECTOR

_BLOCK = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
# Columns the indexer owns: a front-matter key with one of these names is stored as "meta_<name>".
RESERVED = frozenset({*COLUMNS, VECTOR})

# What one block of front matter may hold, aliases expanded. Far above real front matter (a few
# keys, some tags), far below what hurts: its values are stored on every chunk row of the file.
MAX_BLOCK_CHARS = 64 * 1024  # the block as written
MAX_NODES = 20_000  # keys, values and list items
MAX_TEXT_CHARS = 256 * 1024  # characters of all keys and values
MAX_DEPTH = 16  # lists and mappings inside each other


class FrontMatterError(ValueError):
    """The block is not valid YAML or not a mapping."""


def split(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, the text after it). No block: ({}, text)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    match = _BLOCK.match(text)
    if not match:
        return {}, text
    block = match.group(1)
    if len(block) > MAX_BLOCK_CHARS:
        raise FrontMatterError(f"front matter is longer than {MAX_BLOCK_CHARS:,} characters")
    data = _load(block)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    return data, text[match.end() :]


def _load(block: str) -> Any:
    """The block's value, built only after its node graph passed ``_measure``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(block)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    except RecursionError:  # the pure-Python composer recurses per level (libyaml stops at 1,000)
        raise FrontMatterError("front matter is nested too deeply") from None
    finally:
        loader.dispose()


def _measure(root: Any) -> None:
    """Raise ``FrontMatterError`` when the graph, aliases expanded, passes a limit. Each node is
    measured once (aliases share nodes), so this takes time in the size of the block, not of the
    expansion; a node that contains itself (``&a [*a]``) is refused."""
    import yaml

    done: dict[int, tuple[int, int, int]] = {}  # id -> (nodes, characters, depth) expanded
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in done:
            continue
        if isinstance(node, yaml.ScalarNode):
            done[key] = (1, len(node.value), 0)
            continue
        kids = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
        if not children_done:
            if key in open_nodes:
                raise FrontMatterError("front matter refers to itself (a YAML alias inside its own anchor)")
            open_nodes.add(key)
            stack.append((node, True))
            for kid in kids:
                if id(kid) in open_nodes:
                    raise FrontMatterError("front matter refers to itself (a YAML alias inside its own anchor)")
                stack.append((kid, False))
            continue
        open_nodes.discard(key)
        nodes = 1 + sum(done[id(k)][0] for k in kids)
        chars = sum(done[id(k)][1] for k in kids)
        depth = 1 + max((done[id(k)][2] for k in kids), default=0)
        if nodes > MAX_NODES:
            raise FrontMatterError(
                f"front matter expands to more than {MAX_NODES:,} keys and values "
                f"(YAML aliases repeat what they point at)"
            )
        if chars > MAX_TEXT_CHARS:
            raise FrontMatterError(
                f"front matter expands to more than {MAX_TEXT_CHARS:,} characters "
                f"(YAML aliases repeat what they point at)"
            )
        if depth > MAX_DEPTH:
            raise FrontMatterError(f"front matter nests lists and mappings more than {MAX_DEPTH} deep")
        done[key] = (nodes, chars, depth)


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
