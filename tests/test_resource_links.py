"""Documents as MCP resources (issue 24): a search reply links each hit's document as
``lancelot://doc/{+source}{?table}``, the template reads it from the database, and
``lancedb_document`` takes the same URI as its source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from lancelot_cli.server.app import build_server
from lancelot_cli.server.links import doc_uri, parse_doc_uri
from lancelot_cli.settings import load
from tests.support.calls import text_of

pytestmark = pytest.mark.anyio


def _server(db: Path) -> object:
    return build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))


async def test_search_links_each_hit_document_once_and_the_link_reads_it(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        templates = (await client.list_resource_templates()).resource_templates
        result = await client.call_tool("lancedb_search", {"query": "refund", "perDocument": 0})
        assert result.structured_content is not None
        links = [part for part in result.content if part.type == "resource_link"]
        sources = list(dict.fromkeys(h["source"] for h in result.structured_content["hits"]))
        assert [link.name for link in links] == sources  # one per document, in rank order
        first = links[0]
        assert first.uri == "lancelot://doc/policies/refunds.md" and first.mime_type == "text/markdown"
        assert first.title == "Refund policy"
        read = await client.read_resource(first.uri)
        document = await client.call_tool("lancedb_document", {"source": first.uri})
    assert [t.uri_template for t in templates] == [
        "lancelot://doc/{+source}{?table}",
        "lancelot://search/{query}{?table,pathPrefix,column,value}",
    ]
    (content,) = read.contents
    assert content.text.startswith("# Refund policy\nsource: policies/refunds.md")
    assert text_of(document) == content.text  # the document tool answers the link too


async def test_a_missing_document_is_a_resource_error_saying_what_to_do(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        with pytest.raises(MCPError, match=r"no document 'nope\.md'.*use lancedb_search"):
            await client.read_resource("lancelot://doc/nope.md")


def test_uris_keep_slashes_encode_the_rest_and_name_a_table_only_when_not_the_default() -> None:
    assert doc_uri("a b/c?.md", "documents", "documents") == "lancelot://doc/a%20b/c%3F.md"
    assert doc_uri("x.md", "notes", "documents") == "lancelot://doc/x.md?table=notes"
    assert parse_doc_uri("lancelot://doc/a%20b/c%3F.md") == ("a b/c?.md", None)
    assert parse_doc_uri("lancelot://doc/x.md?table=notes") == ("x.md", "notes")
    assert parse_doc_uri("policies/refunds.md") is None


async def test_a_link_into_another_table_names_it_and_reads_from_it(vector_db: Path) -> None:
    async with Client(_server(vector_db)) as client:
        result = await client.call_tool(
            "lancedb_search", {"query": "refund", "table": "textonly", "searchType": "text"}
        )
        link = next(part for part in result.content if part.type == "resource_link")
        assert link.uri == "lancelot://doc/policies/refunds.md?table=textonly"
        read = await client.read_resource(link.uri)
    assert read.contents[0].text.startswith("# Refund policy")
