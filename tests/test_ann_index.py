"""The vector (ANN) index the writer builds once a table passes ``VectorIndexPolicy.min_rows``
(lowered here to a few thousand rows, with few partitions), on real LanceDB tables in tmp folders:
built by the indexer's write path, kept current (rows added since are searched flat, deleted rows
are gone), trained again when the table has grown, never built below the threshold; and the
engine's vector and hybrid search still return the exact nearest rows with it, filters included.
Expected neighbours are worked out with numpy, not with the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from lancelot_cli.indexer import chunk_hash
from lancelot_cli.storage.write import ann
from lancelot_cli.storage.write.policy import VectorIndexPolicy
from lancelot_cli.storage.write.table import TableWriter
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

MODEL, DIM, N = "test-model", 32, 2400
POLICY = VectorIndexPolicy(min_rows=2000, partitions=4)


def make_rows(n: int, start: int = 0, seed: int = 3) -> list[dict[str, Any]]:
    """``n`` rows whose vectors lie around 120 centres, as text embeddings cluster by topic (each
    cluster is smaller than the candidates the reader re-ranks, so 4-bit codes of 32-d vectors
    cannot lose a neighbour)."""
    rng = np.random.default_rng(seed)
    centres = np.random.default_rng(0).standard_normal((120, DIM))
    vectors = (centres[rng.integers(0, 120, n)] + 0.2 * rng.standard_normal((n, DIM))).astype(np.float32)
    rows = []
    for k, vector in enumerate(vectors, start):
        path = f"{'guide' if k % 3 == 0 else 'api'}/page{k}.md"
        title, text = f"Page {k}", f"row{k} talks about topic{k % 20} and more"
        rows.append(
            {
                "id": f"{path}#0",
                "path": path,
                "title": title,
                "chunk": 0,
                "text": text,
                "hash": chunk_hash(title, text),
                "vector": vector.tolist(),
            }
        )
    return rows


def write(db: Path, rows: list[dict[str, Any]], policy: VectorIndexPolicy = POLICY, **kwargs: Any) -> Any:
    return TableWriter(str(db), "documents", vector_policy=policy).write(rows, model=MODEL, dimension=DIM, **kwargs)


def table(db: Path) -> Any:
    return lancedb.connect(str(db)).open_table("documents")


def exact_ids(rows: list[dict[str, Any]], query: list[float], k: int, keep: Any = lambda row: True) -> list[str]:
    kept = [row for row in rows if keep(row)]
    distances = ((np.array([row["vector"] for row in kept]) - np.array(query)) ** 2).sum(axis=1)
    return [kept[i]["id"] for i in np.argsort(distances)[:k]]


def assert_near_exact(ids: list[str], expected: list[str]) -> None:
    """The nearest rows in order, and recall@10 >= 0.9 (the index is approximate; a search without
    the re-ranking, or one that ignored the filter, misses far more)."""
    assert ids[:3] == expected[:3]
    assert len(set(ids[:10]) & set(expected[:10])) >= 9


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    db = tmp_path_factory.mktemp("ann") / "db"
    rows = make_rows(N)
    write(db, rows)
    return db, rows


def test_a_table_past_the_threshold_gets_its_vector_index_from_the_write(indexed):
    db, _ = indexed
    tbl = table(db)
    index = ann.vector_index(tbl)
    assert index is not None and index.name == ann.VECTOR_INDEX_NAME
    assert str(index.index_type).upper() == "IVFPQ"
    assert tbl.index_stats(index.name).num_indexed_rows == N
    assert ann.trained_rows(tbl, index) == N
    # A flat search reads the vectors; with the index the plan goes through its partitions.
    assert "ANNIvf" in tbl.search([0.0] * DIM).limit(5).explain_plan()


def test_below_the_threshold_nothing_is_built(tmp_path):
    write(tmp_path / "small", make_rows(1500))
    assert ann.vector_index(table(tmp_path / "small")) is None
    write(tmp_path / "default", make_rows(N), policy=VectorIndexPolicy())  # the real threshold
    assert ann.vector_index(table(tmp_path / "default")) is None


@pytest.mark.parametrize("search_type", ["vector", "hybrid"])
def test_engine_finds_the_exact_nearest_rows_with_the_index(indexed, tmp_path, search_type):
    db, rows = indexed
    queries = {f"topic{k % 20} q{k}": (np.array(rows[k]["vector"]) + 0.05).tolist() for k in range(0, N, 240)}
    engine = engine_for(db, embed=lambda texts: [queries[t] for t in texts], EMBEDDING_MODEL=MODEL)
    for text, vector in queries.items():
        reply = to_wire(engine.search(text, search_type=search_type, limit=10, per_document=0))
        ids = [hit["id"] for hit in reply["hits"]]
        if search_type == "vector":
            assert reply["ranking"] == "distance"
            assert_near_exact(ids, exact_ids(rows, vector, 10))
        else:
            assert reply["ranking"] == "rrf"
            assert exact_ids(rows, vector, 1)[0] in ids


@pytest.mark.parametrize("search_type", ["vector", "hybrid"])
def test_filters_still_apply_with_the_index(indexed, tmp_path, search_type):
    db, rows = indexed
    query = (np.array(rows[5]["vector"]) * 0.9).tolist()  # an api/ page; the nearest guide/ pages are asked
    engine = engine_for(db, embed=lambda texts: [{"topic5": query}[t] for t in texts], EMBEDDING_MODEL=MODEL)
    reply = to_wire(engine.search("topic5", search_type=search_type, limit=10, per_document=0, path_prefix="guide/"))
    ids = [hit["id"] for hit in reply["hits"]]
    assert ids and all(i.startswith("guide/") for i in ids)
    expected = exact_ids(rows, query, 10, keep=lambda row: row["path"].startswith("guide/"))
    if search_type == "vector":
        assert_near_exact(ids, expected)
    else:
        assert expected[0] in ids


def test_rows_added_after_the_index_are_found_and_deleted_ones_are_gone(tmp_path):
    db = tmp_path / "db"
    rows = make_rows(N)
    write(db, rows)
    new = make_rows(1, start=N, seed=99)
    new[0]["vector"] = [3.0] * DIM  # far from every cluster: its own nearest neighbour by far
    gone = rows[7]
    result = write(db, new, paths={new[0]["path"]})
    write(db, [], paths={gone["path"]})
    tbl = table(db)
    assert tbl.index_stats(ann.VECTOR_INDEX_NAME).num_unindexed_rows == 1  # not folded in: searched flat
    assert ann.trained_rows(tbl, ann.vector_index(tbl)) == N and result.added == 1
    queries = {"new": new[0]["vector"], "gone": gone["vector"]}
    engine = engine_for(db, embed=lambda texts: [queries[t] for t in texts], EMBEDDING_MODEL=MODEL)
    top = to_wire(engine.search("new", search_type="vector", limit=3, per_document=0))["hits"]
    assert top[0]["id"] == new[0]["id"]
    ids = [hit["id"] for hit in to_wire(engine.search("gone", search_type="vector", limit=10, per_document=0))["hits"]]
    assert gone["id"] not in ids
    remaining = [row for row in rows if row["id"] != gone["id"]] + new
    assert_near_exact(ids, exact_ids(remaining, gone["vector"], 10))
    # An idle optimize folds the new row into the index without training it again.
    assert TableWriter(str(db), "documents", vector_policy=POLICY).optimize(force=True)
    tbl = table(db)
    assert tbl.index_stats(ann.VECTOR_INDEX_NAME).num_unindexed_rows == 0
    assert ann.trained_rows(tbl, ann.vector_index(tbl)) == N
    assert to_wire(engine.search("new", search_type="vector", limit=3, per_document=0))["hits"][0]["id"] == new[0]["id"]


def test_the_index_is_trained_again_when_the_table_has_doubled(tmp_path):
    db = tmp_path / "db"
    policy = VectorIndexPolicy(min_rows=600, partitions=2)
    rows = make_rows(700)
    write(db, rows, policy=policy)
    assert ann.trained_rows(table(db), ann.vector_index(table(db))) == 700
    more = make_rows(500, start=700, seed=5)
    write(db, more, policy=policy, paths={row["path"] for row in more})
    assert ann.trained_rows(table(db), ann.vector_index(table(db))) == 700  # 1,200 < 2 x 700
    most = make_rows(300, start=1200, seed=6)
    write(db, most, policy=policy, paths={row["path"] for row in most})
    tbl = table(db)
    assert ann.trained_rows(tbl, ann.vector_index(tbl)) == 1500
    assert tbl.index_stats(ann.VECTOR_INDEX_NAME).num_indexed_rows == 1500


def test_the_index_is_trained_again_when_optimize_has_left_many_segments(tmp_path):
    db = tmp_path / "db"
    policy = VectorIndexPolicy(min_rows=600, partitions=2, max_segments=3)
    write(db, make_rows(700), policy=policy)
    writer = TableWriter(str(db), "documents", vector_policy=policy)
    for k in range(3):  # each folded batch is one more segment of the index
        batch = make_rows(20, start=700 + 20 * k, seed=10 + k)
        writer.write(batch, model=MODEL, dimension=DIM, paths={row["path"] for row in batch})
        writer.optimize(force=True)
    tbl = table(db)
    index = ann.vector_index(tbl)
    assert ann.trained_rows(tbl, index) == 760 and index.num_segments == 1
