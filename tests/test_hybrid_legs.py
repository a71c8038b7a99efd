"""Hybrid search runs its BM25 and vector legs at once (engine/ranking.py ``fused``): the fused
ranking must be the reciprocal rank fusion of the two lists as plain LanceDB gives them, and
searches from several threads at once must get the replies they get one at a time.

Runs on ``vector_db`` (the sample documents with 32-d vectors from the loopback test embedder,
tests/support/embed_server.py) through the real ``openai`` client.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import lancedb
import pytest

from lancelot_cli.engine import Engine
from lancelot_cli.settings import load
from tests.support.embed_server import embed

QUERIES = [
    "lost parcel",
    "refund policy",
    "kayak freight delivery",
    "gift cards expire",
    "scanner offline counts",
    "warranty repair workshop",
]
K, DEPTH = 10, 100  # RRF_K and HYBRID_DEPTH as documented in engine/ranking.py


def reference(db, query: str, limit: int) -> list[tuple[str, float]]:
    """RRF of plain LanceDB's BM25 and exact vector rankings (depth 100 each), worked out here."""
    table = lancedb.connect(str(db)).open_table("documents")
    bm25 = table.search(query, query_type="fts", fts_columns="text").limit(DEPTH).select(["id"]).to_list()
    near = table.search(embed(query), vector_column_name="vector").limit(DEPTH).select(["id"]).to_list()
    scores: dict[str, float] = {}
    for rows in (bm25, near):
        for rank, row in enumerate(rows, start=1):
            scores[row["id"]] = scores.get(row["id"], 0.0) + 1.0 / (K + rank)
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    return [(row_id, round(score, 6)) for row_id, score in ranked[:limit]]


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_is_the_fusion_of_both_legs(vector_env, vector_db, query):
    reply = Engine(load()).search(query, search_type="hybrid", limit=8, per_document=0)
    assert reply.search_type == "hybrid"
    got = [(hit.id, hit.score) for hit in reply.hits]
    want = reference(vector_db, query, 8)
    # equal fused scores may come in either order: compare the scores in order and the sets of ids
    assert [score for _, score in got] == pytest.approx([score for _, score in want], abs=1e-6)
    assert {row_id for row_id, score in got if score > want[-1][1] + 1e-6} == {
        row_id for row_id, score in want if score > want[-1][1] + 1e-6
    }


def test_hybrid_searches_from_threads_get_their_own_replies(vector_env):
    engine = Engine(load())

    def one(query: str) -> list[tuple[str, float, dict[str, int] | None]]:
        return [(hit.id, hit.score, hit.ranks) for hit in engine.search(query, search_type="hybrid", limit=5).hits]

    alone = {query: one(query) for query in QUERIES}
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(one, QUERIES * 3))
    assert together == [alone[query] for query in QUERIES * 3]
