"""LANCELOT_INDEX_CACHE_MB: the setting reaches LanceDB (a reader opened with a 1 MiB cap holds far
less index data after the same searches than an uncapped one, which holds several MiB) and changes
no result (the same rows, scores and order with and without the cap)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lancelot_cli.settings import ConfigError, load
from lancelot_cli.storage.read.database import ReadOnlyDatabase

# Pseudo-words (no stemming or stop word merges them), Zipf-like: posting lists of every length.
WORDS = [
    a + b + c + d
    for a in ("ka", "lo", "mi", "su", "te", "ra", "bo", "ze")
    for b in ("ne", "vo", "di", "pu")
    for c in ("rt", "lm", "sk", "nd", "x", "q", "ph", "z")
    for d in ("a", "o", "u", "ei")
]
WEIGHTS = [1 / (rank + 1) ** 0.8 for rank in range(len(WORDS))]
ROWS = 40_000


@pytest.fixture(scope="module")
def big_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import lancedb
    import pyarrow as pa

    from lancelot_cli.storage.analyzer import fts_config

    rng = random.Random(3)
    texts = [" ".join(rng.choices(WORDS, WEIGHTS, k=60)) for _ in range(ROWS)]
    db = tmp_path_factory.mktemp("cache") / "db"
    table = lancedb.connect(str(db)).create_table(
        "documents", pa.table({"id": [str(i) for i in range(ROWS)], "text": texts})
    )
    table.create_index("text", config=fts_config())
    return db


def searched(db: ReadOnlyDatabase, queries: list[str]) -> list[list[tuple[str, float]]]:
    table = db.table("documents")
    return [[(row["id"], row["_score"]) for row in table.fts(q, "text", 10, ["id"])] for q in queries]


def queries(count: int) -> list[str]:
    rng = random.Random(8)
    return [" ".join(rng.sample(WORDS, 6)) for _ in range(count)]


@pytest.mark.slow
def test_the_cap_bounds_the_index_cache_and_changes_no_result(big_table: Path) -> None:
    asked = queries(150)
    uncapped = ReadOnlyDatabase(str(big_table), index_cache_mb=6144)  # LanceDB's own default size
    capped = ReadOnlyDatabase(str(big_table), index_cache_mb=1)
    assert searched(capped, asked) == searched(uncapped, asked)
    held_uncapped, held_capped = uncapped.index_cache_bytes(), capped.index_cache_bytes()
    assert held_uncapped is not None and held_capped is not None
    assert held_uncapped > 3 << 20  # the test can fail: these searches fill several times the cap
    assert held_capped < held_uncapped / 2


@pytest.mark.slow
def test_the_engine_opens_its_database_with_the_setting(big_table: Path, tmp_path: Path) -> None:
    from lancelot_cli.engine import Engine

    settings = load(
        environ={"LANCEDB_PATH": str(big_table), "LANCELOT_CONFIG_DIR": str(tmp_path), "LANCELOT_INDEX_CACHE_MB": "1"}
    )
    assert settings.index_cache_mb == 1
    engine = Engine(settings)
    for query in queries(150):
        engine.search(query, limit=10, search_type="text")
    held = engine.database().index_cache_bytes()
    assert held is not None and held < 3 << 20
    assert load(environ={"LANCELOT_CONFIG_DIR": str(tmp_path)}).index_cache_mb == 128


@pytest.mark.parametrize("raw", ["0", "-5", "lots"])
def test_a_bad_cap_is_a_one_line_error(raw: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="LANCELOT_INDEX_CACHE_MB must be"):
        load(environ={"LANCELOT_CONFIG_DIR": str(tmp_path), "LANCELOT_INDEX_CACHE_MB": raw})


def test_databases_with_the_same_cap_share_one_cache(sample_db: Path, tmp_path: Path) -> None:
    """The background server keeps three databases open (server/databases.py): with one session per
    cap they hold one cap of index data between them, not one each."""
    import shutil

    shutil.copytree(sample_db, tmp_path / "copy")
    first = ReadOnlyDatabase(str(sample_db), index_cache_mb=7)
    second = ReadOnlyDatabase(str(tmp_path / "copy"), index_cache_mb=7)
    other = ReadOnlyDatabase(str(tmp_path / "copy"), index_cache_mb=9)
    before = other.index_cache_bytes()
    assert list(first.table("documents").fts("refund", "text", 5, ["id"]))
    assert second.index_cache_bytes() == first.index_cache_bytes() > 0  # what the first search cached
    assert other.index_cache_bytes() == before  # another cap: another cache
