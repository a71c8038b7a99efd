"""Damaged tables (storage/damage.py): a truncated data file, a deleted `data/` or `_indices/` folder, a
truncated manifest. Status says the table is damaged and what to do instead of "ok"; a search says
so in one line without Lance's Rust source paths, over the CLI and MCP alike; no Rust WARN line
reaches stderr. Real LanceDB tables in tmp, damaged on disk."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from lancelot_cli.engine import Engine
from lancelot_cli.errors import TableDamagedError
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import lancelot_command, subprocess_env


def _truncate_data(table: Path) -> None:
    data = sorted((table / "data").glob("*.lance"))[0]
    data.write_bytes(data.read_bytes()[:100])


def _truncate_manifest(table: Path) -> None:
    manifest = max((table / "_versions").glob("*.manifest"), key=lambda p: p.stat().st_mtime_ns)
    manifest.write_bytes(manifest.read_bytes()[:50])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "data file truncated": _truncate_data,
    "data folder deleted": lambda table: shutil.rmtree(table / "data"),
    "index folder deleted": lambda table: shutil.rmtree(table / "_indices"),
    "manifest truncated": _truncate_manifest,
}


@pytest.fixture(params=DAMAGE, ids=list(DAMAGE))
def damaged_db(request: pytest.FixtureRequest, sample_db: Path, tmp_path: Path) -> Path:
    db = tmp_path / "db"
    shutil.copytree(sample_db, db)
    DAMAGE[request.param](db / "documents.lance")
    return db


def _says_damaged(text: str) -> None:
    assert "table 'documents' is damaged (" in text and "`lancelot index SRC DB --rebuild`" in text
    assert ".rs:" not in text and "/rustc/" not in text and "LanceError" not in text


def test_status_says_the_table_is_damaged(damaged_db: Path) -> None:
    status = Engine(load(flags={"LANCEDB_PATH": str(damaged_db)})).status()
    [entry] = status.tables
    assert status.connection.ok and entry.error is not None
    _says_damaged(entry.error)


def test_a_healthy_table_passes_the_check(sample_db: Path) -> None:
    [entry] = Engine(load(flags={"LANCEDB_PATH": str(sample_db)})).status().tables
    assert entry.error is None and entry.rows > 0


def test_search_query_and_show_say_so_in_one_line(damaged_db: Path) -> None:
    engine = Engine(load(flags={"LANCEDB_PATH": str(damaged_db)}))
    calls = [lambda: engine.search("refund policy"), lambda: engine.query("how do refunds work")]
    if (damaged_db / "documents.lance" / "_indices").exists():  # `show` reads rows, not the full-text index
        calls.append(lambda: engine.document("policies/refunds.md"))
    else:
        assert "Refund policy" in engine.document("policies/refunds.md").context
    for call in calls:
        with pytest.raises(TableDamagedError) as caught:
            call()
        _says_damaged(str(caught.value))


@pytest.mark.slow
def test_the_cli_prints_one_line_and_no_rust_warnings(damaged_db: Path, tmp_path: Path) -> None:
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "config"))
    proc = subprocess.run(
        [*lancelot_command(), "search", "refund", "--db", str(damaged_db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("lancelot: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    _says_damaged(proc.stderr)
    status = subprocess.run(
        [*lancelot_command(), "status", "--db", str(damaged_db)],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "400"},
        timeout=120,
        check=False,
    )
    assert "is damaged" in status.stdout and "WARN" not in status.stderr, status.stderr


@pytest.mark.anyio
async def test_an_agent_reads_the_same_line(damaged_db: Path) -> None:
    async with Client(build_server(load(flags={"LANCEDB_PATH": str(damaged_db)}))) as client:
        result = await client.call_tool("lancedb_search", {"query": "refund"})
    assert result.is_error
    _says_damaged(result.content[0].text)
    assert "check the table and column arguments" not in result.content[0].text


def test_index_names_the_repair_and_rebuild_makes_the_table_whole(damaged_db: Path) -> None:
    from lancelot_cli.errors import IndexingError
    from lancelot_cli.indexer import index_folder
    from tests.conftest import SAMPLE_DOCS

    with pytest.raises(IndexingError) as caught:
        index_folder(SAMPLE_DOCS, str(damaged_db))  # "no changes" would leave every search failing
    _says_damaged(str(caught.value))
    report = index_folder(SAMPLE_DOCS, str(damaged_db), rebuild=True)
    assert report.added > 0
    engine = Engine(load(flags={"LANCEDB_PATH": str(damaged_db)}))
    [entry] = engine.status().tables
    assert entry.error is None and entry.rows == report.added
    assert engine.search("refund policy").hits[0].source == "policies/refunds.md"
    assert sorted(p.name for p in damaged_db.iterdir() if not p.name.startswith(".lancelot-index-")) == [
        "documents.lance",
        "documents.languages.json",  # for the server's instructions (issue 38)
    ]  # the damaged copy and the staging folder are gone


@pytest.mark.slow
def test_the_cli_rebuild_repairs(damaged_db: Path, tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_DOCS

    env = subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "config"))
    plain = subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(damaged_db), "--no-embed"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert plain.returncode == 1 and plain.stderr.count("\n") == 1
    _says_damaged(plain.stderr)
    rebuilt = subprocess.run(
        [*lancelot_command(), "index", str(SAMPLE_DOCS), str(damaged_db), "--no-embed", "--rebuild"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    found = subprocess.run(
        [*lancelot_command(), "search", "refund policy", "--db", str(damaged_db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0 and "policies/refunds.md" in found.stdout
