"""Argument completions (MCP ``completion/complete``) for the resource templates of server/links.py:
``table`` (the database's tables), ``source`` and ``pathPrefix`` (the next folder or document under
what was typed), ``column`` (what a filter can test) and ``value`` (the values of the ``column``
chosen before). The MCP spec completes prompt and resource-template arguments only, so a tool's own
arguments cannot be completed; the search template carries the same ones for that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import Completion, ResourceTemplateReference

from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.server import links

COMPLETED = {links.TEMPLATE: {"table", "source"}, links.SEARCH_TEMPLATE: {"table", "pathPrefix", "column", "value"}}


def register(server: MCPServer, get_engine: Callable[[], Engine]) -> None:
    """Add the completion handler to ``server``."""

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        if not isinstance(ref, ResourceTemplateReference) or argument.name not in COMPLETED.get(ref.uri, ()):
            return None  # no values: the SDK answers an empty completion
        given = dict(getattr(context, "arguments", None) or {})

        def values() -> tuple[list[str], int]:
            try:
                return get_engine().complete(argument.name, argument.value, given.get("table"), given.get("column"))
            except LancelotError:  # no database, no such table: nothing to offer, the tools explain
                return [], 0

        found, total = await anyio.to_thread.run_sync(values)
        return Completion(values=found, total=total, has_more=total > len(found))
