"""The MCP protocol version this build speaks, read without importing the whole SDK."""

from __future__ import annotations


def protocol_version() -> str:
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    return str(LATEST_PROTOCOL_VERSION)
