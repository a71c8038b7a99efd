"""Start a server command over stdio with the mcp SDK's client, from synchronous test code."""

from __future__ import annotations

import anyio
from mcp import Client, StdioServerParameters

from tests.conftest import subprocess_env


def list_tools_over_stdio(command: str, args: list[str], env: dict[str, str]) -> list[str]:
    """The tool names the server started by ``command args`` (with ``env`` on top of the test's
    environment) lists, in its order."""

    async def listed() -> list[str]:
        params = StdioServerParameters(command=command, args=args, env=subprocess_env(**env))
        async with Client(params) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(listed)
