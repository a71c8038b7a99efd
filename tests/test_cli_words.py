"""What the CLI says names the CLI's own options (issue 39): a document cut to fit says `--budget`,
not the tool's ``contextBudget``; too many `--also` and an out-of-range `--per-document` are usage
errors naming the option, not the engine's ``queries`` and ``perDocument``. And `ls` of a table
another tool wrote (a ``text`` column, no path) says why it lists nothing instead of one nameless
row. In-process (CliRunner) against real LanceDB tables in tmp folders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Markdown page of twelve sections: many chunks, so a small budget cuts it."""
    from lancelot_cli.indexer import index_folder

    folder = tmp_path_factory.mktemp("long")
    sections = "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"Paragraph {n} sentence {k} about refunds and returns." for k in range(40))
        for n in range(12)
    )
    (folder / "guide.md").write_text(f"# Guide\n\n{sections}\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("long-db") / "db"
    index_folder(str(folder), str(db))
    return db


def test_a_cut_document_names_the_budget_option(long_db: Path) -> None:
    result = cli("show", "guide.md", "--budget", "600", "--db", long_db)
    assert result.exit_code == 0, result.output
    assert "(or a larger --budget)._" in result.stdout
    assert "contextBudget" not in result.stdout


def test_the_json_of_a_cut_document_stays_the_tools_reply(long_db: Path) -> None:
    result = cli("show", "guide.md", "--budget", "600", "--db", long_db, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["context"].endswith("(or a larger contextBudget)._\n")


def test_a_window_cut_to_fit_names_the_budget_option_too(long_db: Path) -> None:
    result = cli("show", "guide.md#3", "--after", "8", "-b", "700", "--db", long_db)
    assert result.exit_code == 0, result.output
    assert "--budget" in result.stdout and "contextBudget" not in result.stdout


def test_a_small_budget_after_a_heading_shows_the_start_of_the_next_chunk(tmp_path: Path) -> None:
    """`show --page 30 -b 600` of a PDF manual printed one heading-only chunk and "3 more chunks cut"
    (issue 39): a chunk that does not fit whole is cut to fit while 200 characters of room are left."""
    from lancelot_cli.indexer import index_folder

    folder = tmp_path / "docs"
    folder.mkdir()
    long = " ".join(f"Step {k} opens the drain valve and waits." for k in range(60))
    (folder / "manual.md").write_text(f"# Manual\n\n## Default rules file\n\n{long}\n", encoding="utf-8")
    index_folder(str(folder), str(tmp_path / "db"))
    reply = json.loads(cli("show", "manual.md", "-b", "600", "--db", tmp_path / "db", "--json").stdout)
    assert "Step 0 opens the drain valve" in reply["context"] and "[cut to fit:" in reply["context"]
    assert len(reply["context"]) <= 600


def test_too_many_phrasings_is_a_usage_error_naming_also(long_db: Path) -> None:
    also = [arg for n in range(7) for arg in ("--also", f"refund {n}")]
    for command in ("search", "query"):
        result = cli(command, "refunds", *also, "--db", long_db)
        assert result.exit_code == 2, result.output
        assert "'--also'" in result.stderr and "at most 6" in result.stderr
        assert "queries" not in result.stderr
    assert cli("search", "refunds", *also[:12], "--db", long_db).exit_code == 0


@pytest.mark.parametrize("value", ["-1", "201"])
def test_per_document_out_of_range_names_the_option(long_db: Path, value: str) -> None:
    result = cli("search", "refunds", "--per-document", value, "--db", long_db)
    assert result.exit_code == 2, result.output
    assert "'--per-document'" in result.stderr and "perDocument" not in result.stderr


def test_ls_of_a_foreign_table_says_it_has_no_documents(tmp_path: Path) -> None:
    import lancedb

    db = tmp_path / "db"
    rows = [{"text": "first note about refunds", "n": 1}, {"text": "second note about shipping", "n": 2}]
    lancedb.connect(str(db)).create_table("notes", data=rows)
    result = cli("ls", "--table", "notes", "--db", db)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "'notes' has no source column" in line and "lancelot search" in line
    # what it does find: the rows, by search
    found = cli("search", "refunds", "--table", "notes", "--db", db, "--json")
    assert json.loads(found.stdout)["count"] == 1
