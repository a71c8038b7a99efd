"""The MCP SDK's floor for roundtrip.py: a stdio MCPServer that does no search.

    python tests/benchmarks/echo_server.py REPLIES.json

Two tools: ``hello`` answers "hi" (the SDK's cost of a call with a tiny reply), and
``lancedb_search(query)`` answers the reply that ``lancelot serve`` gave for that query, recorded
in REPLIES.json (``{query: CallToolResult as JSON}``) with the same output schema, slimmed as
lancelot lists it (``LancelotServer.list_tools``), so the client validates the same
structured content. What a ``lancedb_search`` call to this server costs is what the SDK's two
sides and the pipes cost to carry lancelot's reply; a real call's time beyond that and beyond
the in-process search is lancelot's own server code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, Tool

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from lancelot_cli.server.schemas import SearchReply, inline_defs, slim  # noqa: E402


class EchoServer(MCPServer):
    async def list_tools(self) -> list[Tool]:
        return [
            tool.model_copy(
                update={
                    "input_schema": slim(tool.input_schema),
                    "output_schema": slim(inline_defs(tool.output_schema)) if tool.output_schema else None,
                }
            )
            for tool in await super().list_tools()
        ]


def build(replies: dict[str, Any]) -> MCPServer:
    server = EchoServer("echo")
    recorded = {query: CallToolResult.model_validate(reply) for query, reply in replies.items()}

    @server.tool()
    def hello() -> str:
        return "hi"

    @server.tool()
    def lancedb_search(query: str) -> Annotated[CallToolResult, SearchReply]:
        return recorded[query]

    return server


if __name__ == "__main__":
    build(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))).run()
