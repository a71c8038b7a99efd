"""Which search to run for a request on a table (the plan), and the vectors it needs.

Vector or hybrid when the table has vectors and their model can embed the query (a local model, or
an API key), text otherwise, with a note that says why when it is not what was asked; `status`
reports the same plan (engine/readiness.py). The run is engine/search.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lancelot_cli import local_embed
from lancelot_cli.credentials import FoundKey
from lancelot_cli.engine import ranking
from lancelot_cli.errors import VectorMismatchError
from lancelot_cli.models import SearchKind, SearchType
from lancelot_cli.storage.analyzer import has_unspaced
from lancelot_cli.storage.function_words import query_votes
from lancelot_cli.storage.read.database import ReadOnlyTable, VectorColumn

Embedder = Callable[[list[str]], list[list[float]]]


@dataclass(frozen=True)
class Plan:
    """The search to run, the note that explains a change from what was asked, and for vectors
    the column and the key to embed the query with (or the local model, which needs no key)."""

    kind: SearchKind
    note: str | None
    column: VectorColumn | None = None
    key: FoundKey | None = None
    model: str | None = None  # a local model's identity (``local:...``)


@dataclass(frozen=True)
class Embedding:
    """How the engine gets vectors: the key finder, the embedder factory, the configured model."""

    find_key: Callable[[], FoundKey | None]
    make_embedder: Callable[[FoundKey], Embedder]
    model: str


def warm(tbl: ReadOnlyTable, vector_col: str, embedding: Embedding) -> str | None:
    """Start loading the local model ``tbl``'s vectors are searched with (a background thread);
    its identity, or None when the table's vectors need no local model."""
    column = tbl.facts.vector(vector_col)
    if column is None:
        return None
    plan = (
        _local_plan(tbl, "auto", "", column, tbl.facts.vector_model(column), embedding.model)
        if local_embed.is_local(tbl.facts.vector_model(column)) or local_embed.is_local(embedding.model)
        else None
    )
    if plan is None or plan.model is None:
        return None
    local_embed.shared(plan.model).warm()
    return plan.model


def text_only(asked: SearchType, plan: Plan, ask: ranking.Ask) -> bool:
    """Whether an ``auto`` search runs as text because the table's local model is English-only and
    the query is not English:

    * a word in Chinese, Japanese, Korean, Thai...: on the Chinese and Japanese tuning manuals
      all-MiniLM-L6-v2 hybrid scored MRR@10 0.67-0.80 where text scored 0.79-0.95; letting mixed
      queries with at most half their words in CJK (`用 rsync 备份`) stay hybrid gained 0.023 on one
      manual's tune split and cost 0.12 on another's heldout;
    * a query whose function and question words are German, French, Spanish... (or, with none, a
      table whose first language is not English): on FastAPI's translations MiniLM hybrid scored
      below text in every one, German 0.802 against 0.838, Spanish 0.855 against 0.901, French 0.879
      against 0.886 (issue 51; tests/benchmarks/README.md, "Local models from PyPI")."""
    if asked != "auto" or not plan.model or local_embed.multilingual(plan.model):
        return False
    if any(has_unspaced(word) for word in ask.words):
        return True
    votes = query_votes(ask.query)
    language = votes.most_common(1)[0][0] if votes else (ask.facts.languages or ("en",))[0]
    return language != "en"


def embed(texts: list[str], plan: Plan, embedding: Embedding) -> list[list[float]]:
    """Vectors of ``texts`` in one call to the model (a batch costs little more than one text)."""
    assert plan.column is not None and (plan.key is not None or plan.model is not None)
    if plan.model:
        embed: Embedder = local_embed.shared(plan.model).embed
    else:
        assert plan.key is not None
        embed = embedding.make_embedder(plan.key)
    vectors = embed(texts)
    for vector in vectors:
        if len(vector) != plan.column.dimension:
            raise VectorMismatchError(
                f"the query vector has {len(vector)} dimensions but column {plan.column.name!r} holds "
                f"{plan.column.dimension}; set EMBEDDING_MODEL to the model the table was embedded with"
            )
    return vectors


def auto_plan(tbl: ReadOnlyTable, text_col: str, vector_col: str, embedding: Embedding) -> Plan:
    """The plan of a search that asks for nothing in particular (``auto``): what `status` reports."""
    return plan_for(tbl, "auto", text_col, vector_col, embedding)


def plan_for(tbl: ReadOnlyTable, asked: SearchType, text_col: str, vector_col: str, embedding: Embedding) -> Plan:
    """Which search to run, and the note that explains a change from what was asked."""
    if asked == "text":
        return Plan("text", None)
    facts = tbl.facts
    column = facts.vector(vector_col)
    if column is None:
        if asked == "auto":
            return Plan("text", None)
        why = (
            f"column {vector_col!r} does not hold vectors"
            if vector_col in facts.columns
            else f"the table has no vector column {vector_col!r}"
        )
        return Plan("text", f"{asked} search needs vectors but {why}; used text search")
    stored_model = facts.vector_model(column)
    if local_embed.is_local(stored_model) or local_embed.is_local(embedding.model):
        return _local_plan(tbl, asked, text_col, column, stored_model, embedding.model)
    key = embedding.find_key()
    if key is None:
        if asked == "auto":
            return Plan("text", None)
        return Plan(
            "text",
            (
                f"{asked} search needs an OpenAI API key and none is set; used text search "
                f"(set OPENAI_API_KEY or run `lancelot init`)"
            ),
        )
    if stored_model and stored_model != embedding.model:
        return _other_model(stored_model, embedding.model, "lancelot index --embed")
    return _vector_plan(tbl, asked, text_col, column, key, None)


def _vector_plan(
    tbl: ReadOnlyTable, asked: SearchType, text_col: str, column: VectorColumn, key: FoundKey | None, model: str | None
) -> Plan:
    has_fts = text_col in tbl.facts.fts_columns
    if asked == "hybrid" and not has_fts:
        return Plan(
            "vector", f"hybrid search needs a full-text index on {text_col!r}; used vector search", column, key, model
        )
    kind: SearchKind = "hybrid" if asked == "hybrid" or (asked == "auto" and has_fts) else "vector"
    return Plan(kind, None, column, key, model)


def _local_plan(
    tbl: ReadOnlyTable, asked: SearchType, text_col: str, column: VectorColumn, stored: str | None, configured: str
) -> Plan:
    """Vectors made by a local model are searched with that model, no key needed, whatever
    EMBEDDING_MODEL says: no other model can search them, and a local one costs no key or call, so
    a table indexed with `--embed-model local:/folder` stays hybrid while the settings file still
    holds the model `init` stored (issue 45 #5); another model is never used on those vectors. A
    local EMBEDDING_MODEL for a table made by an API model is refused with a note."""
    if local_embed.is_local(stored):
        return _vector_plan(tbl, asked, text_col, column, None, stored)
    if stored:  # made by an API model, asked with a local one
        return _other_model(stored, configured, f"lancelot index --embed-model {configured}")
    return _vector_plan(tbl, asked, text_col, column, None, configured)  # an unlabelled column


def _other_model(stored: str, configured: str, reindex: str) -> Plan:
    """Text search, with the note for vectors made by another model than the one configured."""
    return Plan(
        "text",
        f"the table's vectors were made with {stored!r} but EMBEDDING_MODEL is {configured!r}; used text "
        f"search (set EMBEDDING_MODEL={stored} or re-index with `{reindex}`)",
    )
