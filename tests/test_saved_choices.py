"""What `lancelot index` keeps with the table besides --exclude (indexer/saved_options.py, issue 39
item 9): `--no-embed` (a plain re-run stays text only and stops saying how to get vectors) and the
chunk size (a different `--chunk-size` waits for `--rebuild`, and one line says so).

The real command (in-process, and in a subprocess where a local model embeds), real LanceDB tables
in tmp folders; the local model is the tiny ONNX encoder of tests/support/tiny_onnx.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import lancedb
import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.storage.schema import HASH, OPTIONS_TAG
from tests.conftest import lancelot_command, subprocess_env

NOTE = "note: text search only"


class Ran:
    def __init__(self, stdout: str, stderr: str) -> None:
        self.stdout, self.stderr = stdout, stderr


def index(*args: str | Path) -> Ran:
    """`lancelot index ARGS --json`, in-process."""
    result = CliRunner().invoke(app, ["index", *map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return Ran(result.stdout, result.stderr)


def index_process(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*lancelot_command(), "index", *map(str, args), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        env=subprocess_env(**env),
    )
    assert done.returncode == 0, done.stderr
    return done


def saved(db: Path) -> dict[str, Any]:
    """The index options saved with the documents table."""
    field = lancedb.connect(str(db)).open_table("documents").schema.field("path")
    return json.loads((field.metadata or {})[OPTIONS_TAG.encode()])


def chunk_lengths(db: Path) -> list[int]:
    return [len(text) for text in lancedb.connect(str(db)).open_table("documents").to_arrow()["text"].to_pylist()]


def test_no_embed_is_remembered_and_the_note_is_said_no_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    (src / "a.md").write_text("# Kayaks\n\nThe kayak needs a new seat.\n", encoding="utf-8")
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))  # no local model here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert NOTE in index(src, tmp_path / "other-db").stderr  # what a plain run says without the choice
    first = index(src, db, "--no-embed")
    assert NOTE not in first.stderr and saved(db)["embed"] is False
    unchanged = index(src, db)  # answered from the ledger
    (src / "b.md").write_text("# Seats\n\nSeats come in two sizes.\n", encoding="utf-8")
    changed = index(src, db)  # opens the table and writes
    for run in (unchanged, changed):
        assert NOTE not in run.stderr, run.stderr
        assert json.loads(run.stdout)["vectorsHint"] is None
    assert json.loads(changed.stdout)["added"] == 1


def test_the_vectors_note_is_said_when_the_table_is_written_not_on_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45 item 10: a plain re-run that changed nothing printed the same three-line note again."""
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    (src / "a.md").write_text("# Kayaks\n\nThe kayak needs a new seat.\n", encoding="utf-8")
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))  # no local model here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    made = index(src, db)
    assert NOTE in made.stderr
    unchanged = index(src, db)
    assert NOTE not in unchanged.stderr, unchanged.stderr
    assert json.loads(unchanged.stdout)["vectorsHint"] == json.loads(made.stdout)["vectorsHint"]  # kept for scripts
    (src / "b.md").write_text("# Seats\n\nSeats come in two sizes.\n", encoding="utf-8")
    assert NOTE in index(src, db).stderr  # the table changed: said again


@pytest.mark.slow
def test_a_saved_no_embed_holds_until_embed_is_asked_for(tmp_path: Path) -> None:
    """With a local model on the machine a plain run would embed; after --no-embed it does not,
    and --embed lifts the choice (plain runs embed again)."""
    from tests.support.tiny_onnx import build

    model = build(tmp_path / "model", ["kayak", "seat"])
    local = {"EMBEDDING_MODEL": f"local:{model}"}
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    (src / "a.md").write_text("# Kayaks\n\nThe kayak needs a new seat.\n", encoding="utf-8")
    index_process(src, db, "--no-embed", **local)
    (src / "b.md").write_text("# Seats\n\nSeats come in two sizes.\n", encoding="utf-8")
    plain = json.loads(index_process(src, db, **local).stdout)
    assert plain["embeddingModel"] is None and plain["added"] == 1
    assert "vector" not in lancedb.connect(str(db)).open_table("documents").schema.names
    asked = json.loads(index_process(src, db, "--embed", **local).stdout)
    assert asked["embedded"] == 2 and "embed" not in saved(db)
    (src / "c.md").write_text("# Paddles\n\nPaddles are sold in pairs.\n", encoding="utf-8")
    again = json.loads(index_process(src, db, **local).stdout)
    assert again["embeddingModel"] == f"local:{model.resolve()}" and again["embedded"] == 1


def test_a_new_chunk_size_waits_for_rebuild_and_says_so(tmp_path: Path) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    paragraphs = "\n\n".join(f"Paragraph {i} says something about kayak seat number {i}, at length." for i in range(40))
    (src / "a.md").write_text(f"# Kayaks\n\n{paragraphs}\n", encoding="utf-8")
    index(src, db, "--no-embed")
    assert saved(db)["chunkSize"] == 1200
    before = chunk_lengths(db)
    (src / "b.md").write_text(f"# Seats\n\n{paragraphs}\n", encoding="utf-8")
    smaller = index(src, db, "--chunk-size", "300")
    notes = [line for line in smaller.stderr.splitlines() if "--chunk-size 300" in line]
    said = (
        "note: --chunk-size 300 is not applied: the table's chunks are cut at 1200 characters; "
        "run again with --rebuild to cut every file at 300"
    )
    assert notes == [said], smaller.stderr
    assert json.loads(smaller.stdout)["chunkSizeNote"] == notes[0].removeprefix("note: ")
    assert max(chunk_lengths(db)) > 300 and len(chunk_lengths(db)) == 2 * len(before)  # b.md cut like a.md
    assert "--chunk-size" not in index(src, db).stderr  # a plain run: the table's size, nothing to say
    rebuilt = index(src, db, "--chunk-size", "300", "--rebuild")
    assert "--chunk-size" not in rebuilt.stderr and saved(db)["chunkSize"] == 300
    assert max(chunk_lengths(db)) <= 300
    (src / "c.md").write_text(f"# Paddles\n\n{paragraphs}\n", encoding="utf-8")
    index(src, db)  # a plain run keeps the saved size for the new file
    assert max(chunk_lengths(db)) <= 300


def test_text_an_older_version_read_is_read_again_once(tmp_path: Path) -> None:
    """A table whose text an older version read (issue 39 item 5: `ASGI</abbr>` stayed in the
    FastAPI docs' tables until --rebuild) has every file read again by the next plain run, once."""
    docs, db = tmp_path / "docs", tmp_path / "db"
    docs.mkdir()
    (docs / "asgi.md").write_text("# ASGI\n\nIt implements the <abbr>ASGI</abbr> specification.\n", encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\nNothing to clean here.\n", encoding="utf-8")
    index(docs, db)
    assert saved(db)["textVersion"] >= 2
    # The table as the older version left it: the tag in the text, no text version saved.
    table = lancedb.connect(str(db)).open_table("documents")
    old = {key: value for key, value in saved(db).items() if key != "textVersion"}
    old_text = "ASGI It implements the ASGI</abbr> specification."
    table.update(where="path = 'asgi.md'", values={"text": old_text, HASH: "hash of the old text"})
    table.update_field_metadata({"path": "path", "metadata": {OPTIONS_TAG: json.dumps(old)}})

    again = index(docs, db)
    summary = json.loads(again.stdout)
    assert summary["textReadAgain"] is True and summary["updated"] == 1 and summary["added"] == 0
    texts = lancedb.connect(str(db)).open_table("documents").to_arrow()["text"].to_pylist()
    assert not any("</abbr>" in text for text in texts) and any("ASGI specification" in text for text in texts)
    assert "every file was read again" in again.stderr

    after = index(docs, db)
    summary = json.loads(after.stdout)
    assert summary["textReadAgain"] is False and summary["updated"] == 0
    assert "read again" not in after.stderr
