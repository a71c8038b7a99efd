"""Where a hit is, for a person at a terminal (issue 24): the line each chunk of a Markdown or text
file starts on, `path:line`, the heading path and the id in `lancelot search`, and the file:// link
a terminal may open (only for a file inside the folder that was indexed, percent-encoded).

Expected lines are found in the files themselves, never taken from the indexer.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.cli.links import file_link
from lancelot_cli.indexer.chunking import chunk_lines, chunk_text
from lancelot_cli.indexer.rows import rows_for
from lancelot_cli.indexer.sources import read_document
from tests.conftest import lancelot_command, subprocess_env
from tests.support.terminal import read_all

PAGE = (
    """---
title: Shipping
tags: [orders]
---
# Shipping

Parcels leave the warehouse within two days. """
    + "Each order is packed by hand and weighed. " * 6
    + """

## Returns { #returns }

!!! note "Keep the box"
    Send it back in the original box.

A refund follows within a week of the return reaching us. """
    + "Refunds go to the card you paid with. " * 6
    + """

## Tracking

Every parcel has a tracking number. """
    + "The carrier updates it at every depot. " * 6
    + "\n"
)


def cli(*args: str | Path, **env: str) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot", env=env or None)


def _line_of(path: Path, words: str) -> int:
    """The line of ``path`` (from 1) where ``words`` appear."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if words in line)


def test_every_chunk_of_markdown_records_the_line_it_starts_on(tmp_path: Path) -> None:
    (tmp_path / "ship.md").write_text(PAGE)
    rows = rows_for(read_document(tmp_path, "ship.md"), size=60)
    assert len(rows) > 3
    for row in rows:
        first_words = row["text"].split("\n")[0][:20]
        assert row["line_start"] == _line_of(tmp_path / "ship.md", first_words), row
        assert row["line_end"] >= row["line_start"]
    assert rows[-1]["line_end"] == _line_of(tmp_path / "ship.md", "tracking number")


def test_text_files_have_lines_and_html_has_none(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("\n\nfirst paragraph\n\n\n\nsecond one\n")
    (tmp_path / "page.html").write_text("<html><body><h1>Page</h1><p>Some words here.</p></body></html>")
    text_rows = rows_for(read_document(tmp_path, "notes.txt"), size=200)
    assert [(r["line_start"], r["line_end"]) for r in text_rows] == [(3, 7)]
    assert [(r["line_start"], r["line_end"]) for r in rows_for(read_document(tmp_path, "notes.txt"), size=16)] == [
        (3, 3),
        (7, 7),
    ]
    assert all(r["line_start"] is None for r in rows_for(read_document(tmp_path, "page.html")))


def test_a_repeated_paragraph_gets_its_own_line() -> None:
    text = "same\n\nother\n\nsame\n\n\nsame"
    chunks = chunk_text(text, 5)
    assert chunks == ["same", "other", "same", "same"]
    assert chunk_lines(text, chunks) == [(1, 1), (3, 3), (5, 5), (8, 8)]
    text = "a\n\nsame\n\nsame"  # the next chunk's words also end the one before
    assert chunk_text(text, 7) == ["a\n\nsame", "same"]
    assert chunk_lines(text, chunk_text(text, 7)) == [(1, 3), (5, 5)]
    long = "word " * 100  # one paragraph cut in pieces: all on line 2
    assert set(chunk_lines("\n" + long, chunk_text("\n" + long, 50))) == {(2, 2)}


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "ship.md").write_text(PAGE)
    db = tmp_path / "db"
    result = cli("index", folder, db, "--chunk-size", "200")
    assert result.exit_code == 0, result.output
    return folder, db


def test_plain_search_prints_section_place_and_id(indexed: tuple[Path, Path]) -> None:
    folder, db = indexed
    result = cli("search", "refund", "--db", db, "-n", "1", "--per-document", "0")
    assert result.exit_code == 0, result.output
    hit = json.loads(cli("search", "refund", "--db", db, "-n", "1", "--json").stdout)["hits"][0]
    line = _line_of(folder / "guide" / "ship.md", hit["snippet"].split()[0])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1. Shipping > Returns  (score "), lines
    assert lines[1].split() == [f"guide/ship.md:{line}", "id", hit["id"]]


def test_a_link_is_made_only_for_a_file_inside_the_folder(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "secret.md").write_text("outside")
    odd = tmp_path / "docs" / "a b\x1b]8;;x\x07.md"
    odd.write_text("inside")
    link = file_link(tmp_path / "docs", odd.name, 7)
    assert link is not None and link.startswith("file:///") and link.endswith("a%20b%1B%5D8%3B%3Bx%07.md#L7")
    assert file_link(tmp_path / "docs", "../secret.md", 1) is None
    assert file_link(tmp_path / "docs", "gone.md", 1) is None
    assert file_link(tmp_path / "docs", odd.name, None) == odd.resolve().as_uri()


def _search_on_a_terminal(db: Path, *args: str) -> str:
    leader, follower = pty.openpty()
    env = subprocess_env(TERM="xterm-256color", COLUMNS="120")
    proc = subprocess.Popen(
        [*lancelot_command(), "search", "refund", "--db", str(db), *args],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    out = read_all(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    os.close(leader)
    return out.decode()


@pytest.mark.slow
def test_on_a_terminal_the_place_links_to_the_file_and_line(indexed: tuple[Path, Path]) -> None:
    folder, db = indexed
    out = _search_on_a_terminal(db, "-n", "1")
    hit = json.loads(cli("search", "refund", "--db", db, "-n", "1", "--json").stdout)["hits"][0]
    target = (folder / "guide" / "ship.md").resolve().as_uri()
    assert "\x1b]8;id=" in out and f";{target}#L{hit['metadata']['line_start']}\x1b\\" in out
    piped = subprocess.run(
        [*lancelot_command(), "search", "refund", "--db", str(db), "-n", "1"],
        capture_output=True,
        text=True,
        env=subprocess_env(TERM="xterm-256color"),
        timeout=60,
    )
    assert piped.returncode == 0 and "guide/ship.md:" in piped.stdout and "\x1b]8" not in piped.stdout
