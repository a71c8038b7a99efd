"""Each read request is defined once (lancelot_cli/requests.py): the CLI, the MCP tools' schemas and
the background client build, publish and send that one object, and read its reply back.

Also the option added through it alone: `perDocument` on lancedb_query / `query --per-document`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from lancelot_cli import requests
from lancelot_cli.cli.app import app
from lancelot_cli.limits import MAX_PHRASINGS
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from lancelot_cli.wire import to_wire, wire_name

SECTIONS = 6


@pytest.fixture(scope="module")
def one_long_document(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table where one document holds most of what a question finds (six sections on widgets)."""
    from lancelot_cli.indexer import index_folder

    root = tmp_path_factory.mktemp("long")
    docs = root / "docs"
    docs.mkdir()
    sections = "\n\n".join(
        f"## Widget part {n}\n\nThe widget assembly step {n} fastens the widget frame. " + "Filler words here. " * 40
        for n in range(SECTIONS)
    )
    (docs / "widgets.md").write_text(f"# Widgets\n\n{sections}\n", encoding="utf-8")
    for n in range(25):  # enough others that the cap, not a shortage of hits, decides
        (docs / f"other{n}.md").write_text(f"# Other {n}\n\nA widget frame is mentioned once.\n", encoding="utf-8")
    db = root / "db"
    index_folder(docs, str(db))
    return db


def test_wire_names_follow_one_rule() -> None:
    assert [wire_name(n) for n in ("query", "per_document", "context_budget", "search_type")] == [
        "query",
        "perDocument",
        "contextBudget",
        "searchType",
    ]


def test_the_published_default_is_the_engines() -> None:
    from lancelot_cli.engine.ranking import PER_DOCUMENT

    assert requests.PER_DOCUMENT == PER_DOCUMENT


@pytest.mark.parametrize("request_type", requests.TOOL_REQUESTS)
def test_a_request_round_trips_through_its_arguments(request_type: type[requests.Request[object]]) -> None:
    names = [f.name for f in dataclasses.fields(request_type)]
    given = {"query": "q", "question": "q", "source": "a.md", "limit": 5, "verbose": True, "per_document": 0}
    asked = request_type(**{k: v for k, v in given.items() if k in names})
    assert request_type.from_arguments(asked.arguments()) == asked


@pytest.mark.anyio
async def test_the_tools_publish_their_request_types_fields(sample_db: Path) -> None:
    """Each tool's parameters are its request's fields by wire name, in order; `queries`'s maxItems
    is the phrasing limit (it was a copy, 6, in lancedb_query's schema)."""
    settings = load(environ={**os.environ, "LANCEDB_PATH": str(sample_db)})
    async with Client(build_server(settings)) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    for request_type in requests.TOOL_REQUESTS:
        properties = tools[str(request_type.tool)]["properties"]
        assert list(properties) == [wire_name(f.name) for f in dataclasses.fields(request_type)]
    assert tools["lancedb_search"]["properties"]["queries"]["maxItems"] == MAX_PHRASINGS
    assert tools["lancedb_query"]["properties"]["queries"]["maxItems"] == MAX_PHRASINGS
    assert tools["lancedb_query"]["properties"]["perDocument"]["default"] == requests.PER_DOCUMENT


def _sources(context: str) -> list[str]:
    return re.findall(r"^source: (\S+)", context, flags=re.MULTILINE)


def test_query_per_document_in_the_cli(one_long_document: Path) -> None:
    """`query --per-document 0` puts every matching chunk of one document in the context; by
    default at most 2 (the search's cap). Fails before the option existed (usage error)."""

    def sources(*extra: str) -> list[str]:
        args = ["query", "widget frame", "--db", str(one_long_document), "--json", *extra]
        result = CliRunner().invoke(app, args, prog_name="lancelot")
        assert result.exit_code == 0, result.output
        return _sources(json.loads(result.stdout)["context"])

    assert sources().count("widgets.md") == 2
    assert sources("--per-document", "0").count("widgets.md") == SECTIONS
    assert sources("--per-document", "1").count("widgets.md") == 1
    result = CliRunner().invoke(app, ["query", "x", "--per-document", "-1", "--db", str(one_long_document)])
    assert result.exit_code == 2


@pytest.mark.anyio
async def test_query_per_document_in_the_tool(one_long_document: Path) -> None:
    settings = load(environ={**os.environ, "LANCEDB_PATH": str(one_long_document)})
    async with Client(build_server(settings)) as client:
        every = await client.call_tool("lancedb_query", {"question": "widget frame", "perDocument": 0})
        capped = await client.call_tool("lancedb_query", {"question": "widget frame"})
        refused = await client.call_tool("lancedb_query", {"question": "widget frame", "perDocument": -1})
    assert _sources(every.content[0].text).count("widgets.md") == SECTIONS
    assert _sources(capped.content[0].text).count("widgets.md") == 2
    assert refused.is_error and "perDocument must be an integer from 0 to 200" in refused.content[0].text


def test_the_background_client_sends_what_the_request_holds(one_long_document: Path) -> None:
    """What background/client.py sends is ``arguments()``: set fields only, by wire name; the reply
    it gets back reads into the model the engine returns in-process."""
    from lancelot_cli.engine import Engine

    asked = requests.Query("widget frame", per_document=0, limit=3)
    assert asked.arguments() == {"question": "widget frame", "warmStart": False, "limit": 3, "perDocument": 0}
    local = asked.ask(Engine(load(environ={**os.environ, "LANCEDB_PATH": str(one_long_document)})))
    assert asked.reply_from_wire(to_wire(local)) == local
