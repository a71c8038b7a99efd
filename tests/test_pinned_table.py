"""A pinned table (issue 50 item 3): `lancelot index --tag NAME` names the version a run committed,
and a reader given ``LANCELOT_TABLE_VERSION`` (or `serve --table-version`) answers from that version
or tag while newer ones are committed, `status` says what it reads, a tag moved by the next
`index --tag` switches it, and a pin that names nothing is one line naming the table's tags.

Real LanceDB in tmp folders, the real CLI; the object-store recipe (two replicas) is in
test_pinned_replicas.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.errors import ConfigError
from tests.conftest import hash_tree, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.engines import engine_for

FIRST, SECOND, THIRD = "apricots", "bananas", "cherries"


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


def write_release(src: Path, word: str) -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / "release.md").write_text(f"# Release notes\n\nThis release talks about {word}.\n", encoding="utf-8")


def index(src: Path, db: Path, *flags: str) -> dict[str, Any]:
    result = cli("index", src, db, "--no-embed", "--json", *flags)
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A table whose first release is tagged ``v1`` and second ``live`` (module-wide; tests must not write)."""
    root = tmp_path_factory.mktemp("pinned")
    src, db = root / "docs", root / "db"
    write_release(src, FIRST)
    first = index(src, db, "--tag", "v1")
    write_release(src, SECOND)
    second = index(src, db, "--tag", "live")
    return {"src": src, "db": db, "first": first, "second": second}


def sources(engine: Any, word: str) -> list[str]:
    return [hit.source for hit in engine.search(word, search_type="text").hits]


def test_index_tag_names_the_version_the_run_committed(released: dict[str, Any]) -> None:
    import lancedb

    first, second = released["first"], released["second"]
    assert first["tag"] == {"name": "v1", "version": first["version"], "movedFrom": None}
    assert second["tag"] == {"name": "live", "version": second["version"], "movedFrom": None}
    table = lancedb.connect(released["db"]).open_table("documents")
    tags = {name: tag["version"] for name, tag in table.tags.list().items()}
    assert tags == {"v1": first["version"], "live": second["version"]} and first["version"] < second["version"]


@pytest.mark.parametrize("pin", ["v1", "version number"])
def test_a_pinned_reader_answers_from_that_version(released: dict[str, Any], pin: str) -> None:
    pin = str(released["first"]["version"]) if pin == "version number" else pin
    pinned = engine_for(released["db"], keyless=True, LANCELOT_TABLE_VERSION=pin)
    assert sources(pinned, FIRST) == ["release.md"] and sources(pinned, SECOND) == []
    latest = engine_for(released["db"], keyless=True)
    assert sources(latest, FIRST) == [] and sources(latest, SECOND) == ["release.md"]


def test_status_says_what_a_pinned_reader_reads(released: dict[str, Any]) -> None:
    first, second = released["first"]["version"], released["second"]["version"]
    table = engine_for(released["db"], keyless=True, LANCELOT_TABLE_VERSION="v1").status().tables[0]
    assert table.version == first
    assert table.search is not None
    assert table.search.startswith(f"at tag 'v1' (version {first}; the latest is {second}): text only"), table.search
    live = engine_for(released["db"], keyless=True, LANCELOT_TABLE_VERSION="live").status().tables[0]
    assert live.search is not None and live.search.startswith(f"at tag 'live' (version {second}, the latest): ")
    printed = cli("status", "--db", released["db"]).stdout
    assert re.search(r"LANCELOT_TABLE_VERSION +\(latest\) +default", printed) and "documents: text only" in printed


def test_an_unknown_pin_is_one_line_naming_the_tags(released: dict[str, Any]) -> None:
    first, second = released["first"]["version"], released["second"]["version"]
    for pin, what in (("nope", "tag 'nope'"), ("999", "version 999")):
        engine = engine_for(released["db"], keyless=True, LANCELOT_TABLE_VERSION=pin)
        with pytest.raises(ConfigError) as caught:
            engine.search(FIRST)
        message = str(caught.value)
        assert f"table 'documents' has no {what}" in message and "\n" not in message
        assert f"v1 (version {first}), live (version {second})" in message
    served = cli("serve", "--db", released["db"], "--table-version", "nope")
    assert served.exit_code == 1
    lines = served.output.strip().splitlines()
    assert len(lines) == 1 and "has no tag 'nope'" in lines[0] and "v1 (version" in lines[0], served.output
    assert "Traceback" not in served.output


def test_a_tag_moved_by_index_switches_a_running_reader(released: dict[str, Any], tmp_path: Path) -> None:
    db, src = tmp_path / "db", tmp_path / "docs"
    shutil.copytree(released["db"], db)
    shutil.copytree(released["src"], src)
    engine = engine_for(db, keyless=True, LANCELOT_TABLE_VERSION="live")
    assert sources(engine, SECOND) == ["release.md"]
    write_release(src, THIRD)
    index(src, db)  # a new version, not tagged: the reader stays
    assert sources(engine, SECOND) == ["release.md"] and sources(engine, THIRD) == []
    result = cli("index", src, db, "--no-embed", "--tag", "live")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert f"as 'live' (moved from version {released['second']['version']})." in said
    assert f"Note: tags v1 (version {released['first']['version']}) keep old versions" in said
    assert sources(engine, THIRD) == ["release.md"] and sources(engine, SECOND) == []  # the same engine


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("42", "digits only"),
        ("has space", "letters, digits"),
        (".hidden", "letters, digits"),
        ("a..b", "'..'"),
        ("x.lock", ".lock"),
        ("x" * 101, "at most 100"),
    ],
)
def test_a_tag_that_cannot_name_a_version_is_refused_before_anything_is_read(
    tmp_path: Path, name: str, why: str
) -> None:
    write_release(tmp_path / "docs", FIRST)
    result = cli("index", tmp_path / "docs", tmp_path / "db", "--no-embed", "--tag", name)
    assert result.exit_code == 1 and why in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "db").exists()


def test_tag_with_watch_is_refused(tmp_path: Path) -> None:
    write_release(tmp_path / "docs", FIRST)
    result = cli("index", tmp_path / "docs", tmp_path / "db", "--watch", "--tag", "live")
    assert result.exit_code == 2 and "--watch commits one after another" in result.output, result.output
    assert not (tmp_path / "db").exists()


@pytest.mark.slow
@pytest.mark.anyio
async def test_serve_pinned_answers_from_the_tag_and_writes_nothing(released: dict[str, Any]) -> None:
    db = released["db"]
    before = hash_tree(db)
    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve", "--table-version", "v1"],
        env=subprocess_env(LANCEDB_PATH=str(db)),
    )
    async with Client(params) as client:
        found = await client.call_tool("lancedb_search", {"query": FIRST, "searchType": "text"})
        assert not found.is_error and [h["source"] for h in found.structured_content["hits"]] == ["release.md"]
        newer = await client.call_tool("lancedb_search", {"query": SECOND, "searchType": "text"})
        assert not newer.is_error and newer.structured_content["hits"] == []
        status = await client.call_tool("lancedb_status", {})
        table = status.structured_content["tables"][0]
        assert table["version"] == released["first"]["version"]
        assert table["search"].startswith("at tag 'v1' "), text_of(status)
    assert hash_tree(db) == before
