"""The reply codec is derived from the models (lancelot_cli/wire.py, wire_rules.py, models.py).

tests/golden/codec.json holds the bytes the hand-written ``to_wire`` (one function per model, before
the codec was derived) printed for models that take every optional branch: left-out Nones and empty
values, a capped echo, an unreadable table, table values that are not JSON (dates, bytes, NaN). The
derived codec must print the same bytes; and a field added to a model goes on the wire with no
codec change (the point of deriving it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli import models as m
from lancelot_cli.wire import from_wire, to_json, to_wire
from lancelot_cli.wire_rules import rule, sent, wire_key

GOLDEN = Path(__file__).resolve().parent / "golden" / "codec.json"


def cases() -> Iterator[tuple[str, Any]]:
    metadata = {
        "page": 3,
        "when": dt.date(2024, 1, 2),
        "raw": b"\x00\x01",
        "x": float("nan"),
        "nested": {"d": dt.datetime(2024, 1, 2, 3, 4)},
    }
    hit_full = m.Hit(
        id="a#0",
        score=1.5,
        matched=0.5,
        title="T",
        source="a.md",
        snippet="s",
        metadata=metadata,
        text="hidden",
        ranks={"bm25": 1, "vector": 2},
        strength=0.75,
        found_by=(0, 2),
    )
    hit_bare = m.Hit(id="b#1", score=0.25, matched=0.0, title="U", source="b.md", snippet="", metadata={})
    yield (
        "search-full",
        m.SearchResult(
            "q" * 300,
            "docs",
            "hybrid",
            "rrf",
            hits=(hit_full, hit_bare),
            note="n",
            no_good_match=True,
            folders={"a/": "A things"},
        ),
    )
    yield "search-bare", m.SearchResult("q", "docs", "text", "bm25", hits=())
    empty_folders = m.SearchResult("q", "docs", "text", "bm25", hits=(hit_bare,), no_good_match=False, folders={})
    yield "search-empty-folders", empty_folders
    yield (
        "context-note",
        m.ContextBlock(
            question="é" * 250,
            table="t",
            mode="question",
            search_type="text",
            ranking="bm25",
            budget=100,
            included=1,
            left_out=2,
            context="md",
            note="why",
        ),
    )
    yield (
        "context-bare",
        m.ContextBlock(
            question="q",
            table="t",
            mode="overview",
            search_type="overview",
            ranking="overview",
            budget=100,
            included=0,
            left_out=0,
            context="",
        ),
    )
    yield "document", m.Document("a.md", "A", "t", 3, 0, None, 0, 0, 200, "")
    entries = (m.DocumentEntry("a/x.md", 2, 10, "X"), m.DocumentEntry("a/y.md", 1, None, "Y"))
    yield "listing-prefix", m.DocumentList(table="t", path_prefix="a/", documents=entries)
    yield "listing-bare", m.DocumentList(table="t", path_prefix=None, documents=())
    yield "agent", m.AgentDocument(name="n", title="T", source="s")
    full = m.TableStatus(
        name="t",
        rows=3,
        version=2,
        updated_at="2024",
        fts_columns=("text", "title"),
        vectors=(m.VectorStatus("vector", 3, "mini", 1), m.VectorStatus("v2", 2, None, 0)),
        embedding_model="mini",
        indexed_at="then",
        fts_coverage={"indexed": 3, "unindexed": 0},
        columns=("id", "text"),
        search="hybrid: works",
        languages=("en", "de"),
    )
    defaults = m.Defaults(table="documents", text_column="text", vector_column="vector", limit=10, context_budget=8000)
    yield (
        "status",
        m.Status(
            connection=m.Connection(path="/db", ok=True, store="local", consistency_seconds=0.5, error=None),
            tables=(full, m.TableStatus(name="u"), m.TableStatus(name="v", error="gone", rows=5, search="x")),
            embeddings=m.Embeddings(
                available=False, key_source=None, model="text-embedding-3-small", dimensions=None, base_url=None
            ),
            defaults=defaults,
        ),
    )
    yield (
        "status-bare",
        m.Status(
            connection=m.Connection(path=None, ok=False, error="no db"),
            tables=(),
            embeddings=m.Embeddings(available=True, key_source="env", model="m", dimensions=3, base_url="http://x"),
            defaults=defaults,
        ),
    )
    features = m.Features(transports=("stdio", "http"))
    versions = ("2025-06-18", "2025-03-26")
    yield "version", m.Version("lancelot", "1.0", "2025-06-18", mcp_protocol_versions=versions, features=features)
    yield "version-bare", m.Version("lancelot", "1.0", None, features=m.Features(transports=()))
    yield "mixed", {"a": [hit_bare], "b": (1, 2), "c": {"d": m.AgentDocument("n", "t", "s")}}


@pytest.mark.parametrize(("name", "value"), list(cases()), ids=[name for name, _ in cases()])
def test_the_derived_codec_prints_the_hand_written_ones_bytes(name: str, value: Any) -> None:
    assert to_json(value) == json.loads(GOLDEN.read_text(encoding="utf-8"))[name]


@pytest.mark.parametrize(("name", "value"), [c for c in cases() if c[0] != "mixed"], ids=lambda c: str(c)[:20])
def test_a_reply_read_back_is_sent_the_same(name: str, value: Any) -> None:
    """from_wire reads by the same rules: computed fields (count, fullTextIndex) are computed again."""
    echoed = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if rule(f).echo}
    assert to_json(from_wire(type(value), to_wire(value), **echoed)) == to_json(value), name


def test_a_field_added_to_a_model_is_sent_with_no_codec_change() -> None:
    """The old codec knew each model by name and wrote its keys out: a new field (or a new model)
    reached the wire only after an edit there. Now the model is the whole definition."""

    @dataclass(frozen=True)
    class Wider(m.AgentDocument):
        page_count: int = 0
        language: str | None = field(default=None, metadata=sent(omit="none"))
        chars: int = field(default=0, metadata=sent("size"))

    assert to_json(Wider("n", "T", "s", 4)) == '{"name":"n","title":"T","source":"s","pageCount":4,"size":0}'
    assert to_wire(Wider("n", "T", "s", language="ko"))["language"] == "ko"
    back = from_wire(Wider, {"name": "n", "title": "T", "source": "s", "pageCount": 2, "size": 9})
    assert (back.page_count, back.chars) == (2, 9)


def test_every_wire_name_is_camel_case_and_unique_per_model() -> None:
    reply_models = [v for v in vars(m).values() if isinstance(v, type) and dataclasses.is_dataclass(v)]
    assert len(reply_models) >= 14
    for model in reply_models:
        keys = [wire_key(f) for f in dataclasses.fields(model) if not rule(f).hidden]
        assert len(set(keys)) == len(keys), model
        assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)*", k) for k in keys), (model, keys)


# The search tool's outputSchema as tools/list publishes it, made by the hand-written TypedDict
# (server/schemas.py SearchReply) before it was derived: the derived one must publish these bytes.
PUBLISHED_SEARCH_SCHEMA = (
    '{"properties": {"query": {"type": "string"}, "table": {"type": "string"}, "searchType": {"type": "string"}, '
    '"ranking": {"type": "string"}, "note": {"type": "string"}, "noGoodMatch": {"type": "boolean"}, '
    '"count": {"type": "integer"}, "hits": {"items": {"properties": {"id": {"type": "string"}, '
    '"score": {"type": "number"}, "matched": {"type": "number"}, "strength": {"type": "number"}, '
    '"title": {"type": "string"}, "source": {"type": "string"}, "snippet": {"type": "string"}, '
    '"metadata": {"type": "object"}}, "required": ["id", "score", "matched", "title", "source", "snippet", '
    '"metadata"], "type": "object"}, "type": "array"}}, "required": ["query", "table", "searchType", "ranking", '
    '"count", "hits"], "type": "object"}'
)


def test_the_search_tools_output_schema_is_derived_from_its_model() -> None:
    from mcp.server.mcpserver.utilities.func_metadata import StrictJsonSchema
    from pydantic import TypeAdapter

    from lancelot_cli.server.schemas import SearchReply, inline_defs, slim
    from lancelot_cli.wire_schema import published

    def as_listed(typed: Any) -> str:  # as server/app.py publishes the SDK's schema
        return json.dumps(slim(inline_defs(TypeAdapter(typed).json_schema(schema_generator=StrictJsonSchema))))

    assert as_listed(published(m.SearchResult)) == PUBLISHED_SEARCH_SCHEMA
    assert as_listed(SearchReply) == PUBLISHED_SEARCH_SCHEMA  # what server/schemas.py publishes
    # a real reply passes the derived schema's validation (the SDK checks structuredContent with it)
    _, reply = next(cases())
    TypeAdapter(published(m.SearchResult)).validate_python(to_wire(reply))
