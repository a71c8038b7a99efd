"""The weighted BM25 query computed from single-column queries (storage/read/fts_split.py) returns
exactly the combined query's rows, scores and order, or defers to it: on a folder indexed by
`lancelot index` (text, title, heading and path indexes; duplicate pages, so equal scores), with
a filter, with rows added since the last full-text indexing, and at several limits. The split is
forced on this small table by lowering its size threshold; it must really run (a lancedb upgrade
that breaks it would otherwise pass unseen)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lancelot_cli.engine import ranking
from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.read import fts_split
from lancelot_cli.storage.read.database import ReadOnlyDatabase
from lancelot_cli.storage.read.filters import build_filter
from lancelot_cli.storage.write.table import TableWriter
from lancelot_cli.textmatch import query_words

# Pseudo-words (so no stemming or stop-word list merges them), drawn with Zipf-like weights as
# words of real text are: a few common ones in most chunks, most of them rare.
WORDS = [
    a + b + c
    for a in ("ka", "lo", "mi", "su", "te", "ra")
    for b in ("ne", "vo", "di", "pu", "ga")
    for c in ("rt", "lm", "sk", "nd", "x", "q", "ph", "z", "bb", "ck")
]
WEIGHTS = [1 / (rank + 1) for rank in range(len(WORDS))]


def some_words(rng: random.Random, count: int) -> list[str]:
    return rng.choices(WORDS, WEIGHTS, k=count)


def write_pages(folder: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(count):
        title = " ".join(some_words(rng, 2)).title()
        sections = []
        for _ in range(rng.randint(1, 3)):
            heading = " ".join(some_words(rng, rng.randint(1, 3)))
            body = " ".join(some_words(rng, rng.randint(20, 120)))
            sections.append(f"## {heading}\n\n{body}.\n")
        text = f"# {title}\n\n" + "\n".join(sections)
        sub = folder / rng.choice(["guide", "api", "ops"])
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{some_words(rng, 1)[0]}-{i}.md").write_text(text)
        if i % 10 == 0:  # the same page twice: equal scores, broken by row id
            (sub / f"copy-{i}.md").write_text(text)


@pytest.fixture
def pages(tmp_path: Path) -> tuple[Path, Path]:
    src, db = tmp_path / "src", tmp_path / "db"
    write_pages(src, 160, seed=5)
    index_folder(src, str(db))
    return src, db


def compare(
    db: Path, queries: list[str], limit: int, monkeypatch: pytest.MonkeyPatch, path_prefix: str | None = None
) -> int:
    """Assert the split equals the combined query for every query; how many times it answered."""
    tbl = ReadOnlyDatabase(str(db)).table("documents")
    facts = tbl.facts
    boosts = ranking.field_boosts(facts, "text")
    assert set(boosts) == {"title", "heading", "path"}
    columns = ranking.reply_columns(facts)
    row_filter = build_filter(facts, path_prefix, None)
    answered = 0
    real = fts_split.search

    def counted(*args: object, **kwargs: object) -> object:
        nonlocal answered
        rows = real(*args, **kwargs)  # type: ignore[arg-type]
        answered += rows is not None
        return rows

    for query in queries:
        words = " ".join(query_words(query))
        monkeypatch.setattr(fts_split, "MIN_ROWS", 10**12)  # the combined query
        combined = tbl.fts(words, "text", limit, columns, row_filter, boosts)
        monkeypatch.setattr(fts_split, "MIN_ROWS", 0)
        monkeypatch.setattr(fts_split, "search", counted)
        split = tbl.fts(words, "text", limit, columns, row_filter, boosts)
        monkeypatch.setattr(fts_split, "search", real)
        assert split == combined, (
            query,
            [(r["id"], r["_score"]) for r in split],
            [(r["id"], r["_score"]) for r in combined],
        )
    return answered


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(some_words(rng, rng.randint(1, 4))) for _ in range(count)]


@pytest.mark.parametrize("limit", [1, 20, 60])
def test_split_gives_the_combined_querys_rows_scores_and_order(pages, limit, monkeypatch) -> None:
    _, db = pages
    asked = queries(30, seed=limit)
    answered = compare(db, asked, limit, monkeypatch)
    assert answered >= 5  # it really ran (and was sure) for some, not only deferred to the combined query


def test_split_with_a_filter_and_not_while_rows_wait_for_the_full_text_index(pages, monkeypatch) -> None:
    src, db = pages
    assert compare(db, queries(20, seed=11), 20, monkeypatch, path_prefix="guide/") >= 5
    write_pages(src / "new", 3, seed=99)  # a small re-index: the new rows are searched unindexed
    index_folder(src, str(db))
    tbl = ReadOnlyDatabase(str(db)).table("documents")
    assert tbl.fts_coverage()["unindexed"] > 0
    # Then LanceDB's own combined scores vary in the last float32 bit from one run to the next
    # (measured: 13 of these 20 queries): there is no one answer to match, so the split stands aside.
    facts = tbl.facts
    for query in queries(5, seed=12):
        assert (
            fts_split.search(
                tbl._table, query, "text", ranking.field_boosts(facts, "text"), 20, ranking.reply_columns(facts), None
            )
            is None
        )
    TableWriter(str(db), "documents").optimize(force=True)
    assert ReadOnlyDatabase(str(db)).table("documents").fts_coverage()["unindexed"] == 0
    assert compare(db, queries(20, seed=12), 20, monkeypatch) >= 5


def test_a_bound_that_cannot_be_met_defers_to_the_combined_query(pages, monkeypatch) -> None:
    _, db = pages
    monkeypatch.setattr(fts_split, "CANDIDATES", 1)  # one text row: no bound can hold for a limit of 20
    tbl = ReadOnlyDatabase(str(db)).table("documents")
    facts = tbl.facts
    rows = fts_split.search(
        tbl._table,
        " ".join(WORDS[:3]),
        "text",
        ranking.field_boosts(facts, "text"),
        20,
        ranking.reply_columns(facts),
        None,
    )
    assert rows is None


# Pseudo-words in Hangul: pages of them are Korean, their rows' text also in ``text_ko`` (n-grams).
HANGUL_WORDS = [a + b + c for a in "가나다라마" for b in "경동문빛솔" for c in "을는에서"]


def test_split_in_a_languages_column_gives_the_combined_querys_rows(tmp_path: Path, monkeypatch) -> None:
    """Issue 51: the query in a language's column (only rows that match there: the combined query's
    first clause a MUST) is split as the text's is, with the same rows, scores and order."""
    src, db = tmp_path / "src", tmp_path / "db"
    write_pages(src, 60, seed=7)
    rng = random.Random(8)
    for i in range(60):
        body = " ".join(rng.choices(HANGUL_WORDS, k=rng.randint(20, 80)))
        title = " ".join(rng.choices(HANGUL_WORDS, k=2)) + " " + some_words(rng, 1)[0]
        (src / "ko").mkdir(exist_ok=True)
        (src / "ko" / f"page-{i}.md").write_text(f"# {title}\n\n{body}.\n", encoding="utf-8")
    index_folder(src, str(db))
    tbl = ReadOnlyDatabase(str(db)).table("documents")
    facts = tbl.facts
    assert "text_ko" in facts.fts_columns
    boosts = ranking.field_boosts(facts, "text")
    columns = ["id", "_rowid"][:1]
    answered = 0
    real = fts_split.search

    def counted(*args: object, **kwargs: object) -> object:
        nonlocal answered
        rows = real(*args, **kwargs)  # type: ignore[arg-type]
        answered += rows is not None
        return rows

    for n in range(20):
        words = " ".join(rng.choices(HANGUL_WORDS, k=rng.randint(1, 3)) + some_words(rng, n % 2))
        monkeypatch.setattr(fts_split, "MIN_ROWS", 10**12)
        combined = tbl._fts(words, "text_ko", 10, columns, None, boosts, required=True)
        monkeypatch.setattr(fts_split, "MIN_ROWS", 0)
        monkeypatch.setattr(fts_split, "search", counted)
        split = tbl._fts(words, "text_ko", 10, columns, None, boosts, required=True)
        monkeypatch.setattr(fts_split, "search", real)
        assert split == combined, words
        assert all(row["id"].startswith("ko/") for row in split)  # rows of the column only
    assert answered >= 5
