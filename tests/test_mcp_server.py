"""The MCP server as clients see it: the SDK's in-memory client for the fast cases, a spawned
`lancelot serve` over stdio for the real thing, raw JSON-RPC for the stdout rule, and the
read-only proof (every database file hashed before and after every tool)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import REPO, hash_tree, lancelot_command, subprocess_env
from tests.support.calls import ALL_CALLS
from tests.support.calls import text_of as _text
from tests.support.embed_server import MODEL
from tests.support.expected import TOOLS


def _server(db: Path | str | None, **env: str) -> Any:
    values = {"LANCEDB_PATH": str(db)} if db is not None else {}
    values.update(env)
    return build_server(load(environ={**os.environ, **values}))


# -- tool surface --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_tools_are_the_read_only_ones_with_their_schemas(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
        # Meaningful only when readOnlyHint is false (MCP spec), so not sent: never "destructive".
        assert tool.annotations.destructive_hint is not True
        assert "read-only" in tool.description.lower()
    search = tools["lancedb_search"].input_schema["properties"]
    assert tools["lancedb_search"].input_schema["required"] == ["query"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"], search["limit"]["default"]) == (1, 200, 20)
    assert search["searchType"]["enum"] == ["auto", "text", "vector", "hybrid"]
    assert search["searchType"]["default"] == "auto"
    assert {"table", "textColumn", "vectorColumn", "pathPrefix", "filters"} <= set(search)
    query = tools["lancedb_query"].input_schema["properties"]
    asked = {
        "question",
        "contextBudget",
        "warmStart",
        "table",
        "limit",
        "pathPrefix",
        "filters",
        "queries",
        "perDocument",
    }
    assert set(query) == asked
    document = tools["lancedb_document"].input_schema["properties"]
    assert set(document) == {"source", "id", "before", "after", "page", "contextBudget", "table"}
    assert "lancedb_search" in tools["lancedb_document"].description
    assert query["contextBudget"]["default"] == 8000
    assert set(tools["lancedb_status"].input_schema["properties"]) == {"verbose"}
    assert tools["lancedb_version"].input_schema.get("properties", {}) == {}
    # Each description tells the agent when to use a sibling instead.
    assert "lancedb_query" in tools["lancedb_search"].description
    assert "lancedb_search" in tools["lancedb_query"].description
    assert "lancedb_version" in tools["lancedb_status"].description
    assert tools["lancedb_search"].output_schema is not None


@pytest.mark.anyio
async def test_defaults_in_schemas_follow_settings(sample_db: Path) -> None:
    server = _server(sample_db, LANCEDB_DEFAULT_LIMIT="7", LANCEDB_CONTEXT_BUDGET="1234", LANCEDB_TABLE="docs2")
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["lancedb_search"].input_schema["properties"]["limit"]["default"] == 7
    assert tools["lancedb_search"].input_schema["properties"]["table"]["default"] == "docs2"
    assert tools["lancedb_query"].input_schema["properties"]["contextBudget"]["default"] == 1234


@pytest.mark.anyio
async def test_instructions_name_the_tables(sample_db: Path, tmp_path: Path) -> None:
    async with Client(_server(sample_db)) as client:
        assert "Tables: documents." in client.instructions
        assert "read-only" in client.instructions
    async with Client(_server(None)) as client:
        assert "LANCEDB_PATH" in client.instructions


# -- calls ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_search_reply_is_json_text_and_the_same_structured_content(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        result = await client.call_tool("lancedb_search", {"query": "lost parcel claim form", "limit": 5})
    assert not result.is_error
    reply = json.loads(_text(result))
    assert reply == result.structured_content
    assert reply["searchType"] == "text" and reply["ranking"] == "bm25"
    assert reply["count"] == len(reply["hits"]) <= 5
    assert reply["hits"][0]["source"] == "policies/shipping.md"
    fields = {"id", "score", "matched", "title", "source", "snippet", "metadata"}
    assert all(set(hit) >= fields for hit in reply["hits"])


@pytest.mark.anyio
async def test_query_returns_one_markdown_block_within_budget(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        result = await client.call_tool(
            "lancedb_query", {"question": "how are refunds for online orders paid?", "contextBudget": 1500}
        )
        overview = await client.call_tool("lancedb_query", {"question": "", "warmStart": True})
    text = _text(result)
    assert not result.is_error
    assert result.structured_content is None  # the contract is one Markdown block
    assert text.startswith("# Context for: how are refunds")
    assert len(text) <= 1500
    assert "source: " in text
    assert _text(overview).startswith("# Overview")
    assert "source: README.md" in _text(overview)


@pytest.mark.anyio
async def test_status_and_version(sample_db: Path) -> None:
    import lancelot_cli

    async with Client(_server(sample_db)) as client:
        status = (await client.call_tool("lancedb_status", {"verbose": True})).structured_content
        version = (await client.call_tool("lancedb_version", {})).structured_content
    assert status["connection"] == {"path": str(sample_db), "ok": True, "store": "local", "consistencySeconds": 0.0}
    (table,) = status["tables"]
    assert table["name"] == "documents" and table["rows"] > 0 and table["fullTextIndex"] is True
    assert "text" in table["columns"]
    assert status["embeddings"]["available"] is False
    assert version["version"] == lancelot_cli.__version__
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", version["mcpProtocolVersion"])


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": "x", "limit": 0}, "limit must be an integer from 1 to 200; got 0"),
        ({"query": "x", "limit": 201}, "limit must be an integer from 1 to 200; got 201"),
        ({"query": "x", "table": "missing"}, "tables here: documents"),
        ({"query": "x", "textColumn": "body"}, "its columns are: id, path, title"),
        ({"query": "x", "searchType": "fuzzy"}, 'searchType must be one of auto, text, vector, hybrid; got "fuzzy"'),
    ],
)
async def test_bad_arguments_are_tool_errors_with_a_next_step(sample_db: Path, arguments: dict, expected: str) -> None:
    async with Client(_server(sample_db)) as client:
        result = await client.call_tool("lancedb_search", arguments)
    assert result.is_error
    assert expected in _text(result)


@pytest.mark.anyio
async def test_missing_database_is_reported_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "db"
    async with Client(_server(missing)) as client:
        search = await client.call_tool("lancedb_search", {"query": "x"})
        status = await client.call_tool("lancedb_status", {})
    assert search.is_error and "does not exist" in _text(search)
    assert status.structured_content["connection"]["ok"] is False
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.anyio
async def test_vector_and_hybrid_through_the_real_openai_client(vector_env, vector_db: Path) -> None:
    async with Client(_server(vector_db)) as client:
        hybrid = (await client.call_tool("lancedb_search", {"query": "refund store credit"})).structured_content
        vector = (
            await client.call_tool("lancedb_search", {"query": "refund store credit", "searchType": "vector"})
        ).structured_content
    assert hybrid["searchType"] == "hybrid" and hybrid["ranking"] == "rrf"
    assert vector["searchType"] == "vector" and vector["ranking"] == "distance"
    scores = [hit["score"] for hit in vector["hits"]]
    assert scores == sorted(scores)
    assert vector_env.requests == 2
    assert all("vector" not in hit["metadata"] for hit in vector["hits"] + hybrid["hits"])


@pytest.mark.anyio
async def test_filters_narrow_before_ranking_and_resist_hostile_values(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:

        async def sources(arguments: dict) -> list[str]:
            result = await client.call_tool("lancedb_search", {"query": "refund", "limit": 50, **arguments})
            assert not result.is_error, _text(result)
            return [hit["source"] for hit in result.structured_content["hits"]]

        everything = await sources({})
        assert any(not s.startswith("policies/") for s in everything)
        policies = await sources({"pathPrefix": "policies/"})
        assert policies and all(s.startswith("policies/") for s in policies)
        # Prefiltering: a folder whose documents rank low overall still gets its hits.
        guides = await sources({"pathPrefix": "guides/"})
        assert guides and all(s.startswith("guides/") for s in guides)
        assert await sources({"filters": {"path": ["faq.txt", "glossary.html"]}}) == [
            s for s in everything if s in {"faq.txt", "glossary.html"}
        ]
        for hostile in ("x' OR '1'='1", "') OR 1=1 --", "policies/%", "ünïcødé ✓", '"; DROP TABLE documents; --'):
            assert await sources({"filters": {"path": hostile}}) == []
            assert await sources({"pathPrefix": hostile}) == []
        bad = await client.call_tool("lancedb_search", {"query": "refund", "filters": {"kind": "adr"}})
        assert bad.is_error and "its columns are: id, path" in _text(bad)


@pytest.mark.anyio
async def test_document_reads_whole_documents_and_windows_within_budget(tmp_path: Path) -> None:
    from lancelot_cli.indexer import index_folder

    src = tmp_path / "src"
    src.mkdir()
    paragraphs = [f"Paragraph {n} says marker{n:02d} " + "and more words " * 12 for n in range(50)]
    (src / "long.md").write_text("# Long document\n\n" + "\n\n".join(paragraphs))
    db = tmp_path / "db"
    index_folder(src, str(db), chunk_size=200)
    async with Client(_server(db)) as client:
        whole = _text(await client.call_tool("lancedb_document", {"source": "long.md", "contextBudget": 100000}))
        window = _text(await client.call_tool("lancedb_document", {"id": "long.md#10", "before": 1, "after": 2}))
        small = _text(await client.call_tool("lancedb_document", {"source": "long.md", "contextBudget": 1500}))
        missing = await client.call_tool("lancedb_document", {"source": "nope.md"})
    positions = [whole.index(f"marker{n:02d}") for n in range(50)]
    assert positions == sorted(positions)  # every paragraph, in order
    assert whole.startswith("# Long document\nsource: long.md · all ")
    assert "chunks #9–#12 of" in window  # numbered from 0, like the ids: #10 with one before, two after
    assert len(small) <= 1500 and "more chunks cut to fit the budget" in small and "marker00" in small
    assert missing.is_error and "lancedb_search" in _text(missing)


# -- read-only proof -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_no_tool_changes_any_database_file(vector_env, vector_db: Path, sample_db: Path) -> None:
    for db in (sample_db, vector_db):
        before = hash_tree(db)
        async with Client(_server(db, EMBEDDING_MODEL=MODEL)) as client:
            for name, arguments in ALL_CALLS:
                await client.call_tool(name, arguments)
        assert hash_tree(db) == before, f"a tool changed files under {db}"


def test_server_code_has_no_write_calls() -> None:
    """Source scan: the read side (server, engine, reader) never calls a LanceDB write method."""
    # Unambiguous LanceDB write methods on any receiver; the generic names (add, delete, update)
    # only on table- or database-like receivers, so a set's .add() is not taken for a write.
    writes = re.compile(
        r"\.(create_table|merge_insert|create_index|create_fts_index|create_scalar_index|optimize|"
        r"drop_table|drop_index|cleanup_old_versions|compact_files|rename_table|add_columns|"
        r"drop_columns|alter_columns|update_field_metadata|restore)\("
        r"|\b(?:_?table|tbl|_?db|self\._table|self\._db)\.(?:add|delete|update)\("
    )
    storage = REPO / "lancelot_cli" / "storage"
    read_side = [
        *sorted((REPO / "lancelot_cli" / "server").glob("*.py")),
        *sorted((REPO / "lancelot_cli" / "engine").glob("*.py")),
        *sorted((storage / "read").glob("*.py")),
    ]
    offenders = [
        f"{path.name}:{n}"
        for path in read_side
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if writes.search(line.split("#")[0])
    ]
    assert offenders == []


@pytest.mark.slow
def test_server_entry_point_never_loads_a_write_path(sample_db: Path, tmp_path: Path) -> None:
    """Build the server, call every tool in a fresh interpreter, and look at what got imported."""
    script = textwrap.dedent(f"""
        import sys, anyio
        from mcp import Client
        import lancelot_cli.server.transports.stdio
        from lancelot_cli.server.app import build_server
        from lancelot_cli.settings import load

        async def main():
            async with Client(build_server(load())) as client:
                for name, args in {ALL_CALLS!r}:
                    await client.call_tool(name, args)
        anyio.run(main)
        print("\\n".join(sorted(sys.modules)))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path)),
    )
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.split())
    assert "lancedb" in loaded  # the tools really ran
    # (watchfiles is not on the list: the SDK's uvicorn imports it for its reloader.)
    forbidden = [
        m
        for m in loaded
        if m.startswith(
            (
                "lancelot_cli.indexer",
                "lancelot_cli.storage.write",
                "lancelot_cli.cli",
                "questionary",
                "trafilatura",
            )
        )
    ]
    assert forbidden == []


# -- a real process over stdio --------------------------------------------------------------------


def _stdio_params(db: Path, config: Path, **env: str) -> StdioServerParameters:
    command = lancelot_command()
    return StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve"],
        env=subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(config), **env),
    )


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_spawned_server_over_stdio(mode: str, sample_db: Path, tmp_path: Path) -> None:
    before = hash_tree(sample_db)
    async with Client(_stdio_params(sample_db, tmp_path), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(tool.annotations.read_only_hint for tool in tools.values())
        search = await client.call_tool("lancedb_search", {"query": "MAX_SAVED", "limit": 3})
        query = await client.call_tool("lancedb_query", {"question": "gift cards", "contextBudget": 2000})
        status = await client.call_tool("lancedb_status", {})
        version = await client.call_tool("lancedb_version", {})
        bad = await client.call_tool("lancedb_search", {"query": "x", "limit": 0})
    assert json.loads(_text(search))["hits"][0]["source"] == "guides/stock-counts.md"
    assert "gift card" in _text(query).lower() and len(_text(query)) <= 2000
    assert status.structured_content["tables"][0]["name"] == "documents"
    assert version.structured_content["name"] == "lancelot"
    assert bad.is_error
    assert hash_tree(sample_db) == before


NOISY_SITECUSTOMIZE = """
import logging, os, sys, threading, time

def noisy():
    # Wait until the server has started importing lancedb (the transport owns stdout by then).
    while "lancedb" not in sys.modules:
        time.sleep(0.005)
    for _ in range(5):
        print("a library prints to stdout")                     # buffered, never flushed
        sys.stdout.write("and writes to sys.stdout\\n")
        print("a flushed print", flush=True)
        sys.__stdout__.write("and to sys.__stdout__\\n")
        for level in (5, 10, 20, 30, 40, 50):
            logging.getLogger("noisy.library").log(level, "log line at level %s", level)
        time.sleep(0.02)
    open(os.environ["NOISY_DONE"], "w").close()  # the test waits for this before it ends the server

threading.Thread(target=noisy, daemon=True).start()
"""


@pytest.mark.slow
def test_stdout_carries_only_mcp_messages(sample_db: Path, tmp_path: Path) -> None:
    """Raw JSON-RPC over a real process while a library prints and logs: every stdout line must be
    a JSON-RPC message, stderr gets the noise, and the server exits 0 when stdin closes."""
    (tmp_path / "sitecustomize.py").write_text(NOISY_SITECUSTOMIZE)
    done = tmp_path / "noisy-done"
    env = subprocess_env(
        LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path), LANCELOT_LOG_LEVEL="silly", NOISY_DONE=str(done)
    )
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.Popen(
        [*lancelot_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive() -> dict:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        return json.loads(line)

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert receive()["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n, (name, arguments) in enumerate(ALL_CALLS[:4] + ALL_CALLS[9:], start=2):
            send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
            reply = receive()
            assert reply["id"] == n and "result" in reply
        deadline = time.monotonic() + 30
        while not done.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # until the noisy thread has finished its rounds
        assert done.exists(), "the noisy thread did not finish"
        proc.stdin.close()
        proc.wait(timeout=30)
        rest, errors = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
    for line in rest.decode().splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert proc.returncode == 0
    noise = errors.decode()
    assert "a flushed print" in noise and "log line at level 50" in noise


@pytest.mark.slow
def test_serve_with_a_missing_database_folder_starts_and_explains(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"

    async def main() -> tuple[str, bool]:
        async with Client(_stdio_params(missing, tmp_path)) as client:
            result = await client.call_tool("lancedb_search", {"query": "x"})
            return _text(result), result.is_error

    text, is_error = anyio.run(main)
    assert is_error and "does not exist" in text and "LANCEDB_PATH" in text
    assert not missing.exists()
