"""Tool calls several tests make, and reading a tool result's text (one place to change when a
tool or a parameter is added)."""

from __future__ import annotations

from typing import Any

# Every tool, with good and bad arguments (bad ones must come back as tool errors, not crashes):
# used by the read-only proofs over stdio, HTTP and in-process.
ALL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("lancedb_search", {"query": "refund policy"}),
    ("lancedb_search", {"query": "refund", "searchType": "text", "limit": 3}),
    ("lancedb_search", {"query": "refund", "searchType": "vector"}),
    ("lancedb_search", {"query": "refund", "searchType": "hybrid"}),
    ("lancedb_search", {"query": "refund", "searchType": "fuzzy"}),
    ("lancedb_search", {"query": "refund", "limit": 0}),
    ("lancedb_search", {"query": "refund", "limit": 201}),
    ("lancedb_search", {"query": "refund", "table": "missing"}),
    ("lancedb_search", {"query": "refund", "textColumn": "nope"}),
    ("lancedb_search", {"query": "x' OR '1'='1"}),
    ("lancedb_search", {"query": "refund", "pathPrefix": "policies/", "filters": {"chunk": 0}}),
    ("lancedb_search", {"query": "refund", "filters": {"path": "x' OR '1'='1"}}),
    ("lancedb_search", {}),
    ("lancedb_query", {"question": "how do refunds work?"}),
    ("lancedb_query", {"question": "anything", "warmStart": True, "contextBudget": 1000}),
    ("lancedb_query", {"question": "refund", "contextBudget": 5}),
    ("lancedb_query", {"question": "refund", "table": "../../etc"}),
    ("lancedb_document", {"source": "policies/refunds.md"}),
    ("lancedb_document", {"id": "policies/refunds.md#0", "before": 0, "after": 1}),
    ("lancedb_document", {"source": "nope.md"}),
    ("lancedb_document", {"source": "../../etc/passwd"}),
    ("lancedb_status", {}),
    ("lancedb_status", {"verbose": True}),
    ("lancedb_version", {}),
    ("lancedb_version", {"extra": 1}),
    ("lancedb_drop_table", {"table": "documents"}),
]


def text_of(result: Any) -> str:
    """The text parts of an MCP tool result (``CallToolResult``), joined."""
    return "".join(part.text for part in result.content if getattr(part, "type", "") == "text")
