"""MCP argument completions (issue 24): ``table``, ``source``/``pathPrefix``, filter columns and their
values, for the resource templates (the spec completes those and prompts, not tool arguments)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import PromptReference, ResourceTemplateReference

from lancelot_cli.server.app import build_server
from lancelot_cli.server.links import SEARCH_TEMPLATE, TEMPLATE
from lancelot_cli.settings import load

pytestmark = pytest.mark.anyio


def _server(db: Path | None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "LANCEDB_PATH"}
    return build_server(load(environ={**env, **({"LANCEDB_PATH": str(db)} if db else {})}))


async def _complete(client: Client, uri: str, name: str, value: str, **given: str) -> Any:
    ref = ResourceTemplateReference(type="ref/resource", uri=uri)
    return (await client.complete(ref, {"name": name, "value": value}, given or None)).completion


async def test_tables_folders_documents_columns_and_values_are_completed(vector_db: Path) -> None:
    async with Client(_server(vector_db)) as client:
        tables = await _complete(client, TEMPLATE, "table", "")
        top = await _complete(client, SEARCH_TEMPLATE, "pathPrefix", "")
        under = await _complete(client, TEMPLATE, "source", "pol")
        deeper = await _complete(client, TEMPLATE, "source", "policies/r")
        columns = await _complete(client, SEARCH_TEMPLATE, "column", "")
        chunks = await _complete(client, SEARCH_TEMPLATE, "value", "", column="chunk")
        other = await _complete(client, SEARCH_TEMPLATE, "table", "text")
        advertised = client.server_capabilities.completions
    assert advertised is not None
    assert tables.values == ["documents", "textonly"] and tables.total == 2 and not tables.has_more
    assert top.values == ["README.md", "faq.txt", "glossary.html", "guides/", "policies/"]
    assert under.values == ["policies/"]
    assert deeper.values == ["policies/refunds.md"]
    assert "chunk" in columns.values and "path" in columns.values
    assert not {"text", "id", "title", "heading", "vector", "hash"} & set(columns.values)
    assert chunks.values == ["0"]
    assert other.values == ["textonly"]


async def test_the_search_template_reads_a_narrowed_search(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        read = await client.read_resource("lancelot://search/refund?pathPrefix=policies/&column=chunk&value=0")
    reply = json.loads(read.contents[0].text)
    assert reply["hits"] and all(h["source"].startswith("policies/") for h in reply["hits"])


async def test_nothing_to_complete_is_an_empty_answer_not_an_error(sample_db: Path) -> None:
    async with Client(_server(None)) as client:  # no database configured
        none = await _complete(client, TEMPLATE, "table", "")
    async with Client(_server(sample_db)) as client:
        unknown = await _complete(client, TEMPLATE, "query", "x")
        asked = PromptReference(type="ref/prompt", name="x")
        prompt = (await client.complete(asked, {"name": "a", "value": ""})).completion
        missing = await _complete(client, TEMPLATE, "source", "", table="missing")
    assert none.values == unknown.values == prompt.values == missing.values == []
