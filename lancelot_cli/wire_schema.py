"""A reply model's published shape: the TypedDict a tool's ``outputSchema`` is made from.

Derived from the model as ``wire.to_wire`` is (wire_rules.py): the same keys in the same order, a
key the codec may leave out ``NotRequired``, a field ``published=False`` left out (the schema allows
extra properties), a field never sent absent. Types as an agent needs them: a Literal as its base
type (the enum of search types is the tool's input schema's business; tools/list is read in every
session), a tuple as a list, a nested model as its own TypedDict.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, NotRequired


@functools.cache
def published(model: type) -> Any:
    """The TypedDict of ``model``'s reply (the SDK's pydantic makes the schema from it)."""
    from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

    from lancelot_cli.wire_rules import rule, wire_key

    hints = typing.get_type_hints(model)
    keys: dict[str, Any] = {}
    for f in dataclasses.fields(model):
        how = rule(f)
        if how.hidden or not how.published:
            continue
        hint = hints[f.name]
        if how.omit is not None:  # left out rather than sent as null or empty
            keys[wire_key(f)] = NotRequired[_shown(_without_none(hint))]
        else:
            keys[wire_key(f)] = _shown(hint)
    return TypedDict(model.__name__, keys)  # type: ignore[operator]


def _without_none(hint: Any) -> Any:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        return args[0]
    return hint


def _shown(hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return published(hint)
    if origin is typing.Literal:
        return type(args[0])
    if origin is tuple:
        return list[_shown(args[0])]  # type: ignore[misc]
    if origin in (Mapping, dict):
        return dict[str, Any]
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(lambda a, b: a | b, (_shown(a) for a in args))
    return hint
