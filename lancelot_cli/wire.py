"""One JSON form for replies, shared by the MCP tools and `--json`, so both print the same bytes.

``to_wire`` turns a model into the camelCase dict agents read (key order is part of the contract:
the golden test pins it); ``to_json`` prints it compactly. A query or question is echoed capped
(``models.echo``): the agent sent it and need not pay for it twice.
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

T = TypeVar("T")


def to_json(data: Any) -> str:
    """Compact JSON, UTF-8 kept as is (fewer tokens for an agent, still valid for `jq`)."""
    return json.dumps(to_wire(data), ensure_ascii=False, separators=(",", ":"))


def to_wire(value: Any) -> Any:
    """A model (or a dict/list of them) as JSON-safe data; anything else as it is."""
    convert = _CONVERTERS.get(type(value))
    if convert is not None:
        return convert(value)
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


def _with(data: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return {**data, **{k: v for k, v in optional.items() if v is not None}}


def _hit(hit: m.Hit) -> dict[str, Any]:
    data = {
        "id": hit.id,
        "score": hit.score,
        "matched": hit.matched,
        **({"strength": hit.strength} if hit.strength is not None else {}),
        "title": hit.title,
        "source": hit.source,
        "snippet": hit.snippet,
        "metadata": {k: json_safe(v) for k, v in hit.metadata.items()},
    }
    return _with(
        data,
        ranks=dict(hit.ranks) if hit.ranks is not None else None,
        foundBy=list(hit.found_by) if hit.found_by is not None else None,
    )


def _search(result: m.SearchResult) -> dict[str, Any]:
    data = _with(
        {
            "query": m.echo(result.query),
            "table": result.table,
            "searchType": result.search_type,
            "ranking": result.ranking,
        },
        note=result.note,
        noGoodMatch=True if result.no_good_match else None,  # sent only when true: a token per hit saved
        folders=dict(result.folders) if result.folders else None,
    )
    return {**data, "count": result.count, "hits": [_hit(h) for h in result.hits]}


def _context(block: m.ContextBlock) -> dict[str, Any]:
    data = _with(
        {
            "question": m.echo(block.question),
            "table": block.table,
            "mode": block.mode,
            "searchType": block.search_type,
            "ranking": block.ranking,
        },
        note=block.note,
    )
    return {
        **data,
        "budget": block.budget,
        "included": block.included,
        "leftOut": block.left_out,
        "context": block.context,
    }


def _document(doc: m.Document) -> dict[str, Any]:
    return {
        "source": doc.source,
        "title": doc.title,
        "table": doc.table,
        "chunks": doc.chunks,
        "first": doc.first,
        "last": doc.last,
        "included": doc.included,
        "cut": doc.cut,
        "budget": doc.budget,
        "context": doc.context,
    }


def _listing(listing: m.DocumentList) -> dict[str, Any]:
    return {
        **_with({"table": listing.table}, pathPrefix=listing.path_prefix),
        "count": len(listing.documents),
        "documents": [
            _with({"source": d.source, "chunks": d.chunks}, size=d.size) | {"title": d.title} for d in listing.documents
        ],
    }


def _agent(agent: m.AgentDocument) -> dict[str, Any]:
    return {"name": agent.name, "title": agent.title, "source": agent.source}


def _table(entry: m.TableStatus) -> dict[str, Any]:
    if entry.error is not None:
        return {"name": entry.name, "error": entry.error}
    data = {
        "name": entry.name,
        **_with({}, search=entry.search),
        "rows": entry.rows,
        **({"languages": list(entry.languages)} if entry.languages else {}),
        "version": entry.version,
        "updatedAt": entry.updated_at,
        "fullTextIndex": bool(entry.fts_columns),
        "fullTextColumns": list(entry.fts_columns),
        "vectors": [
            {"column": v.column, "dimension": v.dimension, "model": v.model, "missing": v.missing}
            for v in entry.vectors
        ],
    }
    return _with(
        data,
        embeddingModel=entry.embedding_model,
        indexedAt=entry.indexed_at,
        fullTextCoverage=dict(entry.fts_coverage) if entry.fts_coverage is not None else None,
        columns=list(entry.columns) if entry.columns is not None else None,
    )


def _connection(conn: m.Connection) -> dict[str, Any]:
    return _with(
        {"path": conn.path, "ok": conn.ok},
        store=conn.store,
        consistencySeconds=conn.consistency_seconds,
        error=conn.error,
    )


def _status(status: m.Status) -> dict[str, Any]:
    emb, d = status.embeddings, status.defaults
    return {
        "connection": _connection(status.connection),
        "tables": [_table(t) for t in status.tables],
        "embeddings": {
            "available": emb.available,
            "keySource": emb.key_source,
            "model": emb.model,
            "dimensions": emb.dimensions,
            "baseUrl": emb.base_url,
        },
        "defaults": {
            "table": d.table,
            "textColumn": d.text_column,
            "vectorColumn": d.vector_column,
            "limit": d.limit,
            "contextBudget": d.context_budget,
        },
    }


def _version(version: m.Version) -> dict[str, Any]:
    return {
        "name": version.name,
        "version": version.version,
        "mcpProtocolVersion": version.mcp_protocol_version,
        "mcpProtocolVersions": list(version.mcp_protocol_versions),
        "features": {
            "transports": list(version.transports),
            "searchTypes": list(version.search_types),
            "textRanking": list(version.text_rankings),
            "vectorSearch": True,
            "hybrid": True,
            "readOnly": True,
        },
    }


_CONVERTERS: dict[type, Any] = {
    m.Hit: _hit,
    m.SearchResult: _search,
    m.ContextBlock: _context,
    m.Document: _document,
    m.AgentDocument: _agent,
    m.DocumentList: _listing,
    m.TableStatus: _table,
    m.Status: _status,
    m.Version: _version,
}


# -- back from the wire: what the CLI renders when the background server answered (background/client.py) --


def wire_name(name: str) -> str:
    """The one rule from a Python name to its wire name (``per_document`` -> ``perDocument``); a
    model field whose wire name is another says so in its metadata (``{"wire": "fullTextColumns"}``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def from_wire(model: type[T], data: Mapping[str, Any], **given: Any) -> T:
    """A reply's JSON as ``model``, read field by field by wire name (nested models and tuples too);
    a key the JSON leaves out keeps the field's default; ``given`` fields are taken as they are
    (a search's whole query, which its reply echoes capped)."""
    values = dict(given)
    for f, hint in _fields(model):
        name = f.metadata.get("wire") or wire_name(f.name)
        if f.name not in values and name in data:
            values[f.name] = _decoded(hint, data[name])
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
