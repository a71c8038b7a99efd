"""What one request can make the server send back is bounded (issue 37 #7): a resource URI or a
prompt name of 1 MB is not echoed whole in the error, and a context budget has an upper bound (a
100 MB budget built a 100 MB reply). Real server, in-memory client; the CLI through its runner."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.limits import MAX_BUDGET
from lancelot_cli.server.app import build_server
from lancelot_cli.server.replies import MAX_ERROR_CHARS
from lancelot_cli.settings import load
from tests.support.calls import text_of

HUGE = 1_000_000
BOUND = MAX_ERROR_CHARS + 100  # the cut marker adds a few characters


def _server(db: Path) -> Any:
    return build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))


@pytest.mark.anyio
@pytest.mark.parametrize("uri", ["lancelot://documents/" + "a" * HUGE, "lancelot://nothing/" + "b" * HUGE])
async def test_an_unknown_huge_resource_uri_is_not_echoed_whole(sample_db: Path, uri: str) -> None:
    async with Client(_server(sample_db)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert len(caught.value.message) <= BOUND and len(str(caught.value.data)) <= BOUND
    assert caught.value.message.startswith("Unknown resource: lancelot://")


@pytest.mark.anyio
async def test_a_huge_prompt_name_is_not_echoed_whole(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("p" * HUGE)
    assert len(caught.value.message) <= BOUND and "1,000,000 characters" in caught.value.message


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("lancedb_query", {"question": "refund", "contextBudget": 100_000_000}),
        ("lancedb_document", {"source": "policies/refunds.md", "contextBudget": 100_000_000}),
    ],
)
async def test_a_context_budget_has_an_upper_bound(sample_db: Path, tool: str, arguments: dict[str, Any]) -> None:
    async with Client(_server(sample_db)) as client:
        refused = await client.call_tool(tool, arguments)
        allowed = await client.call_tool(tool, {**arguments, "contextBudget": MAX_BUDGET})
    assert refused.is_error and f"{MAX_BUDGET:,}" in text_of(refused), text_of(refused)
    assert not allowed.is_error


def test_the_cli_budget_has_the_same_bound(sample_db: Path) -> None:
    result = CliRunner().invoke(
        app, ["query", "refund", "--db", str(sample_db), "--budget", str(MAX_BUDGET + 1)], env={"LANCELOT_WARM": "0"}
    )
    assert result.exit_code == 2 and "--budget" in result.output
