"""What is indexed (issue 24): `lancelot ls [PREFIX]`, the closest sources named when `show` (and
``lancedb_document``) is given one that is not there, and the valid range for a chunk number that
is out of it. Expected names come from the sample folder and the --json replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.engine.listing import closest
from lancelot_cli.errors import DocumentNotFoundError
from tests.support.engines import engine_for

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample-docs"


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


def test_ls_lists_every_document_with_its_chunks_size_and_title(sample_db: Path) -> None:
    result = cli("ls", "--db", sample_db, "--json")
    assert result.exit_code == 0, result.output
    reply = json.loads(result.stdout)
    files = sorted(
        rel.as_posix()
        for rel in (p.relative_to(SAMPLE) for p in SAMPLE.rglob("*") if p.is_file())
        if not any(part.startswith(".") for part in rel.parts)  # hidden files are not indexed
    )
    assert [d["source"] for d in reply["documents"]] == files and reply["count"] == len(files)
    for entry in reply["documents"]:
        assert entry["size"] == (SAMPLE / entry["source"]).stat().st_size
        shown = json.loads(cli("show", entry["source"], "--db", sample_db, "--json").stdout)
        assert entry["chunks"] == shown["chunks"] and entry["title"] == shown["title"]
    plain = cli("ls", "--db", sample_db)
    assert plain.exit_code == 0
    assert plain.stdout.splitlines()[0].split() == ["path", "chunks", "size", "title"]
    assert f"{len(files)} documents" in plain.stderr


def test_ls_takes_a_prefix(sample_db: Path) -> None:
    reply = json.loads(cli("ls", "policies/", "--db", sample_db, "--json").stdout)
    assert reply["pathPrefix"] == "policies/"
    assert [d["source"] for d in reply["documents"]] == sorted(
        f"policies/{p.name}" for p in (SAMPLE / "policies").iterdir()
    )
    empty = cli("ls", "nowhere/", "--db", sample_db)
    assert empty.exit_code == 0 and empty.stdout == "" and "No documents under 'nowhere/'" in empty.stderr


def test_show_names_the_closest_sources_for_a_near_miss(sample_db: Path) -> None:
    result = cli("show", "refunds.md", "--db", sample_db)
    assert result.exit_code != 0 and result.stdout == ""
    assert "did you mean 'policies/refunds.md'?" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    typo = cli("show", "policies/refund.md", "--db", sample_db)
    assert "did you mean 'policies/refunds.md'" in typo.stderr
    by_id = cli("show", "refunds.md#0", "--db", sample_db)
    assert "did you mean 'policies/refunds.md#0'?" in by_id.stderr
    far = cli("show", "xylophone-manual.pdf", "--db", sample_db)
    assert "did you mean" not in far.stderr and "lancelot ls" in far.stderr


def test_show_gives_the_valid_chunk_range(sample_db: Path) -> None:
    chunks = json.loads(cli("show", "policies/refunds.md", "--db", sample_db, "--json").stdout)["chunks"]
    result = cli("show", "policies/refunds.md#99", "--db", sample_db)
    assert result.exit_code != 0
    last = f"#{chunks - 1}"
    assert f"its chunks are #0{'–' + last if chunks > 1 else ''}" in result.stderr, result.stderr


def test_the_document_tool_names_the_closest_source_too(sample_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = engine_for(sample_db, monkeypatch)
    with pytest.raises(DocumentNotFoundError, match=r"did you mean 'policies/warranty\.md'\?"):
        engine.document("warranty.md")


def test_closest_prefers_the_same_file_name() -> None:
    names = ["en/tutorial/cors.md", "en/reference/encoders.md", "zh/tutorial/cors.md", "en/tutorial/corsets.md"]
    assert closest("cors.md", names) == ["en/tutorial/cors.md", "zh/tutorial/cors.md"]
    assert closest("tutorial/cors.md", names)[:2] == ["en/tutorial/cors.md", "zh/tutorial/cors.md"]
    assert closest("en/tutorial/corz.md", names)[0] == "en/tutorial/cors.md"
    assert closest("unrelated.txt", names) == []


def test_a_mistyped_command_is_one_clean_sentence() -> None:
    result = cli("serch", "x")
    assert result.exit_code == 2
    # (click's close matches: 'bench' is as close to 'serch' as 'serve' is)
    assert result.stderr.strip() == (
        "lancelot: error: No such command 'serch'. Did you mean 'search', 'serve', 'bench'? See `lancelot --help`."
    )


# -- the tail of a search: a screenful on a terminal; serve without a database says so ------------


def test_a_terminal_search_defaults_to_a_screenful(monkeypatch: pytest.MonkeyPatch) -> None:
    from lancelot_cli.cli.read import TERMINAL_LIMIT, terminal_limit
    from lancelot_cli.settings import load

    default = load()
    assert TERMINAL_LIMIT == 10 < default.default_limit
    assert terminal_limit(default, None, on_terminal=True) == 10
    assert terminal_limit(default, None, on_terminal=False) is None  # piped: the setting's default, as MCP
    assert terminal_limit(default, 30, on_terminal=True) == 30
    monkeypatch.setenv("LANCEDB_DEFAULT_LIMIT", "15")  # a limit the user chose wins on a terminal too
    assert terminal_limit(load(), None, on_terminal=True) is None


@pytest.fixture
def many(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(25):
        (folder / f"note-{n:02}.md").write_text(f"# Note {n}\n\nThe widget number {n} is blue.\n")
    db = tmp_path / "db"
    assert cli("index", folder, db).exit_code == 0
    return db


@pytest.mark.slow
def test_search_shows_ten_hits_on_a_terminal_and_twenty_piped(many: Path) -> None:
    import os
    import pty
    import subprocess

    from tests.conftest import lancelot_command, subprocess_env
    from tests.support.terminal import read_all

    leader, follower = pty.openpty()
    env = subprocess_env(TERM="xterm-256color", COLUMNS="120")
    env.pop("LANCEDB_DEFAULT_LIMIT", None)
    proc = subprocess.Popen(
        [*lancelot_command(), "search", "widget", "--db", str(many)],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    read_all(leader)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=60) == 0, err
    os.close(leader)
    assert "10 hits in table" in err
    piped = cli("search", "widget", "--db", many)
    assert "20 hits in table" in piped.stderr


def test_serve_without_a_database_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    from lancelot_cli.cli.serve import warn_missing_database
    from lancelot_cli.settings import Settings

    warn_missing_database(Settings())
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("lancelot: warning: no database configured;") and "LANCEDB_PATH" in err
