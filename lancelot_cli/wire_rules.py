"""How a reply model's field goes on the wire, said once, in the field's metadata.

A model in models.py is its reply's shape: ``wire.to_wire`` sends its fields in their order, each by
``wire_name`` of its Python name (``search_type`` -> ``searchType``). A field whose wire form breaks
that says so with ``field(metadata=sent(...))``: another name, left out when None or when empty, echoed
capped, never sent, or the reply's last key when set. ``wire.from_wire`` reads the same rules back,
and ``wire_schema`` makes a tool's output schema from them.
So a new reply field is a field in models.py and the code that fills it; the codec is not touched.

Standard library only: models.py imports it, and the warm CLI path imports models.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

Omit = Literal["none", "empty"]

KEY = "wire"  # a field's metadata key holding its Rule


@dataclass(frozen=True)
class Rule:
    name: str | None = None  # the wire name, when ``wire_name`` of the Python name is not it
    omit: Omit | None = None  # "none": left out when None; "empty": when None, false or empty (a token saved)
    echo: bool = False  # sent as ``models.echo`` of it: what the caller sent, capped
    hidden: bool = False  # never sent (a hit's whole text, kept for packing)
    last: bool = False  # when sent, the fields after it are not (an unreadable table: its name and error)
    published: bool = True  # False: sent, but left out of a tool's outputSchema (wire_schema.py)


PLAIN = Rule()


def sent(
    name: str | None = None,
    *,
    omit: Omit | None = None,
    echo: bool = False,
    hidden: bool = False,
    last: bool = False,
    published: bool = True,
) -> dict[str, Rule]:
    """A field's wire rule, as ``dataclasses.field(metadata=...)`` takes it."""
    return {KEY: Rule(name, omit, echo, hidden, last, published)}


def rule(f: dataclasses.Field[Any]) -> Rule:
    """The wire rule of a model's field (``PLAIN`` when its metadata says none)."""
    found = f.metadata.get(KEY)
    return found if isinstance(found, Rule) else PLAIN


def wire_name(name: str) -> str:
    """The one rule from a Python name to its wire name (``per_document`` -> ``perDocument``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_key(f: dataclasses.Field[Any]) -> str:
    """A field's wire name: its rule's, else ``wire_name`` of its Python name."""
    return rule(f).name or wire_name(f.name)
