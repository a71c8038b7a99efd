"""`lancelot index` commits the text first and the vectors after (indexer/embedding.py): the table is
searchable while it embeds, Ctrl-C there keeps the text and the vectors committed, the next run
embeds only the rest; a plain run embeds by default only with a local model already on this
machine, and says in one line how to get vectors when there is none.

The real command in a subprocess against the loopback OpenAI-compatible server (tests/support),
real LanceDB tables; the local model is the tiny ONNX encoder of tests/support/tiny_onnx.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import lancedb
import pytest

from lancelot_cli.indexer import embedding
from tests.conftest import lancelot_command, subprocess_env
from tests.support.embed_server import MODEL, EmbedServer


def make_docs(root: Path, count: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / f"note{i:03d}.md").write_text(
            f"# Note {i}\n\nThe kayak number {i} needs a new seat.\n", encoding="utf-8"
        )


def vectors(db: Path) -> tuple[int, int]:
    """(rows, rows with a vector) of the documents table."""
    table = lancedb.connect(str(db)).open_table("documents")
    column = table.to_arrow().column("vector").to_pylist()
    return len(column), sum(v is not None for v in column)


def api_env(server: EmbedServer, **extra: str) -> dict[str, str]:
    return subprocess_env(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", EMBEDDING_MODEL=MODEL, **extra)


@pytest.mark.slow
def test_ctrl_c_while_embedding_keeps_the_text_and_the_vectors_made(tmp_path: Path, embed_server: EmbedServer) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    count = embedding.EMBED_BATCH * 4  # one chunk a note: four embedding requests
    make_docs(src, count)
    embed_server.hold_after = 2  # two batches go through; the third waits
    process = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(db), "--embed"],
        env=api_env(embed_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while embed_server.requests < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert embed_server.requests >= 3, process.communicate(timeout=10)
        # the text is in while the run is stuck in its third batch
        assert lancedb.connect(str(db)).open_table("documents").count_rows() == count
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        embed_server.release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith(
        "lancelot: error: interrupted (Ctrl-C) while embedding: the table is searchable by text"
    ), err
    assert f"{2 * embedding.EMBED_BATCH:,} of {count:,} new chunks have vectors" in lines[-1]
    assert "Traceback" not in err
    assert vectors(db) == (count, 2 * embedding.EMBED_BATCH)

    search = subprocess.run(
        [*lancelot_command(), "search", "kayak seat", "--db", str(db), "--json", "--type", "text"],
        env=api_env(embed_server),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert search.returncode == 0 and json.loads(search.stdout)["hits"], search.stderr

    embed_server.reset()
    again = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db), "--embed", "--json"],
        env=api_env(embed_server),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["read"] == 0  # no file read again: the rows without vectors come from the table
    assert report["embedded"] == count - 2 * embedding.EMBED_BATCH
    assert vectors(db) == (count, count)


@pytest.mark.slow
def test_a_plain_index_without_a_local_model_says_how_to_get_vectors(tmp_path: Path) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    make_docs(src, 3)
    empty_cache = tmp_path / "fastembed-cache"
    done = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(FASTEMBED_CACHE_PATH=str(empty_cache), HF_HUB_OFFLINE="1"),
    )
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: text search only")]
    assert len(notes) == 1 and "--embed-model local:" in notes[0] and "nothing is downloaded" in notes[0]
    assert not any(empty_cache.rglob("*.onnx"))  # nothing fetched
    assert "vector" not in lancedb.connect(str(db)).open_table("documents").schema.names
    quiet = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db), "--no-embed"],
        capture_output=True,
        text=True,
        timeout=120,
        env=subprocess_env(FASTEMBED_CACHE_PATH=str(empty_cache)),
    )
    assert quiet.returncode == 0 and "text search only" not in quiet.stderr


@pytest.mark.slow
def test_a_plain_index_embeds_with_the_local_model_on_this_machine(tmp_path: Path) -> None:
    from tests.support.tiny_onnx import build

    model = build(tmp_path / "model", ["kayak", "seat", "note"])
    src, db = tmp_path / "src", tmp_path / "db"
    make_docs(src, 5)
    done = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        env=subprocess_env(EMBEDDING_MODEL=f"local:{model}"),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embeddingModel"] == f"local:{model.resolve()}" and report["embedded"] == 5
    assert report["textSeconds"] <= report["seconds"]
    assert vectors(db) == (5, 5)


def test_whether_a_model_may_be_here_is_judged_without_fastembed(tmp_path: Path, monkeypatch) -> None:
    from lancelot_cli import local_embed

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    assert not local_embed.maybe_here(local_embed.DEFAULT_MODEL)
    (cache / "models--qdrant--all-MiniLM-L6-v2-onnx").mkdir()  # where fastembed keeps it
    assert local_embed.maybe_here(local_embed.DEFAULT_MODEL)
    assert not local_embed.maybe_here(f"local:{tmp_path / 'no-such-folder'}")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "model.onnx").write_bytes(b"")
    assert local_embed.maybe_here(f"local:{tmp_path / 'folder'}")
