"""Facts the tests share about the tool surface (one place to change when a tool is added)."""

TOOLS = {"lancedb_search", "lancedb_query", "lancedb_document", "lancedb_status", "lancedb_version"}
