"""A small re-index commits without ``optimize()`` (storage.policy.OptimizePolicy), and a search
right after it still finds the new words and not the removed ones: LanceDB 0.40 scans the rows its
full-text indexes do not cover yet and hides deleted rows at once. Larger rewrites, and an idle
``--watch``, still optimize. Everything runs through the real indexer, LanceDB and engine.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.engine import Engine
from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.write.policy import OPTIMIZE_POLICY, OptimizePolicy
from lancelot_cli.storage.write.table import TableWriter
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

MODEL = "hashed-words-32"
FILES = 60  # one file of 60 is under the policy's share and row count: its re-index is not optimized


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-words vector (hashed words), so vector search has real neighbours."""
    out = []
    for text in texts:
        vector = [0.0] * 32
        for word in re.findall(r"[a-z]+", text.lower()):
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 32] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        out.append([v / norm for v in vector])
    return out


def write_folder(root: Path) -> None:
    for n in range(FILES):
        (root / f"note-{n:02d}.md").write_text(
            f"# Note {n}\n\nPlain notes about topic {n}, shipping and returns, numbered {n}.\n", encoding="utf-8"
        )
    (root / "note-07.md").write_text("# Garden\n\nThe quokkaword lives here with parsnips.\n", encoding="utf-8")
    (root / "note-08.md").write_text("# Kitchen\n\nA page about the vanishword and its soup.\n", encoding="utf-8")


def sources(engine: Engine, query: str, search_type: str = "text") -> list[str]:
    reply = to_wire(engine.search(query, limit=20, search_type=search_type))
    return [hit["source"] for hit in reply["hits"]]


def coverage(db: Path) -> tuple[int, int]:
    writer = TableWriter(str(db), "documents")
    return writer.count(), writer.unindexed()


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    src, db = tmp_path / "src", tmp_path / "db"
    src.mkdir()
    write_folder(src)
    first = index_folder(src, str(db), embed=embed, model=MODEL)
    assert first.committed and first.optimized  # a new table is built with every row indexed
    assert coverage(db) == (FILES, 0)
    return src, db


@pytest.mark.parametrize("search_type", ["text", "hybrid"])
def test_search_right_after_a_small_reindex_finds_new_words_and_not_removed_ones(indexed, search_type) -> None:
    src, db = indexed
    engine = engine_for(db, embed=embed, EMBEDDING_MODEL=MODEL)
    assert sources(engine, "quokkaword", search_type)[:1] == ["note-07.md"]
    assert "note-08.md" in sources(engine, "vanishword", search_type)

    (src / "note-07.md").write_text("# Zebulonword\n\nNow about the newfreshword only.\n", encoding="utf-8")
    (src / "note-08.md").unlink()
    (src / "added.md").write_text("# Added\n\nAn addedfreshword appears.\n", encoding="utf-8")
    report = index_folder(src, str(db), embed=embed, model=MODEL)
    assert report.committed and not report.optimized  # the small change is left unindexed on purpose
    rows, unindexed = coverage(db)
    assert rows == FILES and unindexed == 2  # the rewritten chunk and the added one

    text_hits = sources(engine, "newfreshword", search_type)
    assert text_hits[:1] == ["note-07.md"]
    assert sources(engine, "addedfreshword", search_type)[:1] == ["added.md"]
    assert sources(engine, "zebulonword", search_type)[:1] == ["note-07.md"]  # a title word: the title index
    if search_type == "text":  # hybrid also returns vector neighbours, which need not contain the word
        assert sources(engine, "quokkaword", search_type) == []
        assert sources(engine, "vanishword", search_type) == []
    else:
        assert "note-08.md" not in sources(engine, "vanishword", search_type)
        vector_hits = sources(engine, "newfreshword only", "vector")
        assert vector_hits[:1] == ["note-07.md"]  # the unindexed row's new vector is searched too


def test_bm25_scores_of_unindexed_rows_match_the_indexed_ones(indexed) -> None:
    """Before and after optimize(): the same rank order; the unindexed row's own score is the same
    (LanceDB scores it with statistics that count it); the indexed rows' scores use the index's
    statistics, which leave the unindexed row out until then, so they move a little (here one row of
    60 is rewritten, which moves a word's document frequency by one: up to ~12 %; on 25,000 chunks
    with up to 10 % rewritten, at most ~2 %, tests/benchmarks/README.md)."""
    src, db = indexed
    engine = engine_for(db, embed=embed, EMBEDDING_MODEL=MODEL)
    (src / "note-07.md").write_text(
        "# Garden\n\nThe quokkaword lives here with parsnips, and topic 3.\n", encoding="utf-8"
    )
    report = index_folder(src, str(db))
    assert not report.optimized and coverage(db)[1] == 1

    def scored(query: str) -> list[tuple[str, float]]:
        reply = to_wire(engine.search(query, limit=10, search_type="text"))
        return [(hit["source"], hit["score"]) for hit in reply["hits"]]

    queries = ("quokkaword parsnips", "topic 3 shipping", "garden")  # (words in nearly every row score ~0)
    before = [scored(q) for q in queries]
    assert TableWriter(str(db), "documents").optimize(force=True)
    assert coverage(db)[1] == 0
    after = [scored(q) for q in queries]
    for b, a in zip(before, after, strict=True):
        assert [s for s, _ in b] == [s for s, _ in a]
        for (source, x), (_, y) in zip(b, a, strict=True):
            assert x == pytest.approx(y, rel=1e-4 if source == "note-07.md" else 0.2), (source, b, a)


def test_a_large_rewrite_and_many_commits_are_optimized(indexed) -> None:
    src, db = indexed
    assert OPTIMIZE_POLICY.unindexed_share * FILES < 6
    for n in range(10, 16):  # 6 of 60 files: 10 % of the table
        (src / f"note-{n:02d}.md").write_text(f"# Note {n}\n\nRewritten {n}.\n", encoding="utf-8")
    report = index_folder(src, str(db))
    assert report.committed and report.optimized
    assert coverage(db) == (FILES, 0)

    policy = OptimizePolicy(unindexed_rows=200, unindexed_share=0.05, fragments=32)
    assert not policy.due(rows=1_000_000, unindexed=199, fragments=31)
    assert policy.due(rows=1_000_000, unindexed=200, fragments=1)
    assert policy.due(rows=100, unindexed=5, fragments=2)
    assert policy.due(rows=1_000_000, unindexed=0, fragments=32)
    assert not policy.due(rows=100, unindexed=0, fragments=2)


def test_a_no_change_run_folds_rows_left_over_the_policy(indexed, monkeypatch) -> None:
    """Rows a killed run committed without optimize() are folded by the next run once they are due."""
    from lancedb.table import LanceTable

    from lancelot_cli.indexer import ledger

    src, db = indexed
    for n in range(20, 30):
        (src / f"note-{n:02d}.md").write_text(f"# Note {n}\n\nChanged {n}.\n", encoding="utf-8")
    kept = Path(ledger.path_for(str(db), "documents")).read_bytes()
    with monkeypatch.context() as patch:
        patch.setattr(LanceTable, "optimize", lambda self, *a, **k: None)  # what a crash before it leaves
        index_folder(src, str(db))
    # A killed run never gets to write its ledger: the last run's is left, which no longer matches the table.
    Path(ledger.path_for(str(db), "documents")).write_bytes(kept)
    assert coverage(db)[1] == 10
    rerun = index_folder(src, str(db))
    assert not rerun.committed and rerun.optimized
    assert coverage(db) == (FILES, 0)


@pytest.mark.slow
def test_an_idle_watcher_optimizes_what_its_batches_left(indexed) -> None:
    from lancelot_cli.indexer.watch import watch_folder

    src, db = indexed
    stop = threading.Event()
    batches: list[Any] = []
    errors: list[str] = []
    thread = threading.Thread(
        target=watch_folder,
        args=(src, str(db)),
        daemon=True,
        kwargs={"on_batch": batches.append, "on_error": errors.append, "stop": stop, "idle_optimize_s": 1.5},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not batches and time.monotonic() < deadline:
            time.sleep(0.05)
        assert batches, errors
        # The first pass runs once the watcher is subscribed to file events (indexer/watch.py), so
        # a file saved after it reported is an event for the next batch.
        (src / "note-30.md").write_text("# Note 30\n\nA watchfreshword.\n", encoding="utf-8")
        while len(batches) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(batches) >= 2 and batches[-1].committed and not batches[-1].optimized, errors
        assert sources(engine_for(db, embed=embed, EMBEDDING_MODEL=MODEL), "watchfreshword") == ["note-30.md"]
        while coverage(db)[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert coverage(db) == (FILES, 0), errors  # folded once the folder was quiet for 1.5 s
        assert sources(engine_for(db, embed=embed, EMBEDDING_MODEL=MODEL), "watchfreshword") == ["note-30.md"]
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive() and not errors
