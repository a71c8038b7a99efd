"""One JSON form for replies, shared by the MCP tools and `--json`, so both print the same bytes.

``to_wire`` turns a model into the camelCase dict agents read, derived from the model (models.py):
its fields in order (key order is part of the contract: the golden test pins it), each by the one
naming rule unless its metadata says otherwise (wire_rules.py); ``to_json`` prints it compactly.
``from_wire`` reads such a dict back by the same rules.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from lancelot_cli import models as m
from lancelot_cli.wire_rules import PLAIN, Rule, rule, wire_key, wire_name

__all__ = ["compact", "from_wire", "json_safe", "to_json", "to_wire", "wire_name"]

T = TypeVar("T")


def to_json(data: Any) -> str:
    """A model (or a dict/list of them) as its reply's JSON text."""
    return compact(to_wire(data))


def compact(data: Any) -> str:
    """Wire data as JSON text: compact, UTF-8 kept as is (fewer tokens for an agent, still valid for
    `jq`); also how the CLI prints a reply the background server sent (already wire data)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def to_wire(value: Any) -> Any:
    """A model (or a dict/list of them) as JSON-safe data; anything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _model(value)
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    return value


def json_safe(value: Any) -> Any:
    """Values read from a table -> JSON-safe values (dates as ISO text, bytes as base64)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return str(value)


def _model(value: Any) -> dict[str, Any]:
    """A model as its JSON object: its fields in order, each by its wire rule (wire_rules.py)."""
    data: dict[str, Any] = {}
    for name, key, how in _plan(type(value)):
        item = getattr(value, name)
        if how is PLAIN:  # most fields: no rule to apply
            data[key] = _value(item)
            continue
        if (how.omit == "none" and item is None) or (how.omit == "empty" and not item):
            continue
        data[key] = m.echo(item) if how.echo else _value(item)
        if how.last:
            break
    return data


def _value(item: Any) -> Any:
    """A field's value as JSON: a model as its object, a tuple as a list, a mapping (read from a
    table: dates, bytes) JSON-safe, anything else as it is."""
    kind = type(item)
    if kind in _SCALARS:  # most values: checked first, a reply has thousands
        return item
    if kind in _PLANS:
        return _model(item)
    if isinstance(item, (tuple, list)):
        return [_value(v) for v in item]
    if isinstance(item, Mapping):
        return json_safe(dict(item))
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return _model(item)
    return item


_SCALARS = frozenset({str, int, float, bool, type(None)})
_PLANS: dict[type, tuple[tuple[str, str, Rule], ...]] = {}


def _plan(model: type) -> tuple[tuple[str, str, Rule], ...]:
    """A model's sent fields, each with its wire name and rule (read once per model)."""
    found = _PLANS.get(model)
    if found is None:
        fields = dataclasses.fields(model)
        found = _PLANS[model] = tuple((f.name, wire_key(f), rule(f)) for f in fields if not rule(f).hidden)
    return found


# -- back from the wire: what the CLI renders when the background server answered (background/client.py) --


def from_wire(model: type[T], data: Mapping[str, Any], **given: Any) -> T:
    """A reply's JSON as ``model``, read field by field by wire name (nested models and tuples too);
    a key the JSON leaves out keeps the field's default (None when its rule left it out for being
    None), a computed field (a count) is computed again; ``given`` fields are taken as they are
    (a search's whole query, which its reply echoes capped)."""
    values = dict(given)
    for f, hint in _fields(model):
        name = wire_key(f)
        if not f.init or f.name in values:
            continue
        if name in data:
            values[f.name] = _decoded(hint, data[name])
        elif rule(f).omit == "none":  # left out because None (a field with no default: a listing's pathPrefix)
            values[f.name] = None
    return model(**values)


def _decoded(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:  # X | None
        return _decoded(args[0], value)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return from_wire(hint, value)
    if origin is tuple:
        return tuple(_decoded(args[0], item) for item in value)
    return value


_FIELDS: dict[Any, tuple[tuple[dataclasses.Field[Any], Any], ...]] = {}


def _fields(model: Any) -> tuple[tuple[dataclasses.Field[Any], Any], ...]:
    """A model's fields with their resolved types (read once per model)."""
    found = _FIELDS.get(model)
    if found is None:
        hints = typing.get_type_hints(model)
        found = _FIELDS[model] = tuple((f, hints[f.name]) for f in dataclasses.fields(model))
    return found
