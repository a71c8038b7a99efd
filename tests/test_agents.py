"""What agents get beyond plain search: front matter as typed, filterable columns; source code as
line windows; .gitignore honoured; usage metrics (the stats resource, `status --verbose`,
`serve --metrics-log`); documents offered as MCP prompts; and the read-only proof for the
document tool, the prompts and the stats resource.

Everything runs against real LanceDB tables written by `index_folder` in tmp folders, through the
engine, the SDK's in-memory client, and once through a spawned `lancelot serve` over stdio.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from lancelot_cli.codewords import without_name_words
from lancelot_cli.errors import ColumnNotFoundError, InvalidArgumentError
from lancelot_cli.indexer import IndexReport, index_folder
from lancelot_cli.indexer.sources import read_document, walk
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import hash_tree, lancelot_command, subprocess_env
from tests.support.calls import text_of as _text
from tests.support.engines import engine_for, wired


def _settings(db: Path | None) -> Any:
    values = {"LANCEDB_PATH": str(db)} if db is not None else {}
    return load(environ={**{k: v for k, v in os.environ.items() if k != "LANCEDB_PATH"}, **values})


def _server(db: Path | None) -> Any:
    return build_server(_settings(db))


def _rows(db: Path, table: str = "documents") -> list[dict[str, Any]]:
    import lancedb

    rows = lancedb.connect(str(db)).open_table(table).to_arrow().to_pylist()
    return sorted(rows, key=lambda r: (r["path"], r["chunk"]))


def _tokens(text: str) -> int:
    """The metrics' estimate: characters / 4, rounded up."""
    return (len(text) + 3) // 4


def _write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- a folder of ADRs with front matter -----------------------------------------------------------

ADRS = {
    # path: (title, status, number, ratio, draft)
    "adr/0001-use-lance.md": ("ADR 1: Use Lance for the widget store", "accepted", 1, 0.5, False),
    "adr/0002-use-sqlite.md": ("ADR 2: Use SQLite for the widget store", "superseded", 2, 1, True),
    "adr/0003-add-vectors.md": ("ADR 3: Add vectors to the widget store", "proposed", 3, 0.25, False),
    "adr/0004-drop-cache.md": ("ADR 4: Drop the widget store cache", "superseded", 4, 0.75, False),
}
ACCEPTED, SUPERSEDED_2, PROPOSED, SUPERSEDED_4 = ADRS


def _adr(path: str) -> str:
    title, status, number, ratio, draft = ADRS[path]
    return (
        "---\n"
        f'title: "{title}"\n'
        f"status: {status}\n"
        "kind: adr\n"
        f"id: ADR-000{number}\n"  # a reserved name: becomes the column meta_id
        "tags: [storage, search]\n"
        f"number: {number}\n"
        f"ratio: {ratio}\n"
        f"draft: {str(draft).lower()}\n"
        f"date: 2024-01-0{number}\n"
        "owner:\n  team: core\n  people: [ann, bob]\n"
        "---\n\n"
        "# Context\n\n"
        f"We need a decision about the widget store, number {number}.\n\n"
        "# Decision\n\n"
        "The widget store keeps every record it is given.\n"
    )


@pytest.fixture(scope="module")
def adr_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexReport]:
    src = tmp_path_factory.mktemp("adr-src")
    for path in ADRS:
        _write(src, path, _adr(path))
    _write(src, "README.md", "# ADR index\n\nThe widget store decisions live in adr/.\n")
    _write(src, "adr/bad.md", "---\ntitle: [unclosed\nstatus: accepted\n---\n\nThe widget store, broken.\n")
    _write(src, "adr/list.md", "---\n- just\n- a list\n---\n\nThe widget store, listed.\n")
    db = tmp_path_factory.mktemp("adr-db") / "db"
    return db, index_folder(src, str(db))


@pytest.fixture(scope="module")
def adr_db(adr_index: tuple[Path, IndexReport]) -> Path:
    return adr_index[0]


def test_front_matter_keys_become_columns_of_the_right_arrow_types(adr_db: Path) -> None:
    import lancedb
    import pyarrow as pa

    schema = lancedb.connect(str(adr_db)).open_table("documents").schema
    expected = {
        "status": pa.string(),
        "kind": pa.string(),
        "tags": pa.list_(pa.string()),
        "number": pa.int64(),
        "ratio": pa.float64(),  # 1 in one file and 0.5 in others: the narrowest type that fits all
        "draft": pa.bool_(),
        "date": pa.string(),
        "owner": pa.string(),
        "meta_id": pa.string(),
    }
    assert {name: schema.field(name).type for name in expected} == expected
    assert schema.field("id").type == pa.string()  # the row id column is the indexer's, untouched

    rows = {row["path"]: row for row in _rows(adr_db) if row["chunk"] == 0}
    first = rows[ACCEPTED]
    assert first["id"] == f"{ACCEPTED}#0" and first["meta_id"] == "ADR-0001"
    assert (first["status"], first["kind"], first["number"], first["ratio"], first["draft"]) == (
        "accepted",
        "adr",
        1,
        0.5,
        False,
    )
    assert first["tags"] == ["storage", "search"]
    assert first["date"] == "2024-01-01"  # a YAML date as ISO text
    assert json.loads(first["owner"]) == {"team": "core", "people": ["ann", "bob"]}  # a mapping as JSON text
    second = rows[SUPERSEDED_2]
    assert second["ratio"] == 1.0 and isinstance(second["ratio"], float) and second["draft"] is True
    # A document without front matter has nulls in those columns.
    assert rows["README.md"]["status"] is None and rows["README.md"]["number"] is None


def test_titles_come_from_front_matter_and_it_never_reaches_the_text(adr_db: Path) -> None:
    rows = _rows(adr_db)
    assert {row["path"] for row in rows} == {*ADRS, "README.md"}
    for row in rows:
        if row["path"] in ADRS:
            assert row["title"] == ADRS[row["path"]][0]  # not the first heading ("Context")
            assert row["heading"].startswith(ADRS[row["path"]][0])
        for leak in ("---", "status:", "kind:", "ADR-000", "people", "ratio", "2024-01"):
            assert leak not in row["text"], (row["path"], leak)
    assert next(r for r in rows if r["path"] == "README.md")["title"] == "ADR index"
    hits = wired(engine_for(adr_db)).search("widget store", limit=50)["hits"]
    assert {hit["source"]: hit["title"] for hit in hits if hit["source"] in ADRS} == {
        path: values[0] for path, values in ADRS.items()
    }


def test_invalid_front_matter_is_skipped_with_a_reason(adr_index: tuple[Path, IndexReport]) -> None:
    db, report = adr_index
    reasons = dict(report.skipped)
    assert set(reasons) == {"adr/bad.md", "adr/list.md"}
    assert "front matter is not valid YAML" in reasons["adr/bad.md"]
    assert "not a mapping" in reasons["adr/list.md"]
    assert report.files == len(ADRS) + 1
    assert not {"adr/bad.md", "adr/list.md"} & {row["path"] for row in _rows(db)}
    assert {"path": "adr/bad.md", "reason": reasons["adr/bad.md"]} in report.as_dict()["skipped"]


def test_a_capitalised_title_key_is_still_the_title(tmp_path: Path) -> None:
    """Keys are case-insensitive as columns (``Status`` -> ``status``); ``Title`` must not be lost:
    it is dropped from the columns as the title, so it has to become the title."""
    _write(tmp_path, "a.md", "---\nTitle: Big Decision\nStatus: accepted\n---\n\n# Some heading\n\nBody.\n")
    doc = read_document(tmp_path, "a.md")
    assert doc.meta == {"status": "accepted"}
    assert doc.title == "Big Decision"


def _sources(reply: dict[str, Any]) -> list[str]:
    return [hit["source"] for hit in reply["hits"]]


def test_filters_skip_superseded_adrs_through_the_engine(adr_db: Path) -> None:
    engine = wired(engine_for(adr_db))
    everything = set(_sources(engine.search("widget store", limit=50)))
    assert {SUPERSEDED_2, SUPERSEDED_4} <= everything  # so the filter below has something to skip
    assert _sources(engine.search("widget store", limit=50, filters={"status": "accepted"})) == [ACCEPTED]
    either = engine.search("widget store", limit=50, filters={"status": ["accepted", "proposed"]})
    assert sorted(_sources(either)) == [ACCEPTED, PROPOSED]
    # Filtered rows are dropped before ranking: limit 1 still finds the one accepted ADR.
    assert _sources(engine.search("widget store", limit=1, filters={"status": "accepted"})) == [ACCEPTED]
    # Typed literals: text for numbers and booleans is read as the column's type.
    assert _sources(engine.search("widget store", limit=50, filters={"number": "3"})) == [PROPOSED]
    assert sorted(_sources(engine.search("widget store", limit=50, filters={"number": [2, 4]}))) == [
        SUPERSEDED_2,
        SUPERSEDED_4,
    ]
    assert _sources(engine.search("widget store", limit=50, filters={"draft": "true"})) == [SUPERSEDED_2]
    assert _sources(engine.search("widget store", limit=50, filters={"draft": True})) == [SUPERSEDED_2]
    assert _sources(engine.search("widget store", limit=50, filters={"ratio": 0.25})) == [PROPOSED]
    assert _sources(engine.search("widget store", limit=50, filters={"meta_id": "ADR-0004"})) == [SUPERSEDED_4]
    combined = engine.search(
        "widget store", limit=50, path_prefix="adr/", filters={"kind": "adr", "status": "superseded"}
    )
    assert sorted(_sources(combined)) == [SUPERSEDED_2, SUPERSEDED_4]
    assert _sources(engine.search("widget store", limit=50, path_prefix="docs/", filters={"kind": "adr"})) == []
    # lancedb_query's engine call narrows the same way.
    context = engine.query("widget store", context_budget=20000, filters={"status": ["accepted", "proposed"]})
    assert f"source: {ACCEPTED}" in context["context"] and f"source: {PROPOSED}" in context["context"]
    assert SUPERSEDED_2 not in context["context"] and SUPERSEDED_4 not in context["context"]


def test_filter_errors_name_the_problem(adr_db: Path) -> None:
    engine = wired(engine_for(adr_db))
    with pytest.raises(ColumnNotFoundError) as missing:
        engine.search("widget store", filters={"nope": 1})
    message = str(missing.value)
    assert "'nope'" in message and "its columns are:" in message
    assert all(name in message for name in ("status", "number", "draft", "tags"))
    with pytest.raises(InvalidArgumentError) as wrong:
        engine.search("widget store", filters={"number": "abc"})
    assert "'number'" in str(wrong.value) and "'abc'" in str(wrong.value) and "int64" in str(wrong.value)
    with pytest.raises(InvalidArgumentError, match="'draft'"):
        engine.search("widget store", filters={"draft": "maybe"})
    with pytest.raises(InvalidArgumentError, match="needs at least one value"):
        engine.search("widget store", filters={"status": []})
    with pytest.raises(InvalidArgumentError, match="'tags'"):  # a list holds values of its item type
        engine.search("widget store", filters={"tags": {"a": 1}})


def test_a_fractional_value_for_an_int_column_is_an_error_not_a_truncated_match(adr_db: Path) -> None:
    """2.5 is no ADR's number: it must not be truncated to 2 and match ADR 2."""
    with pytest.raises(InvalidArgumentError, match="'number'"):
        wired(engine_for(adr_db)).search("widget store", limit=50, filters={"number": 2.5})


@pytest.mark.anyio
async def test_filters_through_the_mcp_tools(adr_db: Path) -> None:
    async with Client(_server(adr_db)) as client:

        async def sources(arguments: dict[str, Any]) -> list[str]:
            result = await client.call_tool("lancedb_search", {"query": "widget store", "limit": 50, **arguments})
            assert not result.is_error, _text(result)
            assert json.loads(_text(result)) == result.structured_content
            return [hit["source"] for hit in result.structured_content["hits"]]

        assert await sources({"filters": {"status": "accepted"}}) == [ACCEPTED]
        assert sorted(await sources({"filters": {"status": ["accepted", "proposed"]}})) == [ACCEPTED, PROPOSED]
        assert await sources({"filters": {"number": 3}}) == [PROPOSED]
        assert await sources({"filters": {"draft": True}}) == [SUPERSEDED_2]
        assert sorted(await sources({"pathPrefix": "adr/", "filters": {"status": "superseded"}})) == [
            SUPERSEDED_2,
            SUPERSEDED_4,
        ]
        hit = (
            await client.call_tool("lancedb_search", {"query": "widget store", "filters": {"status": "accepted"}})
        ).structured_content["hits"][0]
        assert hit["title"] == ADRS[ACCEPTED][0]
        assert hit["metadata"]["status"] == "accepted" and hit["metadata"]["tags"] == ["storage", "search"]
        assert hit["metadata"]["number"] == 1 and hit["metadata"]["draft"] is False
        assert not {"hash", "file_size", "file_mtime", "file_hash"} & set(hit["metadata"])
        assert hit["metadata"]["line_start"] > 1  # where the chunk starts in the file, after its front matter

        query = _text(
            await client.call_tool(
                "lancedb_query",
                {"question": "widget store", "contextBudget": 20000, "filters": {"status": ["accepted", "proposed"]}},
            )
        )
        assert ACCEPTED in query and PROPOSED in query and SUPERSEDED_2 not in query and SUPERSEDED_4 not in query

        missing = await client.call_tool("lancedb_search", {"query": "widget", "filters": {"nope": "x"}})
        assert missing.is_error and "'nope'" in _text(missing) and "its columns are:" in _text(missing)
        assert "status" in _text(missing)
        wrong = await client.call_tool("lancedb_search", {"query": "widget", "filters": {"number": "abc"}})
        assert wrong.is_error and "'number'" in _text(wrong) and "'abc'" in _text(wrong)
        wrong_query = await client.call_tool("lancedb_query", {"question": "widget", "filters": {"number": "abc"}})
        assert wrong_query.is_error and "'abc'" in _text(wrong_query)


def test_existing_column_types_coerce_values_of_later_files(tmp_path: Path) -> None:
    import pyarrow as pa

    src, db = tmp_path / "src", tmp_path / "db"
    _write(src, "a.md", "---\nnumber: 1\ntags: [x, y]\nstatus: open\ndraft: true\n---\n\nFirst note.\n")
    index_folder(src, str(db))
    _write(src, "b.md", '---\nnumber: "7"\ntags: solo\nstatus: 5\ndraft: "yes"\n---\n\nSecond note.\n')
    report = index_folder(src, str(db))
    assert report.skipped == [] and report.read == 1
    import lancedb

    schema = lancedb.connect(str(db)).open_table("documents").schema
    assert [schema.field(n).type for n in ("number", "tags", "status", "draft")] == [
        pa.int64(),
        pa.list_(pa.string()),
        pa.string(),
        pa.bool_(),
    ]
    b = next(row for row in _rows(db) if row["path"] == "b.md")
    assert (b["number"], b["tags"], b["status"], b["draft"]) == (7, ["solo"], "5", None)
    assert _sources(wired(engine_for(db)).search("note", filters={"number": 7})) == ["b.md"]


# -- source code and Markdown chunks -------------------------------------------------------------

APP_LINES = [f"value_{n} = {n}" for n in range(1, 151)]
APP_LINES[19] = "class LedgerBook:"  # line 20: only in the first window
APP_LINES[99] = "def compute_invoice_total(items):"  # line 100: only in the second window

GUIDE = (
    "---\ntitle: Widget guide\n---\n\n"
    "# Widget guide\n\n" + "This guide explains how widgets are set up and kept running in a small shop. " * 2 + "\n\n"
    "## Installing\n\n" + "Run the frobnicator installer once per machine; it asks no questions at all. " * 2 + "\n\n"
    "### Offline mode\n\n"
    + "Without a network the installer falls back to quuxification from a local mirror. "
    * 2
    + "\n\n"
    "## Troubleshooting\n\n"
    + "When a gizmo refuses to start, read its log and restart it before anything else. " * 2
    + "\n"
)

REVIEWER_PARAGRAPHS = (
    ["# Reviewer", "You review pull requests for the widget team."]
    + [
        f"Rule {n}: check item {n} of the checklist carefully, and explain every finding plainly to the author."
        for n in range(1, 9)
    ]
    + ["## Tone", "Be kind, be specific, and end with what is good about the change."]
)
TEAM_BODY = "You are the team's second reviewer.\n\nLook only at tests."
CODE_REVIEW_BODY = "# Code review\n\nRead the diff twice."


@pytest.fixture(scope="module")
def mixed_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexReport]:
    src = tmp_path_factory.mktemp("mixed-src")
    _write(src, "src/app.py", "\n".join(APP_LINES) + "\n")
    _write(src, "src/schema.sql", "CREATE TABLE parcels (\n  id integer primary key\n);\n")
    _write(src, "src/skip.js", "function compute_invoice_total() {}\n")  # not an extension asked for
    _write(src, "docs/guide.md", GUIDE)
    _write(src, "agents/reviewer.md", "\n\n".join(REVIEWER_PARAGRAPHS) + "\n")
    _write(src, "agents/Code Review.md", CODE_REVIEW_BODY + "\n")
    _write(src, "team/reviewer.md", f"---\nkind: agent\ntitle: Team reviewer\n---\n\n{TEAM_BODY}\n")
    _write(src, "notes/plain.md", "---\nkind: note\ntitle: Plain note\n---\n\nNot an agent.\n")
    db = tmp_path_factory.mktemp("mixed-db") / "db"
    return db, index_folder(src, str(db), chunk_size=300, extensions=["py", "sql"])


@pytest.fixture(scope="module")
def mixed_db(mixed_index: tuple[Path, IndexReport]) -> Path:
    return mixed_index[0]


def test_source_files_are_indexed_by_definition_or_as_line_windows(mixed_index: tuple[Path, IndexReport]) -> None:
    """Python is cut at its definitions (indexer/code.py), named and with exact lines; SQL, with no
    grammar here, as windows of lines."""
    db, report = mixed_index
    assert report.skipped == []
    rows = _rows(db)
    paths = {row["path"] for row in rows}
    assert {"src/app.py", "src/schema.sql"} <= paths and "src/skip.js" not in paths
    app = [row for row in rows if row["path"] == "src/app.py"]
    assert any(row["title"].startswith("LedgerBook (src/app.py:") for row in app)
    assert any(row["title"].startswith("compute_invoice_total (src/app.py:") for row in app)
    for row in app:
        first, last = row["line_start"], row["line_end"]
        assert row["title"].endswith(f"src/app.py:{first}-{last}") or row["title"].endswith(
            f"src/app.py:{first}-{last})"
        )
        # the lines, exactly, once the index's line of name words is taken off (issue 47)
        assert without_name_words(row["text"]) == "\n".join(APP_LINES[first - 1 : last])
    (sql,) = [row for row in rows if row["path"] == "src/schema.sql"]
    assert (sql["title"], sql["line_start"], sql["line_end"]) == ("src/schema.sql:1-3", 1, 3)
    assert sql["heading"] is None
    assert all(row["line_start"] >= 1 for row in rows if row["path"].endswith(".md"))  # prose has lines too


@pytest.mark.parametrize(("name", "line"), [("compute_invoice_total", 100), ("LedgerBook", 20)])
def test_a_hit_for_a_name_points_at_the_window_holding_it(mixed_db: Path, name: str, line: int) -> None:
    hit = wired(engine_for(mixed_db)).search(name, limit=5)["hits"][0]
    assert hit["source"] == "src/app.py"
    meta = hit["metadata"]
    first, last = meta["line_start"], meta["line_end"]
    assert first <= line <= last and hit["title"] == f"{name} (src/app.py:{first}-{last})"
    (row,) = [r for r in _rows(mixed_db) if r["id"] == hit["id"]]
    assert row["text"].split("\n")[line - first] == APP_LINES[line - 1]
    assert name in hit["snippet"]


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("frobnicator installer", "Widget guide > Installing"),
        ("quuxification mirror", "Widget guide > Installing > Offline mode"),
        ("gizmo refuses", "Widget guide > Troubleshooting"),
    ],
)
def test_markdown_hits_carry_their_heading_path(mixed_db: Path, query: str, heading: str) -> None:
    hit = wired(engine_for(mixed_db)).search(query, limit=3)["hits"][0]
    assert hit["source"] == "docs/guide.md" and hit["title"] == "Widget guide"
    assert hit["metadata"]["heading"] == heading
    first, last = hit["metadata"]["line_start"], hit["metadata"]["line_end"]  # lines of prose too (issue 24)
    lines = GUIDE.splitlines()
    assert 1 <= first <= last <= len(lines) and lines[first - 1].strip()
    assert heading.split(" > ")[-1] in "\n".join(lines[:first])  # its heading comes at or before its start
    assert "title:" not in hit["snippet"]


# -- .gitignore, binary and oversized files ------------------------------------------------------

LAYOUT = {
    "notes.md": "# Notes\n\nKept.\n",
    "ünï notes.md": "# Unicode\n\nKept too.\n",
    "keep/keep.md": "# Keep\n\nKept.\n",
    "keep/local.md": "# Local\n\nIgnored by keep/.gitignore.\n",
    "build/out.md": "# Build output\n\nIgnored folder.\n",
    "build/ünï code.md": "# Built\n\nIgnored folder.\n",
    "drafts/wip.draft.md": "# WIP\n\nIgnored pattern.\n",
    "drafts/important.draft.md": "# Important\n\nRe-included by a negation.\n",
    ".gitignore": "build/\n*.draft.md\n!drafts/important.draft.md\n",
    "keep/.gitignore": "local.md\n",
}
NOT_IGNORED = {"notes.md", "ünï notes.md", "keep/keep.md", "drafts/important.draft.md"}
ALL_DOCS = {p for p in LAYOUT if not p.endswith(".gitignore")}


@pytest.fixture
def no_outer_repo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """git must not find a repository above tmp_path (a tmp folder inside someone's checkout)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_gitignore_is_honoured_in_a_git_work_tree(no_outer_repo: Path) -> None:
    repo = no_outer_repo / "repo"
    for rel, text in LAYOUT.items():
        _write(repo, rel, text)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    db = no_outer_repo / "db"
    report = index_folder(repo, str(db))
    assert report.skipped == []
    assert {row["path"] for row in _rows(db)} == NOT_IGNORED
    assert report.files == len(NOT_IGNORED)
    # A source folder below the work tree's root: patterns of the root's .gitignore still apply.
    _write(repo, "docs/generated/api.md", "# API\n\nGenerated.\n")
    _write(repo, "docs/guide.md", "# Guide\n\nWritten.\n")
    _write(repo, ".gitignore", LAYOUT[".gitignore"] + "/docs/generated/\n")
    assert walk(repo / "docs") == ["guide.md"]


def test_gitignore_is_not_applied_outside_a_git_work_tree(no_outer_repo: Path) -> None:
    plain = no_outer_repo / "plain"
    for rel, text in LAYOUT.items():
        _write(plain, rel, text)
    db = no_outer_repo / "db"
    report = index_folder(plain, str(db))
    assert report.skipped == []
    assert {row["path"] for row in _rows(db)} == ALL_DOCS


def test_binary_and_oversized_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _write(src, "ok.md", "# Fine\n\nA small document.\n")
    _write(src, "blob.md", b"# Blob\n\x00\x01\x02 binary bytes\n")
    _write(src, "tool.py", b"print('hi')\n\x00\x00")
    _write(src, "big.md", "# Big\n\n" + "word " * 600)
    _write(src, "big.py", "x = 1\n" * 400)
    db = tmp_path / "db"
    report = index_folder(src, str(db), extensions=["py"], max_file_size=2000)
    reasons = dict(report.skipped)
    assert set(reasons) == {"blob.md", "tool.py", "big.md", "big.py"}
    assert "binary" in reasons["blob.md"] and "binary" in reasons["tool.py"]
    assert "larger than 2,000 bytes" in reasons["big.md"] and "--max-file-size" in reasons["big.py"]
    assert {row["path"] for row in _rows(db)} == {"ok.md"}
    assert report.files == 1


# -- usage metrics ------------------------------------------------------------------------------

METRIC_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("lancedb_search", {"query": "widget store"}),
    ("lancedb_search", {"query": "widget store", "filters": {"status": "accepted"}}),
    ("lancedb_search", {"query": "widget", "limit": 0}),  # rejected by the input schema
    ("lancedb_query", {"question": "which widget store?"}),
    ("lancedb_query", {"question": "", "warmStart": True, "contextBudget": 1000}),
    ("lancedb_document", {"source": ACCEPTED}),
    ("lancedb_document", {"source": "nope.md"}),  # rejected by the engine
    ("lancedb_document", {"id": f"{ACCEPTED}#0", "before": 0, "after": 0}),
    ("lancedb_status", {}),
    ("lancedb_version", {}),
    ("lancedb_version", {}),
]


async def _read_stats(client: Client) -> dict[str, Any]:
    result = await client.read_resource("lancelot://stats")
    (content,) = result.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


class StepClock:
    """``time.perf_counter`` for the server module, which reads it as a tool call starts and ends:
    the n-th call (from 1) lasts exactly n ms."""

    def __init__(self) -> None:
        self.reads = 0
        self.now = 0.0

    def perf_counter(self) -> float:
        self.reads += 1
        if self.reads % 2 == 0:  # a call's end
            self.now += self.reads // 2 / 1000
        return self.now


@pytest.mark.anyio
async def test_stats_resource_counts_calls_errors_latency_and_tokens(
    adr_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies: dict[str, list[tuple[str, bool]]] = {}
    took: dict[str, list[float]] = {}  # ms each call lasted on the step clock
    monkeypatch.setattr("lancelot_cli.server.app.time", StepClock())
    async with Client(_server(adr_db)) as client:
        assert [r.uri for r in (await client.list_resources()).resources] == ["lancelot://stats"]
        assert (await _read_stats(client))["tools"] == {}
        for n, (name, arguments) in enumerate(METRIC_CALLS, start=1):
            result = await client.call_tool(name, arguments)
            replies.setdefault(name, []).append((_text(result), bool(result.is_error)))
            took.setdefault(name, []).append(float(n))
        stats = await _read_stats(client)
        status = (await client.call_tool("lancedb_status", {"verbose": True})).structured_content
        after = await _read_stats(client)

    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", stats["since"])
    tools = stats["tools"]
    assert set(tools) == set(replies)
    assert [replies["lancedb_search"][2][1], replies["lancedb_document"][1][1]] == [True, True]
    for name, calls in replies.items():
        entry = tools[name]
        assert entry["calls"] == len(calls), name
        assert entry["errors"] == sum(error for _, error in calls), name
        ms = sorted(took[name])  # fewer than 11 calls each: p95 is the slowest, p50 a middle one
        middle = {ms[(len(ms) - 1) // 2], ms[len(ms) // 2]}
        assert entry["p95Ms"] == ms[-1] and entry["p50Ms"] in middle, (name, entry, ms)
        assert entry["tokensPerCall"] == round(entry["tokens"] / entry["calls"], 1), name
        successes = sum(_tokens(text) for text, error in calls if not error)
        if entry["errors"] == 0:
            assert entry["tokens"] == successes, name  # characters / 4 of the replies the client got
        else:
            assert entry["tokens"] >= successes, name
    assert tools["lancedb_query"]["tokens"] > 10 and tools["lancedb_document"]["calls"] == 3

    # lancedb_status with verbose=true carries the same numbers (the snapshot precedes its own call).
    assert status["usage"]["tools"] == tools
    assert "status" in status["tables"][0]["columns"]
    assert after["tools"]["lancedb_status"]["calls"] == tools["lancedb_status"]["calls"] + 1
    assert {k: v for k, v in after["tools"].items() if k != "lancedb_status"} == {
        k: v for k, v in tools.items() if k != "lancedb_status"
    }


@pytest.mark.anyio
async def test_error_replies_count_their_tokens_too(adr_db: Path) -> None:
    """An error reply is text the agent reads, like any other reply: its tokens are counted."""
    async with Client(_server(adr_db)) as client:
        bad_limit = await client.call_tool("lancedb_search", {"query": "widget", "limit": 0})
        missing = await client.call_tool("lancedb_document", {"source": "nope.md"})
        stats = (await _read_stats(client))["tools"]
    assert bad_limit.is_error and missing.is_error
    assert stats["lancedb_search"]["tokens"] == _tokens(_text(bad_limit)) > 0
    assert stats["lancedb_document"]["tokens"] == _tokens(_text(missing)) > 0


@pytest.mark.anyio
async def test_status_without_verbose_has_no_usage(adr_db: Path) -> None:
    async with Client(_server(adr_db)) as client:
        status = (await client.call_tool("lancedb_status", {})).structured_content
    assert "usage" not in status and "columns" not in status["tables"][0]


def _serve(db: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*lancelot_command(), "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(config)),
    )


@pytest.mark.slow
def test_metrics_log_inside_the_database_folder_is_refused(adr_db: Path, tmp_path: Path) -> None:
    config = tmp_path / "config"
    before = hash_tree(adr_db)
    names_before = sorted(p.name for p in adr_db.rglob("*"))
    for args in (
        ["--metrics-log", str(adr_db / "x.jsonl")],
        ["--db", str(adr_db), "--metrics-log", str(adr_db / "sub" / "x.jsonl")],
    ):
        out = _serve(adr_db, config, *args)
        assert out.returncode == 1, (args, out.stderr)
        assert "--metrics-log must not write into the database folder" in out.stderr
        assert out.stderr.startswith("lancelot: error:") and "Traceback" not in out.stderr
        assert out.stdout == ""
    # A relative name goes to the config folder; here that lands inside the database: refused too.
    out = _serve(adr_db, adr_db.parent, "--metrics-log", f"{adr_db.name}/x.jsonl")
    assert out.returncode == 1 and "database folder" in out.stderr
    assert hash_tree(adr_db) == before
    assert sorted(p.name for p in adr_db.rglob("*")) == names_before  # no file, no folder


# -- prompts --------------------------------------------------------------------------------------

EXPECTED_PROMPTS = {  # name -> (source, title, full text)
    "code-review": ("agents/Code Review.md", "Code review", CODE_REVIEW_BODY),
    "reviewer": ("agents/reviewer.md", "Reviewer", "\n\n".join(REVIEWER_PARAGRAPHS)),
    "reviewer-2": ("team/reviewer.md", "Team reviewer", TEAM_BODY),
}


def test_the_reviewer_prompt_spans_several_chunks(mixed_db: Path) -> None:
    """So that getting it in full really joins chunks, in order."""
    assert len([row for row in _rows(mixed_db) if row["path"] == "agents/reviewer.md"]) >= 3


@pytest.mark.anyio
async def test_agent_documents_are_listed_and_served_as_prompts(mixed_db: Path) -> None:
    async with Client(_server(mixed_db)) as client:
        prompts = (await client.list_prompts()).prompts
        names = [prompt.name for prompt in prompts]
        got = {name: await client.get_prompt(name) for name in names}
        with pytest.raises(MCPError):
            await client.get_prompt("no-such-prompt")
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z0-9_-]+", name) for name in names)
    assert set(names) == set(EXPECTED_PROMPTS)
    for prompt in prompts:
        source, title, text = EXPECTED_PROMPTS[prompt.name]
        assert prompt.title == title
        assert source in prompt.description
        result = got[prompt.name]
        (message,) = result.messages
        assert message.role == "user"
        assert message.content.text == text
    assert "kind: agent" not in got["reviewer-2"].messages[0].content.text


@pytest.mark.anyio
async def test_an_unknown_prompt_is_an_invalid_params_error_naming_it(mixed_db: Path) -> None:
    """MCP: an invalid prompt name is -32602 (Invalid params), not an internal error."""
    async with Client(_server(mixed_db)) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("no-such-prompt")
    assert caught.value.error.code == INVALID_PARAMS
    assert "no-such-prompt" in caught.value.error.message


@pytest.mark.anyio
async def test_no_agent_documents_no_prompts(adr_db: Path, tmp_path: Path) -> None:
    async with Client(_server(adr_db)) as client:
        assert (await client.list_prompts()).prompts == []
    async with Client(_server(tmp_path / "missing")) as client:  # no database: no prompts, nothing made
        assert (await client.list_prompts()).prompts == []
    assert not (tmp_path / "missing").exists()


# -- one spawned `lancelot serve --metrics-log calls.jsonl` over stdio ---------------------------

SPAWNED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("lancedb_search", {"query": "compute_invoice_total", "limit": 3}),
    ("lancedb_search", {"query": "x", "limit": 0}),
    ("lancedb_document", {"source": "agents/reviewer.md"}),
    ("lancedb_status", {}),
    ("lancedb_version", {}),
]


@pytest.fixture(scope="module")
def spawned(mixed_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run one stdio session against ``mixed_db`` and keep what it saw."""
    config = tmp_path_factory.mktemp("spawned-config")
    before = hash_tree(mixed_db)
    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve", "--metrics-log", "calls.jsonl"],
        env=subprocess_env(LANCEDB_PATH=str(mixed_db), LANCELOT_CONFIG_DIR=str(config)),
    )
    seen: dict[str, Any] = {"config": config}

    async def session() -> None:
        async with Client(params) as client:
            prompts = (await client.list_prompts()).prompts
            seen["prompts"] = {p.name: p for p in prompts}
            seen["texts"] = {p.name: (await client.get_prompt(p.name)).messages[0].content.text for p in prompts}
            try:
                await client.get_prompt("no-such-prompt")
            except MCPError as exc:
                seen["unknown"] = exc
            seen["calls"] = []
            for name, arguments in SPAWNED_CALLS:
                result = await client.call_tool(name, arguments)
                seen["calls"].append((name, _text(result), bool(result.is_error)))

    anyio.run(session)
    seen["unchanged"] = hash_tree(mixed_db) == before
    return seen


@pytest.mark.slow
def test_spawned_server_lists_and_serves_prompts(spawned: dict[str, Any]) -> None:
    assert set(spawned["prompts"]) == set(EXPECTED_PROMPTS)
    assert dict(spawned["texts"]) == {name: values[2] for name, values in EXPECTED_PROMPTS.items()}
    assert spawned["prompts"]["reviewer-2"].title == "Team reviewer"
    assert isinstance(spawned.get("unknown"), MCPError)
    assert spawned["unchanged"]


@pytest.mark.slow
def test_spawned_server_writes_one_metrics_line_per_call_in_the_config_folder(spawned: dict[str, Any]) -> None:
    log = spawned["config"] / "calls.jsonl"
    assert log.is_file()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(SPAWNED_CALLS)  # tool calls only: prompts are not tool calls
    for line, (name, text, is_error) in zip(lines, spawned["calls"], strict=False):
        assert {"tool", "ms", "tokens", "error", "argumentChars", "time"} <= set(line)
        assert line["tool"] == name
        assert isinstance(line["ms"], (int, float)) and line["ms"] >= 0
        assert line["argumentChars"] > 0 or name in ("lancedb_status", "lancedb_version")
        if is_error:
            assert line["error"]
        else:
            assert line["error"] is None
            assert line["tokens"] == _tokens(text)
    assert [c[2] for c in spawned["calls"]] == [False, True, False, False, False]
    assert json.loads(spawned["calls"][0][1])["hits"][0]["metadata"]["line_start"] == 100  # its definition's line
    assert spawned["unchanged"]


# -- read-only proof -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_prompts_stats_and_document_leave_the_database_unchanged(mixed_db: Path) -> None:
    before = hash_tree(mixed_db)
    async with Client(_server(mixed_db)) as client:
        prompts = (await client.list_prompts()).prompts
        for prompt in prompts:
            await client.get_prompt(prompt.name)
        with pytest.raises(MCPError):
            await client.get_prompt("no-such-prompt")
        whole = await client.call_tool("lancedb_document", {"source": "agents/reviewer.md"})
        window = await client.call_tool(
            "lancedb_document", {"id": "agents/reviewer.md#1", "before": 1, "after": 0, "contextBudget": 500}
        )
        code = await client.call_tool("lancedb_document", {"source": "src/app.py"})
        missing = await client.call_tool("lancedb_document", {"source": "nope.md"})
        await client.call_tool("lancedb_status", {"verbose": True})
        stats = await _read_stats(client)
    assert prompts and not whole.is_error and not window.is_error and missing.is_error
    assert _text(whole).startswith("# Reviewer\nsource: agents/reviewer.md · all ")
    assert "Rule 8" in _text(whole) and len(_text(window)) <= 500
    assert "def compute_invoice_total(items):" in _text(code)
    assert stats["tools"]["lancedb_document"]["calls"] == 4
    assert hash_tree(mixed_db) == before
