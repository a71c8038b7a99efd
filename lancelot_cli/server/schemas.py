"""Output schemas of the tools (published as ``outputSchema``); the replies are ``wire.to_wire`` of
the engine's models, whose key order the golden test pins."""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict


class SearchHit(TypedDict):
    id: str
    score: float
    matched: float
    title: str
    source: str
    snippet: str
    metadata: dict[str, Any]


class SearchReply(TypedDict):
    query: str
    table: str
    searchType: str
    ranking: str
    note: NotRequired[str]
    count: int
    hits: list[SearchHit]


class Connection(TypedDict):
    path: str | None
    ok: bool
    error: NotRequired[str]


class StatusReply(TypedDict):
    connection: Connection
    tables: list[dict[str, Any]]
    embeddings: dict[str, Any]
    defaults: dict[str, Any]


class VersionReply(TypedDict):
    name: str
    version: str
    mcpProtocolVersion: str | None
    features: dict[str, Any]
