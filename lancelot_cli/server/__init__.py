"""The read-only MCP server. Every ``mcp`` import lives in this package."""
