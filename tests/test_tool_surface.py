"""What an agent pays for and reads: the size of `tools/list`, argument errors it can act on, and
replies that never waste a token (a long query is not echoed whole, the best chunk is cut to fit
rather than dropped, one chunk numbering everywhere, default replies within a token budget).

Reply-size budgets are checked here on the bundled sample; the per-tool figures (and a doc site)
are printed by ``tests/benchmarks/reply_tokens.py``.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import REPO, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.expected import TOOLS
from tests.support.servers import free_port, spawn_serve

# Characters of the whole `tools/list` result as sent (issue 14; lancedb_query's perDocument, issue 48,
# fitted by saying lancedb_status's description shorter).
TOOLS_LIST_BUDGET = 6000
# Default replies on the sample, in tokens (characters / 4), measured 2026-11-30 by
# tests/benchmarks/reply_tokens.py: search 652, query 870, document 242, status 142, version 62.
# The budgets leave ~30 % headroom, so a reply that grows past one is a decision, not a drift.
REPLY_TOKEN_BUDGETS = {
    "lancedb_search": 850,
    "lancedb_query": 1150,
    "lancedb_document": 320,
    "lancedb_status": 190,
    "lancedb_version": 85,
}
DEFAULT_CALLS: dict[str, dict[str, Any]] = {
    "lancedb_search": {"query": "how do refunds work?"},
    "lancedb_query": {"question": "how do refunds work?"},
    "lancedb_document": {"source": "policies/refunds.md"},
    "lancedb_status": {},
    "lancedb_version": {},
}


def _server(db: Path) -> Any:
    return build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))


async def _call(db: Path, name: str, arguments: dict[str, Any]) -> Any:
    async with Client(_server(db)) as client:
        return await client.call_tool(name, arguments)


def _stdio_lines(db: Path, messages: list[dict[str, Any]], tmp_path: Path) -> list[str]:
    """Raw JSON-RPC over `lancelot serve`'s stdio: the reply lines exactly as sent, one per request."""
    env = subprocess_env(
        LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(tmp_path), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring"
    )
    payload = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.Popen(
        [*lancelot_command(), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(payload)
        proc.stdin.flush()
        wanted = sum(1 for m in messages if "id" in m)
        lines = [proc.stdout.readline() for _ in range(wanted)]
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return [line.rstrip("\n") for line in lines]


HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


# -- the tool list ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_tools_list_as_sent_fits_the_budget(sample_db: Path, tmp_path: Path) -> None:
    _, listed = _stdio_lines(sample_db, [*HANDSHAKE, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}], tmp_path)
    result = json.loads(listed)["result"]
    assert {tool["name"] for tool in result["tools"]} == TOOLS
    size = len(json.dumps(result, ensure_ascii=False, separators=(",", ":")))
    assert len(listed) <= TOOLS_LIST_BUDGET, f"tools/list is {len(listed)} characters as sent (result {size})"


@pytest.mark.anyio
async def test_tools_list_in_the_2026_protocol_fits_the_budget_too(sample_db: Path) -> None:
    """The modern protocol's result also carries the server's info in ``_meta`` and cache hints."""
    async with Client(_server(sample_db)) as client:
        listed = await client.list_tools()
    size = len(
        json.dumps(
            listed.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False, separators=(",", ":")
        )
    )
    assert size <= TOOLS_LIST_BUDGET, f"tools/list result is {size} characters"


@pytest.mark.anyio
async def test_every_parameter_is_described_once_without_schema_noise(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        text = json.dumps(tool.input_schema)
        assert '"title"' not in text and '"type": "null"' not in text and '"default": null' not in text, tool.name
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
            if schema.get("type") == "integer":
                assert "minimum" in schema, f"{tool.name}.{name} states no range"
        # Which tool when: every description names at least one sibling.
        assert any(other in tool.description for other in TOOLS - {tool.name}), tool.name
    # filters is published as a plain object whose description shows the values it takes (the anyOf of
    # its value union cost 190 characters of tools/list, issue 38); the server still checks each value.
    by_name = {t.name: t.input_schema["properties"] for t in tools}
    assert by_name["lancedb_search"]["filters"]["type"] == "object"
    assert '{"kind": "adr"' in by_name["lancedb_search"]["filters"]["description"]
    assert by_name["lancedb_query"]["filters"] == {"type": "object", "description": "As in lancedb_search."}


@pytest.mark.anyio
async def test_structured_content_is_valid_against_the_published_output_schema(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        calls = [
            ("lancedb_search", {"query": "refund"}),
            ("lancedb_search", {"query": "?!"}),
            ("lancedb_search", {"query": "refund", "searchType": "vector"}),
            ("lancedb_status", {}),
            ("lancedb_version", {}),
        ]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, text_of(result)
            assert result.structured_content == json.loads(text_of(result))
            if schemas[name] is not None:
                jsonschema.validate(result.structured_content, schemas[name])
    assert schemas["lancedb_search"] is not None


# -- errors an agent can act on --------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("lancedb_search", {"query": "x", "limit": "ten"}, 'limit must be an integer from 1 to 200; got "ten"'),
    ("lancedb_search", {"query": "x", "limit": 0}, "limit must be an integer from 1 to 200; got 0"),
    (
        "lancedb_search",
        {"query": "x", "searchType": "fuzzy"},
        'searchType must be one of auto, text, vector, hybrid; got "fuzzy"',
    ),
    ("lancedb_search", {"query": "x", "filters": ["kind"]}, "filters must be an object of column: value"),
    ("lancedb_search", {"query": "x", "filters": {"kind": {"a": 1}}}, 'got {"kind": {"a": 1}}'),
    ("lancedb_search", {"query": "x", "table": 5}, "table must be a string of at most 200 characters; got 5"),
    ("lancedb_search", {"query": "x", "textColumn": []}, "textColumn must be a string; got []"),
    ("lancedb_search", {"query": "x", "pathPrefix": 3}, "pathPrefix must be a string; got 3"),
    ("lancedb_search", {}, "query is required (a string)"),
    ("lancedb_query", {"question": "x", "contextBudget": 5}, "contextBudget must be an integer of at least 200; got 5"),
    ("lancedb_query", {"question": "x", "warmStart": "maybe"}, 'warmStart must be true or false; got "maybe"'),
    ("lancedb_query", {"question": "x", "limit": 500}, "limit must be an integer from 1 to 200; got 500"),
    ("lancedb_document", {"id": "a#1", "before": -1}, "before must be an integer from 0 to 200; got -1"),
    ("lancedb_document", {"id": "a#1", "after": 1.5}, "after must be an integer from 0 to 200; got 1.5"),
    ("lancedb_document", {"source": "a.md", "contextBudget": "big"}, "contextBudget must be an integer of at least"),
    (
        "lancedb_document",
        {"source": "policies/refunds.md", "id": "policies/refunds.md#0"},
        "give source (a whole document) or id (the chunks around a hit), not both",
    ),
    ("lancedb_status", {"verbose": [1]}, "verbose must be true or false; got [1]"),
    # An argument the tool does not take is named, not dropped in silence.
    (
        "lancedb_search",
        {"query": "x", "limt": 5, "top_k": 3},
        "unknown parameters limt, top_k; this tool takes: query, limit, searchType, table,",
    ),
    ("lancedb_query", {"question": "x", "query": "x"}, "unknown parameter query; this tool takes: question,"),
    ("lancedb_status", {"verbosity": 2}, "unknown parameter verbosity; this tool takes: verbose"),
    ("lancedb_version", {"extra": 1}, "unknown parameter extra; this tool takes: no parameters"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "arguments", "expected"), BAD_ARGUMENTS)
async def test_a_rejected_argument_is_one_line_naming_it(
    sample_db: Path, name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await _call(sample_db, name, arguments)
    text = text_of(result)
    assert result.is_error
    assert expected in text
    assert "\n" not in text and "pydantic" not in text and "validation error" not in text, text
    assert text.startswith(f"Error executing tool {name}: ")


@pytest.mark.anyio
async def test_two_rejected_arguments_are_named_once_each(sample_db: Path) -> None:
    text = text_of(await _call(sample_db, "lancedb_search", {"query": "x", "limit": "ten", "filters": 7}))
    assert text.count("limit must") == 1 and text.count("filters must") == 1 and "\n" not in text


@pytest.mark.slow
def test_a_rejected_argument_is_one_line_over_stdio(sample_db: Path, tmp_path: Path) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "lancedb_search", "arguments": {"query": "x", "limit": "ten"}},
    }
    _, reply = _stdio_lines(sample_db, [*HANDSHAKE, call], tmp_path)
    result = json.loads(reply)["result"]
    assert result["isError"] is True
    assert [c["text"] for c in result["content"]] == [
        'Error executing tool lancedb_search: limit must be an integer from 1 to 200; got "ten"'
    ]


@pytest.mark.slow
def test_a_rejected_argument_is_one_line_over_http(sample_db: Path, tmp_path: Path) -> None:
    port = free_port()
    env = subprocess_env(
        LANCEDB_PATH=str(sample_db),
        LANCELOT_CONFIG_DIR=str(tmp_path),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    served = spawn_serve(lancelot_command(), ["--http", str(port)], port, tmp_path / "http", env)
    try:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "lancedb_query", "arguments": {"question": "x", "contextBudget": 5}},
            }
        )
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "POST",
            "/mcp",
            body=body,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        response = conn.getresponse()
        result = json.loads(response.read())["result"]
        conn.close()
    finally:
        served.stop()
    assert result["isError"] is True
    assert [c["text"] for c in result["content"]] == [
        "Error executing tool lancedb_query: contextBudget must be an integer of at least 200; got 5"
    ]


# -- replies that never waste a token --------------------------------------------------------------


@pytest.mark.anyio
async def test_a_long_query_is_echoed_capped_and_says_so(sample_db: Path) -> None:
    query = "refund " * 570  # 3,990 characters: under the 4,000 a query may have (limits.MAX_PHRASING_CHARS)
    search = await _call(sample_db, "lancedb_search", {"query": query, "limit": 1})
    echoed = search.structured_content["query"]
    assert echoed == query[:200] + f"… ({len(query):,} characters)"
    assert len(text_of(search)) < 2500
    context = text_of(await _call(sample_db, "lancedb_query", {"question": query, "contextBudget": 1000}))
    assert context.splitlines()[0] == f"# Context for: {query[:200]}… ({len(query):,} characters)"
    too_long = await _call(sample_db, "lancedb_search", {"query": "refund " * 5000, "limit": 1})  # 35,000
    assert too_long.is_error and "over the 4,000" in text_of(too_long) and len(text_of(too_long)) < 600


@pytest.mark.anyio
async def test_query_cuts_the_best_chunk_to_fit_instead_of_dropping_it(sample_db: Path) -> None:
    roomy = text_of(await _call(sample_db, "lancedb_query", {"question": "how do refunds work?"}))
    assert "## [1] Refund policy\nsource: policies/refunds.md" in roomy  # the best chunk
    for budget in (700, 400, 300):
        text = text_of(
            await _call(sample_db, "lancedb_query", {"question": "how do refunds work?", "contextBudget": budget})
        )
        assert len(text) <= budget
        assert "## [1] Refund policy\nsource: policies/refunds.md" in text, text
        assert re.search(r"… \[cut to fit: [\d,]+ of [\d,]+ characters\]", text), text


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One document of eight ~1,000-character chunks (``manual.md#0`` .. ``#7``)."""
    from lancelot_cli.indexer import index_folder

    root = tmp_path_factory.mktemp("surface-docs")
    parts = [f"## Part {n}\n\n" + " ".join(f"Step {n}.{k} checks valve {n}." for k in range(40)) for n in range(8)]
    (root / "manual.md").write_text("# Pump manual\n\n" + "\n\n".join(parts) + "\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("surface-db") / "db"
    index_folder(root, str(db))
    return db


def _next(text: str) -> int:
    found = re.search(r"next: manual\.md#(\d+)", text)
    assert found, text
    return int(found.group(1))


@pytest.mark.anyio
async def test_document_cuts_the_first_chunk_to_fit_and_next_moves_forward(long_db: Path) -> None:
    whole = text_of(await _call(long_db, "lancedb_document", {"source": "manual.md", "contextBudget": 100000}))
    assert "all 8 chunks" in whole
    for budget in (200, 500, 1200, 1500):
        text = text_of(await _call(long_db, "lancedb_document", {"source": "manual.md", "contextBudget": budget}))
        assert len(text) <= budget
        # Never an empty reply: the first chunk's start ("# Pump manual\n\n## Part 0 ...") is there.
        assert text.split("\n\n", 1)[1].startswith("# Pump manual\n\n##"), text
        assert budget < 500 or "Step 0.0 checks valve 0." in text, text
        assert _next(text) >= 1, text  # past the chunk shown (or cut)
    # Windows: the chunk asked for is shown even when its neighbours do not fit, and next moves on.
    for budget in (300, 1200):
        text = text_of(
            await _call(
                long_db, "lancedb_document", {"id": "manual.md#5", "before": 2, "after": 2, "contextBudget": budget}
            )
        )
        assert "Step 5.0 checks valve 5." in text, text
        assert _next(text) == 6, text


@pytest.mark.anyio
async def test_chunks_are_numbered_from_0_like_ids_in_labels_and_next(long_db: Path) -> None:
    one = text_of(await _call(long_db, "lancedb_document", {"id": "manual.md#3", "before": 0, "after": 0}))
    assert one.splitlines()[1] == "source: manual.md · chunk #3 of 8"
    assert "Step 3.0 checks valve 3." in one and "Step 2.0" not in one
    window = text_of(await _call(long_db, "lancedb_document", {"id": "manual.md#3", "before": 1, "after": 1}))
    assert window.splitlines()[1] == "source: manual.md · chunks #2–#4 of 8"
    assert "Step 2.0" in window and "Step 4.39" in window and "Step 5.0" not in window
    cut = text_of(
        await _call(long_db, "lancedb_document", {"id": "manual.md#3", "before": 1, "after": 3, "contextBudget": 2500})
    )
    last_shown = max(int(n) for n in re.findall(r"Step (\d)\.0 ", cut))
    assert _next(cut) == last_shown + 1, cut


@pytest.mark.slow
def test_show_labels_match_ids_in_the_cli(long_db: Path) -> None:
    proc = subprocess.run(
        [*lancelot_command(), "show", "manual.md#3", "--before", "0", "--after", "0", "--json", "--db", str(long_db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(),
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)
    assert (reply["first"], reply["last"]) == (3, 3)
    assert "chunk #3 of 8" in reply["context"]


# -- default replies stay within a token budget ----------------------------------------------------


@pytest.mark.anyio
async def test_default_replies_on_the_sample_stay_within_their_token_budgets(sample_db: Path) -> None:
    async with Client(_server(sample_db)) as client:
        for name, arguments in DEFAULT_CALLS.items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error, text_of(result)
            tokens = len(text_of(result)) // 4
            assert tokens <= REPLY_TOKEN_BUDGETS[name], f"{name}: {tokens} tokens > {REPLY_TOKEN_BUDGETS[name]}"
