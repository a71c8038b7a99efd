"""The read-only engine (SPEC §3): search, query, status and version, against real LanceDB tables.

Text search runs on ``sample_db`` (the sample documents indexed once per session, never written to);
vector and hybrid search run through the real ``openai`` client against the loopback embeddings
server in ``tests/support/embed_server.py``. Expected values are worked out independently of the
engine (from the sample files, from the table read with plain lancedb, or from the test embedder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import lancelot_cli
from lancelot_cli.engine import Engine
from lancelot_cli.errors import (
    ColumnNotFoundError,
    ConfigError,
    DatabaseNotFoundError,
    DocumentNotFoundError,
    InvalidArgumentError,
    LancelotError,
    TableNotFoundError,
    VectorMismatchError,
)
from lancelot_cli.settings import load
from lancelot_cli.textmatch import matched_share, query_words, snippet
from lancelot_cli.wire import to_wire
from tests.conftest import SAMPLE_DOCS
from tests.support.embed_server import MODEL, embed
from tests.support.engines import engine_for, wired

SNIPPET_MAX = 310
_PUNCT = "\"'`.,;:!?()[]{}<>"


# -- helpers --------------------------------------------------------------------------------------


def words_of(query: str) -> list[str]:
    """The query's words, worked out here (not with the engine's helper)."""
    out: list[str] = []
    for raw in query.lower().split():
        word = raw.strip(_PUNCT)
        if word and any(c.isalnum() for c in word) and word not in out:
            out.append(word)
    return out


def share(text: str, words: list[str]) -> float:
    low = text.lower()
    return sum(w in low for w in words) / len(words) if words else 0.0


def rows_by_id(db: Path, table: str = "documents") -> dict[str, dict[str, Any]]:
    import lancedb

    return {r["id"]: r for r in lancedb.connect(str(db)).open_table(table).to_arrow().to_pylist()}


def assert_no_vectors(metadata: dict[str, Any]) -> None:
    assert "vector" not in metadata
    for key, value in metadata.items():
        is_float_list = isinstance(value, list) and value and all(isinstance(v, float) for v in value)
        assert not is_float_list, f"metadata {key!r} looks like a vector"


def sample_files_containing(needle: str) -> set[str]:
    found = set()
    for path in SAMPLE_DOCS.rglob("*"):
        rel = path.relative_to(SAMPLE_DOCS).as_posix()
        if (
            path.is_file()
            and not any(part.startswith(".") for part in rel.split("/"))
            and needle.lower() in path.read_text(encoding="utf-8").lower()
        ):
            found.add(rel)
    return found


# -- 1. text search (BM25) on the sample collection --------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "refund policy",
        "kayak freight delivery",
        "gift cards expire",
        "scanner offline counts",
        "Warranty REPAIR workshop",
    ],
)
@pytest.mark.parametrize("limit", [1, 3, 20])
def test_text_search_shape_and_ranking(monkeypatch, sample_db, query, limit):
    engine = wired(engine_for(sample_db, monkeypatch))
    reply = engine.search(query, limit=limit, search_type="text")
    rows = rows_by_id(sample_db)
    words = words_of(query)

    assert reply["query"] == query
    assert reply["table"] == "documents"
    assert reply["searchType"] == "text"
    assert reply["ranking"] == "bm25"
    assert "note" not in reply
    assert reply["count"] == len(reply["hits"])
    assert 1 <= reply["count"] <= limit
    scores = [h["score"] for h in reply["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    for hit in reply["hits"]:
        row = rows[hit["id"]]
        assert hit["title"] == row["title"]
        assert hit["source"] == row["path"]
        assert hit["matched"] == pytest.approx(share(row["text"], words), abs=1e-3)
        assert len(hit["snippet"]) <= SNIPPET_MAX
        if hit["matched"] > 0:
            assert any(w in hit["snippet"].lower() for w in words), hit["snippet"]
        assert set(hit) >= {"id", "score", "matched", "title", "source", "snippet", "metadata"}
        assert not any(k.startswith("_") for k in hit)
        assert "text" not in hit["metadata"] and "id" not in hit["metadata"]
        assert hit["metadata"]["path"] == row["path"]
        assert_no_vectors(hit["metadata"])


def test_text_search_limit_is_respected(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch))
    query = "refund customer shop items staff"
    wide = engine.search(query, limit=20, search_type="text")
    assert wide["count"] > 3, "the query should match several documents"
    narrow = engine.search(query, limit=3, search_type="text")
    assert narrow["count"] == 3
    assert [h["id"] for h in narrow["hits"]] == [h["id"] for h in wide["hits"][:3]]


def test_default_limit_comes_from_settings(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch, LANCEDB_DEFAULT_LIMIT="2"))
    assert engine.search("refund customer shop items staff", search_type="text")["count"] == 2


@pytest.mark.parametrize(
    ("identifier", "expected_top"),
    [
        ("MAX_SAVED", {"guides/stock-counts.md"}),
        ("DEC-0054", {"policies/shipping.md"}),
        ("RET-WEAR", {"policies/refunds.md", "guides/point-of-sale.md"}),
        ("max_saved", {"guides/stock-counts.md"}),
    ],
)
def test_exact_identifiers_are_the_top_hit(monkeypatch, sample_db, identifier, expected_top):
    engine = wired(engine_for(sample_db, monkeypatch))
    reply = engine.search(identifier, limit=10, search_type="text")
    assert reply["ranking"] == "bm25"
    assert reply["count"] >= 1
    top = reply["hits"][0]
    assert top["source"] in expected_top
    assert top["matched"] == 1.0
    assert identifier.lower() in top["snippet"].lower()
    # Every document holding the identifier verbatim is found, and ranks above the ones that
    # only share a piece of it (e.g. "wear" alone).
    holders = sample_files_containing(identifier)
    assert holders == expected_top
    exact = [h["source"] for h in reply["hits"] if h["matched"] == 1.0]
    assert set(exact) == holders
    assert [h["source"] for h in reply["hits"][: len(holders)]] == exact


# -- 2. substring fallback on a table without a full-text index (AnythingLLM layout) ------------------


@pytest.fixture
def anythingllm_db(tmp_path: Path) -> Path:
    """An AnythingLLM-style table, written with plain lancedb, with no full-text index."""
    import datetime as dt

    import lancedb
    import pyarrow as pa

    schema = pa.schema(
        [
            ("id", pa.string()),
            ("vector", pa.list_(pa.float32(), 4)),
            ("text", pa.string()),
            ("title", pa.string()),
            ("docSource", pa.string()),
            ("chunkSource", pa.string()),
            ("wordCount", pa.int64()),
            ("published", pa.date32()),
        ]
    )
    rows = [
        {
            "id": "a",
            "text": "Kayak rental needs a deposit. Kayak paddles are included.",
            "title": "Rentals",
            "docSource": "rentals.md",
            "chunkSource": "link://shop/rentals",
            "wordCount": 9,
        },
        {
            "id": "b",
            "text": "Tents and stoves are rented by the day.",
            "title": "Camping",
            "docSource": "camping.md",
            "chunkSource": "",
            "wordCount": 8,
        },
        {
            "id": "c",
            "text": "Gift cards never expire.",
            "title": "Gift cards",
            "docSource": "gifts.md",
            "chunkSource": "link://shop/gifts",
            "wordCount": 4,
        },
        {
            "id": "d",
            "text": "KAYAK storage over the winter months.",
            "title": None,
            "docSource": "storage/winter.md",
            "chunkSource": None,
            "wordCount": 6,
        },
        {"id": "e", "text": None, "title": "Empty", "docSource": "empty.md", "chunkSource": None, "wordCount": 0},
    ]
    for i, row in enumerate(rows):
        row["vector"] = [float(i), 1.0, 0.0, 0.5]
        row["published"] = dt.date(2024, 1, 1 + i)
    db = tmp_path / "anythingllm"
    lancedb.connect(str(db)).create_table("workspace", data=pa.Table.from_pylist(rows, schema=schema))
    return db


@pytest.mark.parametrize("search_type", ["text", "auto"])
def test_substring_fallback_without_fts_index(monkeypatch, anythingllm_db, search_type):
    engine = wired(engine_for(anythingllm_db, monkeypatch, LANCEDB_TABLE="workspace"))
    reply = engine.search("kayak deposit", search_type=search_type)

    assert reply["searchType"] == "text"
    assert reply["ranking"] == "substring"
    assert "full-text index" in reply["note"]
    assert reply["count"] == len(reply["hits"]) == 2
    first, second = reply["hits"]
    assert (first["id"], second["id"]) == ("a", "d")  # "b", "c" and the empty row hold neither word
    assert first["score"] == first["matched"] == 1.0
    assert second["score"] == second["matched"] == 0.5  # case-insensitive: "KAYAK"
    assert first["source"] == "link://shop/rentals"  # chunkSource first
    assert second["source"] == "storage/winter.md"  # then docSource
    assert first["title"] == "Rentals"
    assert second["title"] == "winter.md"  # no title: the source's file name
    meta = first["metadata"]
    assert meta["wordCount"] == 9
    assert meta["docSource"] == "rentals.md"
    assert meta["published"] == "2024-01-01"
    assert_no_vectors(meta)
    assert_no_vectors(second["metadata"])
    assert "kayak" in first["snippet"].lower()


def test_substring_scores_are_share_of_words_and_ordered(monkeypatch, anythingllm_db):
    engine = wired(engine_for(anythingllm_db, monkeypatch, LANCEDB_TABLE="workspace"))
    query = "rent kayak day gift"
    reply = engine.search(query, search_type="text")
    rows = rows_by_id(anythingllm_db, "workspace")
    words = words_of(query)
    expected = {rid: share(r["text"] or "", words) for rid, r in rows.items()}
    expected = {rid: s for rid, s in expected.items() if s > 0}
    assert {h["id"] for h in reply["hits"]} == set(expected)
    for hit in reply["hits"]:
        assert hit["score"] == pytest.approx(expected[hit["id"]], abs=1e-3)
        assert hit["score"] == hit["matched"]
    scores = [h["score"] for h in reply["hits"]]
    assert scores == sorted(scores, reverse=True)
    # the limit cuts the best ones, not arbitrary ones
    top = engine.search(query, search_type="text", limit=1)
    assert top["count"] == 1 and top["hits"][0]["score"] == max(expected.values())


def test_substring_query_without_words(monkeypatch, anythingllm_db):
    engine = wired(engine_for(anythingllm_db, monkeypatch, LANCEDB_TABLE="workspace"))
    for query in ["", "   ", "!!! ???"]:
        reply = engine.search(query, search_type="text")
        assert reply["count"] == 0 and reply["hits"] == []
        assert reply["ranking"] == "substring"


# -- 3. search types and fallbacks ----------------------------------------------------------------


def test_explicit_vector_without_key_falls_back_with_note(monkeypatch, vector_env):
    monkeypatch.delenv("OPENAI_API_KEY")
    engine = wired(Engine(load()))
    for asked in ("vector", "hybrid"):
        reply = engine.search("refund policy", search_type=asked)
        assert reply["searchType"] == "text"
        assert reply["ranking"] == "bm25"
        assert "OPENAI_API_KEY" in reply["note"]
        assert reply["count"] > 0
    assert vector_env.requests == 0


def test_auto_without_key_is_text_without_note(monkeypatch, vector_db):
    engine = wired(engine_for(vector_db, monkeypatch, EMBEDDING_MODEL=MODEL))
    reply = engine.search("refund policy")
    assert reply["searchType"] == "text"
    assert reply["ranking"] == "bm25"
    assert "note" not in reply
    assert reply["count"] > 0


def test_explicit_vector_on_table_without_vectors(monkeypatch, vector_env):
    engine = wired(Engine(load()))
    reply = engine.search("refund policy", search_type="vector", table="textonly")
    assert reply["searchType"] == "text"
    assert reply["table"] == "textonly"
    assert "vector" in reply["note"] and "column" in reply["note"]
    assert reply["count"] > 0
    assert vector_env.requests == 0
    # a vector column named that does not exist at all
    reply = engine.search("refund policy", search_type="vector", vector_column="embedding")
    assert reply["searchType"] == "text"
    assert "'embedding'" in reply["note"]
    # a column that exists but holds no vectors
    reply = engine.search("refund policy", search_type="vector", vector_column="title")
    assert reply["searchType"] == "text"
    assert "'title'" in reply["note"]


def test_auto_on_table_without_vectors_is_plain_text(monkeypatch, vector_env):
    reply = wired(Engine(load())).search("refund policy", table="textonly")
    assert reply["searchType"] == "text"
    assert "note" not in reply
    assert vector_env.requests == 0


def test_vector_search_orders_by_true_distance(monkeypatch, vector_env, vector_db):
    import numpy as np

    engine = wired(Engine(load()))
    query = "lost parcel carrier claim"
    reply = engine.search(query, search_type="vector", limit=5)
    assert reply["searchType"] == "vector"
    assert reply["ranking"] == "distance"
    assert "note" not in reply
    assert reply["count"] == 5
    assert vector_env.inputs == 1  # one query embedded through the real client

    distances = [h["score"] for h in reply["hits"]]
    assert distances == sorted(distances)
    # Work the distances out here: squared L2 between the test embedder's query vector and the rows.
    rows = rows_by_id(vector_db)
    q = np.asarray(embed(query), dtype=np.float32)
    expected = {rid: float(np.sum((np.asarray(r["vector"], dtype=np.float32) - q) ** 2)) for rid, r in rows.items()}
    for hit in reply["hits"]:
        assert hit["score"] == pytest.approx(expected[hit["id"]], abs=1e-4)
        assert_no_vectors(hit["metadata"])
    best = sorted(expected.values())[:5]
    assert distances == pytest.approx(best, abs=1e-4)


@pytest.mark.parametrize(("asked", "kind", "ranking"), [("hybrid", "hybrid", "rrf"), ("auto", "hybrid", "rrf")])
def test_hybrid_with_key(monkeypatch, vector_env, asked, kind, ranking):
    engine = wired(Engine(load()))
    reply = engine.search("lost parcel DEC-0054", search_type=asked, limit=4)
    assert reply["searchType"] == kind
    assert reply["ranking"] == ranking
    assert "note" not in reply
    assert 1 <= reply["count"] == len(reply["hits"]) <= 4
    scores = [h["score"] for h in reply["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert reply["hits"][0]["source"] == "policies/shipping.md"
    assert vector_env.inputs == 1
    for hit in reply["hits"]:
        assert_no_vectors(hit["metadata"])
        assert len(hit["snippet"]) <= SNIPPET_MAX


def test_auto_with_key_but_no_fts_index_is_vector(monkeypatch, vector_env, tmp_path, vector_db):
    import lancedb
    import pyarrow as pa

    rows = list(rows_by_id(vector_db).values())
    db = tmp_path / "nofts"
    src = lancedb.connect(str(vector_db)).open_table("documents")
    lancedb.connect(str(db)).create_table("documents", data=pa.Table.from_pylist(rows, schema=src.schema))
    engine = wired(engine_for(db, monkeypatch))
    reply = engine.search("lost parcel", limit=3)
    assert (reply["searchType"], reply["ranking"]) == ("vector", "distance")
    assert "note" not in reply
    # hybrid asked on a table with no full-text index: vector, with a note
    reply = engine.search("lost parcel", search_type="hybrid", limit=3)
    assert reply["searchType"] == "vector"
    assert "full-text index" in reply["note"]


def test_embedding_endpoint_500_falls_back_to_text(monkeypatch, vector_env):
    vector_env.fail_next = [500, 500, 500, 500]
    reply = wired(Engine(load())).search("refund policy", search_type="vector")
    assert reply["searchType"] == "text"
    assert reply["ranking"] == "bm25"
    assert "vector search failed" in reply["note"]
    assert "500" in reply["note"]
    assert reply["count"] > 0
    assert vector_env.requests >= 1


@pytest.mark.parametrize("asked", ["vector", "auto"])
def test_embedding_key_rejected_falls_back_to_text(monkeypatch, vector_env, asked):
    vector_env.api_key = "sk-the-right-one"
    reply = wired(Engine(load())).search("refund policy", search_type=asked)
    assert reply["searchType"] == "text"
    assert "401" in reply["note"]
    assert "OPENAI_API_KEY" in reply["note"]
    assert "sk-test" not in reply["note"]  # never echo the key
    assert reply["count"] > 0


def test_embedding_endpoint_unreachable_falls_back(monkeypatch, vector_env):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    reply = wired(Engine(load())).search("refund policy", search_type="vector")
    assert reply["searchType"] == "text"
    assert "OPENAI_BASE_URL" in reply["note"]


def test_stored_model_differs_from_embedding_model(monkeypatch, vector_env):
    vector_env.models.add("other-embed")
    monkeypatch.setenv("EMBEDDING_MODEL", "other-embed")
    engine = wired(Engine(load()))
    for asked in ("vector", "hybrid", "auto"):
        reply = engine.search("refund policy", search_type=asked)
        assert reply["searchType"] == "text", asked
        assert MODEL in reply["note"] and "other-embed" in reply["note"]
    assert vector_env.requests == 0  # no query is embedded with the wrong model


def test_vector_size_mismatch(monkeypatch, vector_env):
    vector_env.dimension = 8
    engine = wired(Engine(load()))
    with pytest.raises(VectorMismatchError) as info:
        engine.search("refund policy", search_type="vector")
    message = str(info.value)
    assert "8" in message and "32" in message
    assert "EMBEDDING_MODEL" in message
    with pytest.raises(VectorMismatchError):
        engine.search("refund policy", search_type="hybrid")

    reply = engine.search("refund policy", search_type="auto")
    assert reply["searchType"] == "text"
    assert "32" in reply["note"] and "8" in reply["note"]
    assert reply["count"] > 0


# -- 4. errors and degenerate queries ---------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, -1, 201, 10_000, True, 2.5, "5"])
def test_limit_out_of_range(monkeypatch, sample_db, limit):
    engine = wired(engine_for(sample_db, monkeypatch))
    with pytest.raises(InvalidArgumentError, match="limit"):
        engine.search("refund", limit=limit)
    with pytest.raises(InvalidArgumentError, match="limit"):
        engine.query("refund", limit=limit)


@pytest.mark.parametrize("limit", [1, 200])
def test_limit_bounds_are_allowed(monkeypatch, sample_db, limit):
    assert wired(engine_for(sample_db, monkeypatch)).search("refund", limit=limit)["count"] <= limit


@pytest.mark.parametrize("search_type", ["semantic", "TEXT", "", "fts"])
def test_unknown_search_type(monkeypatch, sample_db, search_type):
    engine = wired(engine_for(sample_db, monkeypatch))
    with pytest.raises(InvalidArgumentError) as info:
        engine.search("refund", search_type=search_type)
    assert "auto" in str(info.value) and "hybrid" in str(info.value)


def test_missing_table_lists_existing_tables(monkeypatch, vector_db):
    engine = wired(engine_for(vector_db, monkeypatch))
    with pytest.raises(TableNotFoundError) as info:
        engine.search("refund", table="nope")
    message = str(info.value)
    assert "'nope'" in message and "documents" in message and "textonly" in message
    with pytest.raises(TableNotFoundError):
        engine.query("refund", table="nope")
    with pytest.raises(TableNotFoundError):
        engine.query("refund", table="nope", warm_start=True)
    engine = wired(engine_for(vector_db, monkeypatch, LANCEDB_TABLE="missing"))
    with pytest.raises(TableNotFoundError, match="missing"):
        engine.search("refund")


def test_missing_text_column_lists_columns(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch))
    with pytest.raises(ColumnNotFoundError) as info:
        engine.search("refund", text_column="body")
    message = str(info.value)
    assert "'body'" in message
    for column in ("id", "path", "title", "text"):
        assert column in message
    engine = wired(engine_for(sample_db, monkeypatch, LANCEDB_TEXT_COLUMN="content"))
    with pytest.raises(ColumnNotFoundError, match="content"):
        engine.query("refund", warm_start=True)


@pytest.mark.parametrize("value", [None, "", "   "])
def test_no_database_configured(monkeypatch, value):
    if value is not None:
        monkeypatch.setenv("LANCEDB_PATH", value)
    engine = wired(Engine(load()))
    with pytest.raises(ConfigError, match="LANCEDB_PATH"):
        engine.search("refund")
    with pytest.raises(ConfigError):
        engine.query("refund")


def test_missing_database_folder_is_not_created(monkeypatch, tmp_path):
    missing = tmp_path / "no" / "such" / "db"
    engine = wired(engine_for(missing, monkeypatch))
    with pytest.raises(DatabaseNotFoundError) as info:
        engine.search("refund")
    assert str(missing) in str(info.value)
    with pytest.raises(DatabaseNotFoundError):
        engine.query("refund", warm_start=True)
    status = engine.status()
    assert status["connection"]["ok"] is False
    assert not missing.exists() and not (tmp_path / "no").exists()


def test_database_path_that_is_a_file(monkeypatch, tmp_path):
    file = tmp_path / "db.txt"
    file.write_text("not a database")
    with pytest.raises(DatabaseNotFoundError, match="not a folder"):
        wired(engine_for(file, monkeypatch)).search("refund")


@pytest.mark.parametrize("query", ["", "   ", "the of and", "!!! ???", "?", "-- ..."])
@pytest.mark.parametrize("search_type", ["auto", "text", "vector", "hybrid"])
def test_queries_without_content_words_find_nothing(monkeypatch, sample_db, query, search_type):
    reply = wired(engine_for(sample_db, monkeypatch)).search(query, search_type=search_type)
    assert reply["count"] == 0
    assert reply["hits"] == []
    assert reply["searchType"] == "text"


def test_empty_query_with_key_does_not_call_endpoint(monkeypatch, vector_env):
    reply = wired(Engine(load())).search("   ", search_type="auto")
    assert reply["count"] == 0
    assert vector_env.requests == 0


def test_errors_are_lancelot_errors():
    for cls in (
        ConfigError,
        DatabaseNotFoundError,
        TableNotFoundError,
        ColumnNotFoundError,
        InvalidArgumentError,
        VectorMismatchError,
    ):
        assert issubclass(cls, LancelotError)
    assert InvalidArgumentError.exit_code == 2
    assert TableNotFoundError.exit_code == 1


# -- textmatch helpers (pure) ------------------------------------------------------------------------


def test_query_words_and_share():
    assert query_words("  Refund, refund POLICY!  (the) ") == ["refund", "policy", "the"]
    assert query_words("!!! ??? ...") == []
    assert matched_share("A Refund Policy", ["refund", "kayak"]) == 0.5
    assert matched_share("anything", []) == 0.0


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tokens=st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=12), min_size=1, max_size=300),
    data=st.data(),
)
def test_snippet_is_short_and_centred_on_a_match(tokens, data):
    text = " ".join(tokens)
    word = data.draw(st.sampled_from(tokens))
    cut = snippet(text, [word])
    assert len(cut) <= 302
    assert word in cut.lower()
    if len(text) <= 300:
        assert cut == text


def _window_start_by_brute_force(flat: str, words: list[str], size: int) -> int:
    """Where the snippet's window starts, by trying every match (what `snippet` did before it
    became linear: the first match position whose window covers the most distinct words)."""
    positions = sorted((m.start(), w) for w in words for m in re.finditer(re.escape(w), flat, re.I))
    best = (-1, 0)
    for i, (pos, _) in enumerate(positions):
        covered = {w for p, w in positions[i:] if p < pos + size * 0.8}
        if len(covered) > best[0]:
            best = (len(covered), pos)
    return max(0, best[1] - size // 4)


@given(
    tokens=st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=40, max_size=400),
    data=st.data(),
)
@hsettings(max_examples=60, deadline=None)
def test_snippet_window_is_the_one_covering_most_words(tokens, data):
    text = " ".join(tokens)
    words = data.draw(st.lists(st.sampled_from(tokens), min_size=1, max_size=4, unique=True))
    size = data.draw(st.sampled_from([40, 120, 300]))
    flat = " ".join(text.split())
    start = _window_start_by_brute_force(flat, words, size)
    # Same window: the cut begins at the brute-force start (moved back near the end of the text,
    # and on to the next word boundary, as the snippet does).
    cut = snippet(text, words, size)
    body = cut.removeprefix("…").removesuffix("…")
    assert flat.find(body) in range(max(0, min(start, len(flat) - size)), start + 31)


# -- 5. query: the packed context block --------------------------------------------------------------

SECTION = re.compile(r"^## \[(\d+)\] (.+)$", re.M)
QUESTIONS = [
    "how do refunds work",
    "lost parcel",
    "kayak rental deposit",
    "gift cards",
    "staff login PIN",
    "what is the warranty on repairs",
    "MAX_SAVED",
]


@pytest.mark.slow
def test_query_respects_budget_and_rank_order(sample_db):
    config = os.environ["LANCELOT_CONFIG_DIR"]
    engine = wired(
        Engine(load(environ={"LANCEDB_PATH": str(sample_db), "LANCELOT_CONFIG_DIR": config}), find_key=lambda: None)
    )
    retrieved: dict[tuple[str, int], list[str]] = {}

    @hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(question=st.sampled_from(QUESTIONS), budget=st.integers(200, 20_000), limit=st.integers(1, 50))
    def check(question: str, budget: int, limit: int) -> None:
        if (question, limit) not in retrieved:
            hits = engine.search(question, limit=limit)["hits"]
            retrieved[(question, limit)] = [h["title"] for h in hits]
        titles = retrieved[(question, limit)]
        reply = engine.query(question, context_budget=budget, limit=limit)
        context = reply["context"]
        assert len(context) <= budget
        assert reply["budget"] == budget
        assert reply["included"] + reply["leftOut"] == len(titles)
        assert reply["mode"] == "question"
        assert question in context
        sections = SECTION.findall(context)
        assert [int(n) for n, _ in sections] == list(range(1, reply["included"] + 1))
        # included chunks appear in rank order: a subsequence of the search's hits
        remaining = iter(titles)
        for _, title in sections:
            assert any(t == title for t in remaining), (title, titles)
        if reply["leftOut"]:
            assert f"{reply['leftOut']} more" in context
        else:
            assert "left out" not in context

    check()


def test_query_small_budget_leaves_chunks_out(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch))
    big = engine.query("refund policy store credit", context_budget=20_000)
    assert big["leftOut"] == 0 and big["included"] >= 3
    small = engine.query("refund policy store credit", context_budget=900)
    assert small["leftOut"] > 0
    assert small["included"] + small["leftOut"] == big["included"]
    assert len(small["context"]) <= 900
    assert re.search(rf"(?<!\d){small['leftOut']} more chunks? (was|were) left out", small["context"])
    assert small["searchType"] == "text" and small["ranking"] == "bm25"


@pytest.mark.parametrize("budget", [200, 220, 260])
def test_query_says_how_many_were_left_out_even_with_a_long_question(monkeypatch, sample_db, budget):
    """SPEC §3: chunks that would pass the budget are left out *and the block says how many*.

    With a question of ~100 characters the header leaves too little room, and the count line is
    dropped silently (package bug: ``context.pack`` skips the line when it does not fit).
    """
    engine = wired(engine_for(sample_db, monkeypatch))
    question = "please tell me everything about the refund policy for worn gear and store credit without receipt"
    reply = engine.query(question, context_budget=budget)
    assert reply["leftOut"] > 0
    assert len(reply["context"]) <= budget
    assert f"{reply['leftOut']} more" in reply["context"], reply["context"]


def test_query_default_budget_comes_from_settings(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch, LANCEDB_CONTEXT_BUDGET="600"))
    reply = engine.query("refund policy store credit")
    assert reply["budget"] == 600
    assert len(reply["context"]) <= 600


@pytest.mark.parametrize("budget", [0, 1, 199, -5, True, "8000", 500.0])
def test_query_budget_too_small(monkeypatch, sample_db, budget):
    engine = wired(engine_for(sample_db, monkeypatch))
    with pytest.raises(InvalidArgumentError, match="context budget"):
        engine.query("refunds", context_budget=budget)


def test_query_minimum_budget_is_accepted(monkeypatch, sample_db):
    reply = wired(engine_for(sample_db, monkeypatch)).query("refunds", context_budget=200)
    assert len(reply["context"]) <= 200


def test_query_carries_the_fallback_note(monkeypatch, vector_env):
    vector_env.api_key = "sk-the-right-one"
    reply = wired(Engine(load())).query("lost parcel claim")
    assert reply["searchType"] == "text"
    assert "401" in reply["note"]
    assert "401" in reply["context"]


def test_query_with_key_uses_hybrid(monkeypatch, vector_env):
    reply = wired(Engine(load())).query("lost parcel claim", context_budget=3000)
    assert (reply["searchType"], reply["ranking"]) == ("hybrid", "rrf")
    assert "Shipping and delivery" in reply["context"]


def test_warm_start_on_sample_collection(monkeypatch, sample_db):
    engine = wired(engine_for(sample_db, monkeypatch))
    reply = engine.query("anything at all", warm_start=True, context_budget=20_000)
    assert reply["mode"] == "overview"
    sources = re.findall(r"^source: (.+)$", reply["context"], re.M)
    assert sources[0] == "README.md"
    assert "Acme Outfitters handbook" in reply["context"]
    depths = [s.count("/") for s in sources[1:]]
    assert depths == sorted(depths), sources  # shallow paths first
    assert len(sources) == len(set(sources))
    assert reply["included"] == len(sources)
    assert len(reply["context"]) <= 20_000


@pytest.fixture
def multichunk_db(tmp_path: Path) -> Path:
    """Index-layout table (id, path, title, chunk, text) with several chunks per document, README last."""
    import lancedb

    docs = {
        "guides/deep/tents.md": ("Tents", 3),
        "notes.md": ("Shop notes", 2),
        "policies/returns.md": ("Returns", 2),
        "README.md": ("Handbook", 2),
        "a/b/c/d.md": ("Deep doc", 1),
    }
    rows = []
    for path, (title, n) in docs.items():
        for chunk in range(n):
            rows.append(
                {
                    "id": f"{path}#{chunk}",
                    "path": path,
                    "title": title,
                    "chunk": chunk,
                    "text": f"{title} part {chunk}. " + ("Lorem ipsum dolor. " * 5),
                }
            )
    db = tmp_path / "multi"
    lancedb.connect(str(db)).create_table("documents", data=rows)
    return db


def test_warm_start_picks_overview_and_opening_chunks(monkeypatch, multichunk_db):
    engine = wired(engine_for(multichunk_db, monkeypatch))
    reply = engine.query("", warm_start=True, context_budget=20_000)
    sections = re.findall(r"^## \[\d+\] (.+)\nsource: (.+)\n\n(.+?) part (\d+)\.", reply["context"], re.M)
    got = [(source, int(chunk)) for _, source, _, chunk in sections]
    assert got[0] == ("README.md", 0)
    others = [(s, c) for s, c in got if s != "README.md"]
    assert all(c == 0 for _, c in others), got  # only opening chunks of ordinary documents
    assert {s for s, _ in others} == {"notes.md", "guides/deep/tents.md", "policies/returns.md", "a/b/c/d.md"}
    depths = [s.count("/") for s, _ in others]
    assert depths == sorted(depths), got
    assert got.index(("README.md", 0)) < got.index(("notes.md", 0))
    # the limit caps the chunks, best first
    two = engine.query("", warm_start=True, context_budget=20_000, limit=2)
    assert two["included"] == 2
    assert re.findall(r"^source: (.+)$", two["context"], re.M)[0] == "README.md"


# -- 6. status and version ---------------------------------------------------------------------------


def test_status_on_vector_db(monkeypatch, vector_db):
    import lancedb

    engine = wired(engine_for(vector_db, monkeypatch))
    status = engine.status()
    assert status["connection"]["ok"] is True
    assert status["connection"]["path"] == str(vector_db)
    assert "error" not in status["connection"]
    db = lancedb.connect(str(vector_db))
    tables = {t["name"]: t for t in status["tables"]}
    assert set(tables) == {"documents", "textonly"}
    docs, plain = tables["documents"], tables["textonly"]
    assert docs["rows"] == db.open_table("documents").count_rows() > 0
    assert plain["rows"] == db.open_table("textonly").count_rows()
    assert docs["fullTextIndex"] is True and plain["fullTextIndex"] is True
    assert docs["vectors"] == [{"column": "vector", "dimension": 32, "model": "test-embed", "missing": 0}]
    assert plain["vectors"] == []
    assert docs.get("embeddingModel") == MODEL
    assert "columns" not in docs
    assert status["embeddings"]["available"] is False
    assert status["embeddings"]["keySource"] is None
    assert status["embeddings"]["model"] == "text-embedding-ada-002"
    assert status["embeddings"]["dimensions"] == 1536


def test_status_verbose_lists_columns(monkeypatch, vector_db):
    status = wired(engine_for(vector_db, monkeypatch)).status(verbose=True)
    tables = {t["name"]: t for t in status["tables"]}
    assert {"id", "path", "title", "text", "vector"} <= set(tables["documents"]["columns"])
    assert "vector" not in tables["textonly"]["columns"]


def test_status_without_fts_index(monkeypatch, anythingllm_db):
    status = wired(engine_for(anythingllm_db, monkeypatch)).status()
    (table,) = status["tables"]
    assert table["name"] == "workspace"
    assert table["fullTextIndex"] is False
    assert table["vectors"] == [{"column": "vector", "dimension": 4, "model": None, "missing": 0}]
    assert table["rows"] == 5


def test_status_reports_key_source_not_key(monkeypatch, vector_env):
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "32")
    status = wired(Engine(load())).status()
    assert status["embeddings"]["available"] is True
    assert status["embeddings"]["keySource"] == "env"
    assert status["embeddings"]["model"] == MODEL
    assert status["embeddings"]["dimensions"] == 32
    assert "sk-test" not in repr(status)


def test_status_key_from_key_file(monkeypatch, sample_db, isolated_env):
    from lancelot_cli import keyfile

    keyfile.write_key(isolated_env, "sk-stored-in-file")
    status = wired(engine_for(sample_db, monkeypatch)).status()
    assert status["embeddings"]["keySource"] == "file"
    assert "sk-stored-in-file" not in repr(status)


def test_status_survives_one_unreadable_table(monkeypatch, tmp_path):
    """A folder that looks like a table but cannot be opened (e.g. left by a crashed writer) must not
    hide the readable tables or mark the whole connection as failed (package bug: ``Engine.status``
    catches errors around the whole loop, so the first bad table aborts it)."""
    import lancedb

    db = tmp_path / "db"
    conn = lancedb.connect(str(db))
    conn.create_table("alpha", data=[{"id": "1", "text": "kayak"}])
    (db / "broken.lance").mkdir()
    conn.create_table("zulu", data=[{"id": "1", "text": "tent"}])
    status = wired(engine_for(db, monkeypatch)).status()
    names = [t["name"] for t in status["tables"]]
    assert "alpha" in names and "zulu" in names, status
    assert status["connection"]["ok"] is True, status
    assert wired(engine_for(db, monkeypatch)).search("tent", table="zulu")["count"] == 1


def test_status_missing_database_does_not_raise(monkeypatch, tmp_path):
    missing = tmp_path / "gone"
    status = wired(engine_for(missing, monkeypatch)).status(verbose=True)
    assert status["connection"]["ok"] is False
    assert str(missing) in status["connection"]["error"]
    assert status["tables"] == []
    assert not missing.exists()


def test_status_without_database_configured(monkeypatch):
    status = wired(Engine(load())).status()
    assert status["connection"]["ok"] is False
    assert "LANCEDB_PATH" in status["connection"]["error"]


def test_version():
    from importlib import metadata

    info = wired(Engine(load())).version(protocol_version="2025-06-18")
    assert info["version"] == lancelot_cli.__version__
    assert info["mcpProtocolVersion"] == "2025-06-18"
    assert set(info["features"]["searchTypes"]) == {"auto", "text", "vector", "hybrid"}
    assert info["features"]["readOnly"] is True
    try:
        installed = metadata.version("lancelot-cli")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        pytest.skip("lancelot-cli is not installed")
    assert installed == lancelot_cli.__version__


def test_engine_never_writes(monkeypatch, vector_env, vector_db, anythingllm_db, sample_db):
    """Every operation leaves the database files byte-for-byte as they were."""
    from tests.conftest import hash_tree

    before = hash_tree(vector_db), hash_tree(anythingllm_db), hash_tree(sample_db)
    engine = wired(Engine(load()))
    for asked in ("auto", "text", "vector", "hybrid"):
        engine.search("refund policy", search_type=asked)
        engine.search("refund policy", search_type=asked, table="textonly")
    engine.query("refund", warm_start=True)
    engine.query("refund")
    engine.status(verbose=True)
    other = wired(engine_for(anythingllm_db, monkeypatch, LANCEDB_TABLE="workspace"))
    other.search("kayak")
    other.query("kayak", warm_start=True)
    other.status(verbose=True)
    sample = wired(engine_for(sample_db, monkeypatch, LANCEDB_TABLE="documents"))
    sample.search("refund", search_type="vector")
    sample.query("refund", warm_start=True)
    sample.status(verbose=True)
    assert (hash_tree(vector_db), hash_tree(anythingllm_db), hash_tree(sample_db)) == before


# -- the typed core: models out of the engine, one wire form, hints worded per surface --------------


def test_engine_returns_models_and_the_wire_form_leaves_the_text_out(monkeypatch, sample_db):
    from lancelot_cli.engine import SearchRequest
    from lancelot_cli.models import ContextBlock, Hit, SearchResult

    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    engine = Engine(load())
    result = engine.search(SearchRequest("refund policy", limit=3, search_type="text"))
    assert isinstance(result, SearchResult) and result.count == len(result.hits) == 3
    assert all(isinstance(hit, Hit) and hit.text for hit in result.hits)
    # The keyword form is the same request.
    assert engine.search("refund policy", limit=3, search_type="text") == result
    wire = to_wire(result)
    assert list(wire) == ["query", "table", "searchType", "ranking", "count", "hits"]
    assert all("text" not in hit for hit in wire["hits"])
    assert isinstance(engine.query("refund policy"), ContextBlock)


def test_an_error_hint_is_worded_for_an_agent_and_for_a_person(monkeypatch, sample_db):
    """The engine's message is neutral; the MCP tool points at lancedb_search / textColumn, the
    terminal at `lancelot search` / --text-column (issue 15: terminal messages spoke MCP)."""
    import anyio
    from mcp import Client
    from typer.testing import CliRunner

    from lancelot_cli.cli.app import app
    from lancelot_cli.server.app import build_server

    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    with pytest.raises(DocumentNotFoundError) as caught:
        Engine(load()).document("nope.md")
    assert "lancedb_search" not in str(caught.value) and caught.value.hint == "find_source"

    async def tool(name: str, arguments: dict[str, Any]) -> str:
        async with Client(build_server(load())) as client:
            result = await client.call_tool(name, arguments)
            assert result.is_error
            return result.content[0].text

    assert "(use lancedb_search to find one)" in anyio.run(tool, "lancedb_document", {"source": "nope.md"})
    assert "(pass textColumn or set" in anyio.run(tool, "lancedb_search", {"query": "x", "textColumn": "nope"})
    shown = CliRunner().invoke(app, ["show", "nope.md"], prog_name="lancelot")
    assert shown.exit_code == 1 and "(`lancelot ls` lists them; `lancelot search` finds one)" in shown.stderr
    assert "lancedb_" not in shown.stderr
    searched = CliRunner().invoke(app, ["search", "x", "--text-column", "nope"], prog_name="lancelot")
    assert searched.exit_code == 1 and "(pass --text-column or set LANCEDB_TEXT_COLUMN)" in searched.stderr
    assert "textColumn" not in searched.stderr
