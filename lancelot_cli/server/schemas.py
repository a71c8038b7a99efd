"""What the tools publish and how a rejected argument is worded.

The search tool's output schema (``outputSchema``; the replies are ``wire.to_wire`` of the engine's models, whose key
order the golden test pins); ``slim``, which strips the SDK's pydantic schemas down to what an agent
needs (``tools/list`` is read in every conversation); and ``argument_problems``, one line per call
naming each rejected parameter, what was given and what is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from lancelot_cli.models import SearchResult
from lancelot_cli.wire_schema import published

# The search tool's outputSchema, derived from the reply model by the codec's own rules
# (wire_schema.py): the keys and their order are what to_wire sends; fields marked unpublished
# ("folders", a hit's "foundBy") are left out (extra properties are allowed): tools/list is read in
# every session.
SearchReply = published(SearchResult)


# --- What `tools/list` publishes: the SDK's pydantic schemas without the noise --------------------


def slim(schema: Any) -> Any:
    """A JSON schema without what costs an agent tokens and tells it nothing: ``title`` everywhere,
    ``additionalProperties: true`` (the default), ``anyOf [X, null]`` with ``default: null`` on
    optional parameters (null is still accepted by the server; it just is not advertised), and
    ``integer`` next to ``number`` in a union. Unions stay ``anyOf`` of single types: a ``type``
    list is shorter but less portable (the MCP Inspector's lint warns that single-type dialects,
    such as Gemini's, reject it)."""
    if isinstance(schema, list):
        return [slim(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: slim(v)
        for k, v in schema.items()
        if not (k == "title" and isinstance(v, str)) and not (k == "additionalProperties" and v is True)
    }
    if "properties" in schema:  # "title" may also be a property's *name*: keep those
        out["properties"] = {name: slim(value) for name, value in schema["properties"].items()}
    optional = out.get("default", ...) is None
    if optional:  # "default: null" says only that the parameter may be left out, as "required" does
        out.pop("default")
    options = out.get("anyOf")
    if isinstance(options, list):
        if optional:
            options = [o for o in options if o != {"type": "null"}]
        if {"type": "number"} in options:  # every integer is a number
            options = [o for o in options if o != {"type": "integer"}]
        out.pop("anyOf")
        out = {**options[0], **out} if len(options) == 1 else {"anyOf": options, **out}
    return out


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``{"$ref": "#/$defs/X"}`` replaced by X (the output schemas use each once)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
            return walk(defs[ref[8:]])
        return {k: walk(v) for k, v in node.items() if k != "$defs"}

    return walk(schema)


# --- Arguments the schema rejects, worded for an agent -------------------------------------------

MAX_GOT_CHARS = 60  # a rejected 40 KB value is named, not echoed


def allowed(schema: dict[str, Any]) -> str:
    """What a parameter's schema allows, in words: "an integer from 1 to 200", "one of a, b"."""
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        return f"an integer of at least {low}" if low is not None else "an integer"
    if kind == "boolean":
        return "true or false"
    if kind == "object":
        return 'an object of column: value (a string, number or boolean, or a list of them), e.g. {"kind": "adr"}'
    if kind == "string":
        return f"a string of at most {schema['maxLength']} characters" if "maxLength" in schema else "a string"
    if kind == "array":
        items = allowed(schema.get("items", {})).removeprefix("a ").removeprefix("an ")
        count = f"at most {schema['maxItems']} " if "maxItems" in schema else ""
        return f"a list of {count}{items}s" if items != "valid value" else f"a list of {count}values"
    return "a valid value"


def _got(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_GOT_CHARS else f"{text[:MAX_GOT_CHARS]}… ({len(text)} characters)"


def argument_problems(
    errors: Sequence[Mapping[str, Any]], input_schema: dict[str, Any], arguments: dict[str, Any]
) -> str:
    """One line for the pydantic errors of a tool call: each parameter named once, with what it
    allows and what was given (``limit must be an integer from 1 to 200; got "ten"``)."""
    properties = input_schema.get("properties", {})
    problems: dict[str, str] = {}
    for error in errors:
        name = str(error["loc"][0]) if error.get("loc") else "arguments"
        if name in problems:  # a union reports each alternative: one line per parameter is enough
            continue
        if name not in properties:
            problems[name] = unknown_arguments([name], input_schema) or ""
        elif error.get("type") == "missing":
            problems[name] = f"{name} is required ({allowed(properties[name])})"
        else:
            given = arguments.get(name, error.get("input"))  # the whole value, not the nested part pydantic names
            problems[name] = f"{name} must be {allowed(properties[name])}; got {_got(given)}"
    return ". ".join(problems.values())


def unknown_arguments(names: list[str], input_schema: dict[str, Any]) -> str | None:
    """A line naming the arguments the tool does not take, and the ones it does; None if all are
    known. A misspelt ``limt`` or another tool's ``top_k`` would otherwise be dropped in silence."""
    properties = input_schema.get("properties", {})
    unknown = [name for name in names if name not in properties]
    if not unknown:
        return None
    shown = ", ".join(
        name if len(name) <= MAX_GOT_CHARS else f"{name[:MAX_GOT_CHARS]}… ({len(name):,} characters)"
        for name in unknown
    )
    plural = "s" if len(unknown) > 1 else ""
    return f"unknown parameter{plural} {shown}; this tool takes: {', '.join(properties) or 'no parameters'}"
