"""The MCP protocol revisions this build speaks, read without importing the whole SDK."""

from __future__ import annotations


def protocol_version() -> str:
    """The newest revision (2026-07-28 with mcp 2.x: no initialize handshake, ``server/discover``)."""
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    return str(LATEST_PROTOCOL_VERSION)


def supported_versions() -> tuple[str, ...]:
    """Every revision a client may speak to Lancelot, newest first: the SDK's stateless revisions and
    the handshake-era ones (initialize), over stdio, HTTP and the Lambda handler alike."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    return tuple(sorted({*MODERN_PROTOCOL_VERSIONS, *HANDSHAKE_PROTOCOL_VERSIONS}, reverse=True))
