"""Golden replies: the exact bytes of `--json` and of the MCP tools on the bundled sample.

Pins what a refactor must not change: `lancelot search/query/show/status/version --json` (stdout and
exit code; error *messages* on stderr are free to improve) and each MCP tool's reply (text content,
structuredContent, is_error) through the SDK's in-memory client. Only truly volatile parts are
normalised: the tmp database path, the loopback embedder's URL, timestamps, table versions, latencies
and the package version.

Regenerate after an intended change with ``LANCELOT_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff of ``tests/golden/*.json``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from lancelot_cli._version import __version__
from lancelot_cli.cli.app import app

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("LANCELOT_UPDATE_GOLDEN") == "1"

# (name, argv after `lancelot`); the database is passed with --db.
CLI_CASES: list[tuple[str, list[str]]] = [
    ("search-default", ["search", "refund policy"]),
    ("search-text-limit", ["search", "refund", "--type", "text", "--limit", "3"]),
    ("search-vector-fallback", ["search", "refund", "--type", "vector"]),
    ("search-filter-prefix", ["search", "refund", "--path-prefix", "policies/", "-f", "chunk=0"]),
    ("search-filter-any", ["search", "order", "-f", "chunk=0", "-f", "chunk=1"]),
    ("search-identifier", ["search", "MAX_SAVED DEC-0054 createClient"]),
    ("search-stop-words", ["search", "the of and"]),
    ("search-no-words", ["search", "?!"]),
    ("search-missing-table", ["search", "refund", "--table", "missing"]),
    ("search-bad-filter", ["search", "refund", "-f", "nope=1"]),
    ("query-question", ["query", "how do refunds work?"]),
    ("query-warm-start", ["query", "anything", "--warm-start", "-b", "1000"]),
    ("query-tight-budget", ["query", "refund", "-b", "200"]),
    ("query-prefix", ["query", "refund", "--path-prefix", "policies/", "-n", "2"]),
    ("show-source", ["show", "policies/refunds.md"]),
    ("show-hit-window", ["show", "policies/refunds.md#0", "--before", "0", "--after", "1"]),
    ("show-tight-budget", ["show", "policies/refunds.md", "-b", "200"]),
    ("show-missing", ["show", "nope.md"]),
    ("status", ["status"]),
    ("status-verbose", ["status", "--verbose"]),
    ("version", ["version"]),
]

# With vectors (the loopback test embedder): hybrid fusion and vector distance.
VECTOR_CLI_CASES: list[tuple[str, list[str]]] = [
    ("vec-search-auto", ["search", "how do refunds work"]),
    ("vec-search-vector", ["search", "refund", "--type", "vector", "-n", "4"]),
    ("vec-search-hybrid-filter", ["search", "refund", "--type", "hybrid", "-f", "chunk=0"]),
    ("vec-search-textonly-hybrid", ["search", "refund", "--type", "hybrid", "--table", "textonly"]),
    ("vec-query", ["query", "how do refunds work?", "-b", "1500"]),
    ("vec-status", ["status"]),
]

MCP_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("search-default", "lancedb_search", {"query": "refund policy"}),
    ("search-text-limit", "lancedb_search", {"query": "refund", "searchType": "text", "limit": 3}),
    ("search-vector-fallback", "lancedb_search", {"query": "refund", "searchType": "vector"}),
    ("search-hybrid-fallback", "lancedb_search", {"query": "refund", "searchType": "hybrid"}),
    ("search-filter-prefix", "lancedb_search", {"query": "refund", "pathPrefix": "policies/", "filters": {"chunk": 0}}),
    ("search-filter-list", "lancedb_search", {"query": "order", "filters": {"chunk": [0, "1"]}}),
    ("search-injection", "lancedb_search", {"query": "refund", "filters": {"path": "x' OR '1'='1"}}),
    ("search-identifier", "lancedb_search", {"query": "MAX_SAVED DEC-0054 createClient"}),
    ("search-stop-words", "lancedb_search", {"query": "the of and"}),
    ("search-limit-0", "lancedb_search", {"query": "refund", "limit": 0}),
    ("search-missing-table", "lancedb_search", {"query": "refund", "table": "missing"}),
    ("search-bad-column", "lancedb_search", {"query": "refund", "textColumn": "nope"}),
    ("search-bad-filter-column", "lancedb_search", {"query": "refund", "filters": {"nope": 1}}),
    ("search-bad-filter-value", "lancedb_search", {"query": "refund", "filters": {"chunk": "x"}}),
    ("query-question", "lancedb_query", {"question": "how do refunds work?"}),
    ("query-warm-start", "lancedb_query", {"question": "anything", "warmStart": True, "contextBudget": 1000}),
    ("query-tight-budget", "lancedb_query", {"question": "refund", "contextBudget": 200}),
    ("query-too-small-budget", "lancedb_query", {"question": "refund", "contextBudget": 5}),
    ("query-filter", "lancedb_query", {"question": "refund", "pathPrefix": "policies/", "limit": 2}),
    ("document-source", "lancedb_document", {"source": "policies/refunds.md"}),
    ("document-hit", "lancedb_document", {"id": "policies/refunds.md#0", "before": 0, "after": 1}),
    ("document-tight", "lancedb_document", {"source": "policies/refunds.md", "contextBudget": 200}),
    ("document-missing", "lancedb_document", {"source": "nope.md"}),
    ("document-missing-id", "lancedb_document", {"id": "nope.md#3"}),
    ("document-nothing", "lancedb_document", {}),
    ("status", "lancedb_status", {}),
    ("status-verbose", "lancedb_status", {"verbose": True}),
    ("version", "lancedb_version", {}),
]

VECTOR_MCP_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("vec-search-auto", "lancedb_search", {"query": "how do refunds work"}),
    (
        "vec-search-hybrid-prefix",
        "lancedb_search",
        {"query": "refund", "searchType": "hybrid", "pathPrefix": "policies/"},
    ),
    ("vec-search-vector", "lancedb_search", {"query": "refund", "searchType": "vector", "limit": 4}),
    ("vec-query", "lancedb_query", {"question": "how do refunds work?", "contextBudget": 1500}),
    ("vec-status", "lancedb_status", {}),
]

_VOLATILE = [
    (re.compile(r'"(updatedAt|indexedAt|since)":"[^"]*"'), r'"\1":"<time>"'),
    (re.compile(r'"version":\d+'), '"version":"<n>"'),
    (re.compile(r'"(p50Ms|p95Ms)":[0-9.]+'), r'"\1":"<ms>"'),
    # characters / 4 of replies that hold the database's real path, whose length varies per run
    (re.compile(r'"(tokens|tokensPerCall)":[0-9.]+'), r'"\1":"<n>"'),
]


def normalise(text: str, db: Path) -> str:
    if os.environ.get("OPENAI_BASE_URL"):  # the loopback embedder's port
        text = text.replace(os.environ["OPENAI_BASE_URL"], "<EMBED_URL>")
    text = text.replace(str(db), "<DB>").replace(f'"version":"{__version__}"', '"version":"<VERSION>"')
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _cli_replies(cases: list[tuple[str, list[str]]], db: Path) -> dict[str, Any]:
    replies = {}
    for name, argv in cases:
        result = CliRunner().invoke(
            app, [*argv, "--json", *(["--db", str(db)] if argv[0] != "version" else [])], prog_name="lancelot"
        )
        replies[name] = {"exit": result.exit_code, "stdout": normalise(result.stdout, db)}
    return replies


def _mcp_replies(cases: list[tuple[str, str, dict[str, Any]]], db: Path) -> dict[str, Any]:
    from mcp import Client

    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async def call_all() -> dict[str, Any]:
        replies = {}
        async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
            for name, tool, arguments in cases:
                result = await client.call_tool(tool, arguments)
                structured = result.structured_content
                links = [part.uri for part in result.content if part.type == "resource_link"]
                replies[name] = {
                    "isError": bool(result.is_error),
                    "text": [normalise(part.text, db) for part in result.content if part.type == "text"],
                    "structured": None
                    if structured is None
                    else normalise(json.dumps(structured, ensure_ascii=False, separators=(",", ":")), db),
                    **({"links": links} if links else {}),  # resource links to the hits' documents
                }
        return replies

    return anyio.run(call_all)


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A long document (many chunks, for windows and cuts), front matter and an agent prompt."""
    from lancelot_cli.indexer import index_folder

    root = tmp_path_factory.mktemp("golden-docs")
    sections = [
        f"## Part {n}\n\n" + " ".join(f"Step {n}.{k} checks the valve pressure and logs it." for k in range(20))
        for n in range(1, 9)
    ]
    (root / "manual.md").write_text(
        "---\nkind: manual\nstatus: accepted\n---\n# Pump manual\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8"
    )
    (root / "agents").mkdir()
    (root / "agents" / "Reviewer Bot.md").write_text("# Reviewer\n\nReview every change twice.\n", encoding="utf-8")
    (root / "notes.md").write_text("---\nkind: agent\ntitle: Helper\n---\nBe brief.\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("golden-db") / "db"
    index_folder(root, str(db))
    return db


LONG_CLI_CASES: list[tuple[str, list[str]]] = [
    ("long-search-filter", ["search", "valve pressure", "-f", "kind=manual", "-n", "3"]),
    ("long-show-window", ["show", "manual.md#3", "--before", "1", "--after", "1"]),
    ("long-show-cut", ["show", "manual.md", "-b", "2500"]),
    ("long-query", ["query", "valve pressure step", "-b", "1200"]),
    ("long-warm-start", ["query", "x", "--warm-start"]),
]

LONG_MCP_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("long-search-filter", "lancedb_search", {"query": "valve", "filters": {"status": "accepted"}, "limit": 2}),
    ("long-document-window", "lancedb_document", {"id": "manual.md#4", "before": 2, "after": 0}),
    ("long-document-cut", "lancedb_document", {"source": "manual.md", "contextBudget": 3000}),
    ("long-document-edge", "lancedb_document", {"id": "manual.md#0", "before": 5, "after": 200}),
    ("long-query", "lancedb_query", {"question": "valve pressure", "contextBudget": 900}),
]


def _prompts(db: Path) -> dict[str, Any]:
    from mcp import Client

    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async def call() -> dict[str, Any]:
        async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
            listed = (await client.list_prompts()).prompts
            replies: dict[str, Any] = {"list": [[p.name, p.title, p.description] for p in listed]}
            for prompt in listed:
                got = await client.get_prompt(prompt.name)
                replies[prompt.name] = [got.description, [m.content.text for m in got.messages]]
        return replies

    return anyio.run(call)


# The versions of the libraries that decide the replies' bytes when the files were written: a
# failure names them beside the running ones, so a release that moves a score says so (issue 45 #1).
RECORDED_WITH = GOLDEN / "versions.json"
DECIDING = ("lancedb", "mcp", "typer")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in DECIDING}


def _first_difference(expected: Any, got: Any, where: str = "") -> str:
    """Where two JSON values first differ, and how: "hits[0].score: 1.207482 -> 1.207537"."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got), key=str):
            if key not in got or key not in expected:
                return f"{where}.{key}: {'gone' if key not in got else 'new'}"
            if expected[key] != got[key]:
                return _first_difference(expected[key], got[key], f"{where}.{key}")
    if isinstance(expected, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{where}[{i}]")
        if len(expected) != len(got):
            return f"{where}: {len(expected)} items -> {len(got)}"
    return f"{where.lstrip('.') or 'the reply'}: {json.dumps(expected)[:200]} -> {json.dumps(got)[:200]}"


def _why(recorded: dict[str, str]) -> str:
    moved = [f"{n} {recorded.get(n, '?')} -> {v}" for n, v in _versions().items() if recorded.get(n) != v]
    if moved:
        return f"recorded with another release ({', '.join(moved)}): it changed the reply"
    return "recorded with the same releases: the code changed the reply"


def _check(name: str, replies: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(replies, ensure_ascii=False, indent=1) + "\n"
    if UPDATE or not path.exists():
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        RECORDED_WITH.write_text(json.dumps(_versions(), indent=1) + "\n", encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"wrote {path.name}: it did not exist; review and commit it")
        return
    expected = json.loads(path.read_text(encoding="utf-8"))
    recorded = json.loads(RECORDED_WITH.read_text(encoding="utf-8")) if RECORDED_WITH.exists() else {}
    for case, reply in replies.items():
        if reply != expected.get(case):
            pytest.fail(
                f"{name}.json [{case}] changed at {_first_difference(expected.get(case), reply)}; "
                f"{_why(recorded)}. If intended: LANCELOT_UPDATE_GOLDEN=1 pytest tests/test_golden.py"
            )
    assert set(replies) == set(expected)


def test_a_changed_reply_says_where_and_which_release_moved_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a failure says when a lancedb release moves a BM25 score in the 4th decimal."""
    old = {"hits": [{"source": "a.md", "score": 1.207482}]}
    new = {"hits": [{"source": "a.md", "score": 1.207537}]}
    assert _first_difference(old, new) == "hits[0].score: 1.207482 -> 1.207537"
    assert _first_difference({"a": 1}, {"a": 1, "b": 2}) == ".b: new"
    running = _versions()
    assert _why({**running, "lancedb": "0.0.1"}) == (
        f"recorded with another release (lancedb 0.0.1 -> {running['lancedb']}): it changed the reply"
    )
    assert "the code changed" in _why(running)


def test_cli_json_replies_are_unchanged(sample_db: Path) -> None:
    _check("cli", _cli_replies(CLI_CASES, sample_db))


def test_mcp_replies_are_unchanged(sample_db: Path) -> None:
    _check("mcp", _mcp_replies(MCP_CASES, sample_db))


def test_cli_json_replies_with_vectors_are_unchanged(vector_env: Any, vector_db: Path) -> None:
    _check("cli-vectors", _cli_replies(VECTOR_CLI_CASES, vector_db))


def test_mcp_replies_with_vectors_are_unchanged(vector_env: Any, vector_db: Path) -> None:
    _check("mcp-vectors", _mcp_replies(VECTOR_MCP_CASES, vector_db))


def test_long_document_replies_are_unchanged(long_db: Path) -> None:
    _check(
        "long",
        {
            "cli": _cli_replies(LONG_CLI_CASES, long_db),
            "mcp": _mcp_replies(LONG_MCP_CASES, long_db),
            "prompts": _prompts(long_db),
        },
    )
