"""A search from request to result: the plan run, with a fallback to text search that says why.

Which search to run is engine/plan.py; several phrasings are ranked at once and fused here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from lancelot_cli import redact
from lancelot_cli.engine import phrasings, ranking, strength
from lancelot_cli.engine.plan import Embedding, Plan, embed, plan_for, text_only
from lancelot_cli.errors import EmbeddingError, InvalidArgumentError, VectorMismatchError
from lancelot_cli.limits import MAX_LIMIT
from lancelot_cli.models import SEARCH_TYPES, Hit, Ranking, SearchKind, SearchResult, SearchType
from lancelot_cli.storage.analyzer import DEFAULT, query_terms, split_words, text_terms
from lancelot_cli.storage.read.database import ReadOnlyTable
from lancelot_cli.storage.read.filters import build_filter
from lancelot_cli.storage.schema import HEADING, ID, TITLE
from lancelot_cli.textmatch import matched_share, query_words


@dataclass(frozen=True)
class SearchRequest:
    """What a caller asks for; None means the setting's default (table, columns, limit)."""

    query: str
    limit: int | None = None
    search_type: SearchType = "auto"
    table: str | None = None
    text_column: str | None = None
    vector_column: str | None = None
    path_prefix: str | None = None
    filters: Mapping[str, Any] | None = None
    per_document: int | None = None  # chunks of one document among the hits; 0: no cap
    queries: tuple[str, ...] | None = None  # other phrasings of ``query``, fused with it (engine/phrasings.py)


def check_search_type(search_type: str) -> None:
    if search_type not in SEARCH_TYPES:
        raise InvalidArgumentError(f"search type must be one of {', '.join(SEARCH_TYPES)}, got {search_type!r}")


def run(
    tbl: ReadOnlyTable, request: SearchRequest, text_col: str, vector_col: str, limit: int, embedding: Embedding
) -> SearchResult:
    """Run ``request`` on ``tbl`` (limit and search type already checked)."""
    said = phrasings.distinct(request.query, request.queries)  # first: it refuses phrasings too long to search
    facts = tbl.facts
    ask = _ask(tbl, request, text_col, limit)
    asked = request.search_type
    plan = plan_for(tbl, asked, text_col, vector_col, embedding)
    if len(said) > 1:
        return _run_phrasings(ask, said, asked, plan, embedding)
    if text_only(asked, plan, ask):
        plan = Plan("text", None)
    hits, search_type, ranking_name, note, close = _searched(ask, asked, plan, embedding)
    weak = strength.no_good_match(hits, close) and not strength.identifier_found(request.query, ask.words, hits)
    if weak:
        by_vector = search_type != "text"
        note = "; ".join(part for part in (note, strength.note(hits, by_vector)) if part)
    folders = described(facts.descriptions, hits)
    return SearchResult(
        request.query,
        tbl.name,
        search_type,
        ranking_name,
        note=note,
        no_good_match=weak,
        folders=folders or None,
        hits=tuple(hits),
    )


def _ask(tbl: ReadOnlyTable, request: SearchRequest, text_col: str, limit: int) -> ranking.Ask:
    """The request as the ranking reads it: words, filter, columns, boosts and the per-document cap."""
    facts = tbl.facts
    tbl.require_column(text_col, "text", facts)
    cap = ranking.PER_DOCUMENT if request.per_document is None else request.per_document
    if isinstance(cap, bool) or not isinstance(cap, int) or not 0 <= cap <= MAX_LIMIT:
        raise InvalidArgumentError(f"perDocument must be a whole number from 0 (no cap) to {MAX_LIMIT}, got {cap!r}")
    return ranking.Ask(
        tbl,
        request.query,
        query_words(request.query, split_words),
        text_col,
        limit,
        ranking.reply_columns(facts),
        build_filter(facts, request.path_prefix, request.filters),
        facts,
        cap,
        ranking.field_boosts(facts, text_col),
        query_terms(request.query, facts.analyses.get(text_col, DEFAULT)),
        facts.analyses.get(text_col, DEFAULT),
    )


def _searched(
    ask: ranking.Ask, asked: SearchType, plan: Plan, embedding: Embedding
) -> tuple[list[Hit], SearchKind, Ranking, str | None, float | None]:
    """The hits of ``plan``, with the kind and ranking that made them, a note and, for a hybrid
    search, its hits' best strength by meaning (``ranking.fused``); a vector or hybrid search that
    fails (or, under auto, finds nothing) falls back to text search, the note says why."""
    hits: list[Hit] = []
    close: float | None = None
    note = plan.note
    search_type: SearchKind | None = None
    ranking_name: Ranking | None = None
    if plan.kind in ("vector", "hybrid"):
        try:
            hits, ranking_name, close = _vector_hits(ask, plan, embedding)
        except (EmbeddingError, VectorMismatchError) as exc:
            if isinstance(exc, VectorMismatchError) and asked != "auto":
                raise
            note = f"{plan.kind} search failed, used text search instead: {redact.text(str(exc))}"
            plan = Plan("text", None)
        else:
            if not hits and asked == "auto":
                note = f"{plan.kind} search found nothing, used text search instead"
                plan = Plan("text", None)
            else:
                search_type = plan.kind
    if plan.kind == "text":
        hits, ranking_name, text_note = ranking.text_hits(ask)
        search_type, close = "text", None
        note = "; ".join(part for part in (note, text_note) if part) or None
    assert search_type is not None and ranking_name is not None
    return hits, search_type, ranking_name, note, close


def _run_phrasings(
    base: ranking.Ask, said: list[str], asked: SearchType, plan: Plan, embedding: Embedding
) -> SearchResult:
    """A search of several phrasings (``said[0]`` the query as asked): each ranked as a single search
    would rank it, at once, and the rankings fused (engine/phrasings.py) before the per-document cap."""
    asks = [base] + [
        replace(base, query=q, words=query_words(q, split_words), terms=query_terms(q, base.analysis)) for q in said[1:]
    ]
    kinds: list[SearchKind] = ["text" if plan.kind == "text" or text_only(asked, plan, a) else plan.kind for a in asks]
    note = plan.note
    vectors: dict[int, list[float]] = {}
    wanted = [n for n, kind in enumerate(kinds) if kind != "text" and asks[n].query.strip()]
    if wanted:
        try:
            vectors = dict(zip(wanted, embed([asks[n].query for n in wanted], plan, embedding), strict=True))
        except (EmbeddingError, VectorMismatchError) as exc:
            if isinstance(exc, VectorMismatchError) and asked != "auto":
                raise
            note = f"{plan.kind} search failed, used text search instead: {redact.text(str(exc))}"
            kinds = ["text"] * len(asks)
    lists, by_id = _rankings(asks, kinds, vectors, plan)
    vector_lists = [lists[n] for n, kind in enumerate(kinds) if kind != "text"]
    if asked == "auto" and vector_lists and not any(vector_lists):
        note = f"{plan.kind} search found nothing, used text search instead"
        kinds = ["text"] * len(asks)
        lists, by_id = _rankings(asks, kinds, {}, plan)
    # The query's own note of a text search (no words; a table without a full-text index) when it
    # still says something once the phrasings are fused.
    text_note = ranking.text_note(base) if not any(lists) or base.text_col not in base.facts.fts_columns else None
    if by_id:
        entries = _read(base, asks, phrasings.fuse(lists, lambda row_id: row_id))
    else:
        key = (lambda row: row[ID]) if ID in base.columns else (lambda row: row.get(base.text_col))
        entries = phrasings.fuse(lists, key)
    fused = ranking.per_document(
        ranking.supporting_later(entries, lambda e: e.row),
        lambda e: ranking.source_of(e.row, base.facts.source_columns),
        base.per_document,
        base.limit,
    )
    hits = [_phrasings_hit(entry, asks) for entry in fused]
    search_type: SearchKind = plan.kind if any(kind != "text" for kind in kinds) else "text"
    note = "; ".join(part for part in (note, text_note) if part) or None
    weak = strength.no_good_match(hits) and not any(strength.identifier_found(a.query, a.words, hits) for a in asks)
    if weak:
        note = "; ".join(part for part in (note, strength.note(hits)) if part)
    folders = described(base.facts.descriptions, hits)
    return SearchResult(
        base.query,
        base.tbl.name,
        search_type,
        "rrf",
        note=note,
        no_good_match=weak,
        folders=folders or None,
        hits=tuple(hits),
    )


# Phrasings are ranked at once: LanceDB does its work outside the GIL, so on 2 cores the searches of a
# call with four phrasings overlap instead of queueing (the pool starts its threads on first use).
_POOL = ThreadPoolExecutor(max_workers=phrasings.MAX_PHRASINGS + 1, thread_name_prefix="lancelot-phrasing")


def _rankings(
    asks: list[ranking.Ask], kinds: list[SearchKind], vectors: dict[int, list[float]], plan: Plan
) -> tuple[list[list[Any]], bool]:
    """Each phrasing's ranking, best first, at most the candidate depth: row ids when every one can
    be had without reading rows (True), else rows (the rows of a single search, as it filters them)."""
    ids = list(_POOL.map(lambda n: _ranked_ids(asks[n], kinds[n], vectors.get(n), plan), range(len(asks))))
    if all(found is not None for found in ids):
        return [found or [] for found in ids], True
    return list(_POOL.map(lambda n: _ranked_rows(asks[n], kinds[n], vectors.get(n), plan), range(len(asks)))), False


def _ranked_ids(ask: ranking.Ask, kind: SearchKind, vector: Sequence[float] | None, plan: Plan) -> list[int] | None:
    """One phrasing's row ids, best first, none of the rows read; None when its ranking needs them."""
    if ID not in ask.columns or ask.text_col not in ask.facts.fts_columns:
        return None
    if kind == "text" or vector is None:
        return ranking.bm25_ids(ask, ask.depth)
    assert plan.column is not None
    if kind == "hybrid":
        found = ranking.fused_ids(ask, vector, plan.column.name)
        return None if found is None else found[: ask.depth]
    return ask.tbl.nearest_ids(vector, plan.column.name, ask.depth, ask.row_filter)


def _ranked_rows(ask: ranking.Ask, kind: SearchKind, vector: Sequence[float] | None, plan: Plan) -> list[ranking.Row]:
    """One phrasing's rows, best first, before the per-document cap (at most the candidate depth)."""
    if kind == "text" or vector is None:
        return [row for row, _ in ranking.text_ranked(ask)[0][: ask.depth]]
    assert plan.column is not None
    if kind == "hybrid":
        return [row for row, _, _ in ranking.fused_ranked(ask, vector, plan.column.name)[: ask.depth]]
    return ask.tbl.nearest(vector, plan.column.name, ask.depth, ask.columns, ask.row_filter)


def _read(base: ranking.Ask, asks: list[ranking.Ask], fused: list[phrasings.Fused]) -> list[phrasings.Fused]:
    """The fused ranking's first rows read at once (its entries hold row ids until then); those that
    show none of any phrasing's words are left out when others show some, as a single search leaves
    them out (``ranking.seen_matches``)."""
    wanted = fused[: base.depth]
    rows = base.tbl.take([entry.row for entry in wanted], base.columns)
    entries = [replace(entry, row=rows[entry.row]) for entry in wanted if entry.row in rows]
    kept = [entry for entry in entries if ranking.is_seen(entry.row, *asks)]
    return kept or entries


def _phrasings_hit(entry: phrasings.Fused, asks: list[ranking.Ask]) -> Hit:
    """A fused chunk as a hit: its snippet, ``matched`` and ``strength`` from the phrasing it answers
    best (each phrasing's share of its own words and terms: a hit holding every word of one phrasing
    is a strong hit), and the phrasings that found it."""
    row = entry.row
    text = str(row.get(asks[0].text_col) or "")
    visible = " ".join((text, str(row.get(TITLE) or ""), str(row.get(HEADING) or "")))
    seen = text_terms(visible, asks[0].analysis)
    # a phrasing with no index terms (a word shorter than a gram index's pieces) counts its words as written
    shares = [
        len(a.terms & seen) / len(a.terms)
        if a.terms
        else matched_share(text, a.words)
        if ranking.shorter_than_grams(a)
        else 0.0
        for a in asks
    ]
    # a row in its own language's index (Korean n-grams) holds a phrasing's terms as that index makes them
    for analysis in ranking.row_analyses(asks[0]) if max(shares, default=0.0) < 1 else []:
        own = text_terms(visible, analysis)
        shares = [
            max(share, len(terms & own) / len(terms) if (terms := query_terms(a.query, analysis)) else 0.0)
            for share, a in zip(shares, asks, strict=True)
        ]
    best = max(range(len(asks)), key=lambda n: (shares[n], -n))
    hit = ranking.hit(row, asks[best], entry.score, strength=round(shares[best], 2))
    matched = max(matched_share(text, a.words) for a in asks)
    return replace(hit, matched=round(matched, 3), found_by=tuple(entry.found_by))


def described(descriptions: Mapping[str, str], hits: list[Hit]) -> dict[str, str]:
    """The descriptions (``.lancelotdescribe``) of the folders the hits are in, the whole collection's
    (``"/"``) first, each once: the agent learns what a folder holds without a tool call."""
    if not descriptions:
        return {}
    keys = {key for hit in hits for key in descriptions if key == "/" or hit.source.startswith(key)}
    return {key: descriptions[key] for key in sorted(keys, key=lambda k: (k != "/", k))}


def _vector_hits(ask: ranking.Ask, plan: Plan, embedding: Embedding) -> tuple[list[Hit], Ranking, float | None]:
    assert plan.column is not None and (plan.key is not None or plan.model is not None)
    if not ask.query.strip():
        return [], "distance" if plan.kind == "vector" else "rrf", None
    vector = embed([ask.query], plan, embedding)[0]
    if plan.kind == "hybrid":
        hits, close = ranking.fused(ask, vector, plan.column.name)
        return hits, "rrf", close
    rows = ask.tbl.nearest(vector, plan.column.name, ask.depth, ask.columns, ask.row_filter)
    hits = [ranking.hit(r, ask, r.get("_distance", 0.0)) for r in ranking.capped(rows, ask)]
    # found by meaning: strong when close, whatever words it holds (engine/strength.py)
    return [replace(h, strength=strength.by_meaning(h.strength, h.score)) for h in hits], "distance", None
