"""Ranking: BM25 over the text and (weighted) the title, heading path and file path, identifier
lookups first, the substring scan of a table without a full-text index, reciprocal rank fusion of
BM25 and vector rankings, at most a few chunks per document, and rows turned into ``Hit``s."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lancelot_cli.codewords import without_name_words
from lancelot_cli.engine.strength import by_meaning
from lancelot_cli.models import Hit, TextRanking
from lancelot_cli.storage.analyzer import (
    DEFAULT,
    ROW_TEXT_COLUMNS,
    Analysis,
    holds_term,
    query_terms,
    share_of_terms,
)
from lancelot_cli.storage.read.database import ReadOnlyTable, RowFilter
from lancelot_cli.storage.read.facts import TableFacts
from lancelot_cli.storage.schema import FILE_STATE, HASH, HEADING, ID, KIND, PATH, TITLE
from lancelot_cli.textmatch import identifier_tokens, matched_share, only_stop_words, snippet

# Tuned on the BEIR SciFact train split (tests/benchmarks/quality.py): K=10 and 100 candidates per
# ranking beat the usual K=60 and 50 (train nDCG@10 0.728 against 0.717).
RRF_K = 10
HYBRID_DEPTH = 100  # candidates taken from each ranking before fusing
IDENTIFIER_DEPTH = 50  # BM25 candidates re-ordered when a query looks up identifiers
# Bookkeeping columns of `lancelot index` and LanceDB's score columns: never sent as metadata.
# (The text of rows in their own language, ``text_ko``..., is the text again: storage/analyzer.py.)
HIDDEN_COLUMNS = frozenset(
    {"_score", "_distance", "_relevance_score", "_rowid", HASH, *FILE_STATE, *ROW_TEXT_COLUMNS.values()}
)
# BM25 of the query in these columns (each with its own full-text index, built by `lancelot index`),
# times the weight, is added to the text's BM25. Tuned on the `tune` half of the PostgreSQL known-item
# questions (tests/benchmarks/known_items.py): title weight 0.25 to 0.3 (title and heading path
# together, as a heading path starts with the title) took MRR@10 from 0.700 to 0.796; weights of 0.5
# and more let short pages that only name a word in their title win (1.0: 0.709). The file path is
# mostly the title again on a documentation site (0.05 cost one question there) but it is the only
# place a folder name ("auth/tokens.md") is searchable, so it gets the smallest weight.
FIELD_BOOSTS: Mapping[str, float] = {TITLE: 0.15, HEADING: 0.1, PATH: 0.05}
# At most this many chunks of one document among a reply's hits, unless fewer documents match (then
# the rest follow in rank order): 2 gave the same MRR@10 as 3 on the tune half and 7.5 distinct
# documents of 10 instead of 6.6 (1: 10 distinct, but a question whose answer is the second part of a
# page loses it). 0 turns it off.
PER_DOCUMENT = 2
MIN_CANDIDATES = 50  # rows ranked before the per-document cap: at least this, or 3x the limit

NO_WORDS = "the query has no words to search for"
ONLY_STOP_WORDS = "the query has only common words (the, of, and...); add a more specific word"

Row = dict[str, Any]


@dataclass(frozen=True)
class Ask:
    """One search request, resolved against its table: what every ranking needs."""

    tbl: ReadOnlyTable
    query: str
    words: list[str]
    text_col: str
    limit: int
    columns: list[str]  # the columns a hit carries (no vectors)
    row_filter: RowFilter | None
    facts: TableFacts
    per_document: int = PER_DOCUMENT
    boosts: Mapping[str, float] = field(default_factory=dict)
    terms: frozenset[str] = frozenset()  # the query as the index analyzes it: what a hit's strength counts
    analysis: Analysis = DEFAULT  # how the text's full-text index analyzes words (storage/analyzer.py)

    @property
    def depth(self) -> int:
        """How many rows to rank before capping chunks per document."""
        return self.limit if not self.per_document else candidate_depth(self.limit)


def candidate_depth(limit: int) -> int:
    return max(MIN_CANDIDATES, 3 * limit)


def reply_columns(facts: TableFacts) -> list[str]:
    """The columns a hit needs: the payload without the indexer's bookkeeping (hashes, file state)."""
    return [c for c in facts.payload if c not in HIDDEN_COLUMNS]


def field_boosts(facts: TableFacts, text_col: str) -> dict[str, float]:
    """The weighted columns this table can search besides ``text_col`` (those with a full-text
    index); none for a table indexed before they were, so it is searched as before."""
    return {c: w for c, w in FIELD_BOOSTS.items() if c in facts.fts_columns and c != text_col}


T = TypeVar("T")

# Tests and migrations (the `kind` column indexer/code.py writes) rank below the code they exercise
# when both match: each moves this many places down its ranking, before the per-document cap (issue
# 47). A search filtered to `kind: test` moves every hit alike, so nothing changes there.
SUPPORTING = frozenset({"test", "migration"})
SUPPORTING_SHIFT = 5


def supporting_later(items: Sequence[T], row_of: Callable[[T], Row]) -> list[T]:
    """``items`` with each test or migration chunk ``SUPPORTING_SHIFT`` places further down (stable)."""
    marked = [row_of(item).get(KIND) in SUPPORTING for item in items]
    if not any(marked):
        return list(items)
    order = sorted(range(len(items)), key=lambda n: n + SUPPORTING_SHIFT + 0.5 if marked[n] else n)
    return [items[n] for n in order]


def per_document(items: Sequence[T], source: Callable[[T], str], cap: int, limit: int) -> list[T]:
    """The first ``limit`` items with at most ``cap`` of one source (0: no cap). When that leaves
    fewer than ``limit``, the items held back follow in rank order. Items without a source are
    never held back."""
    if not cap:
        return list(items[:limit])
    kept: list[T] = []
    held: list[T] = []
    seen: dict[str, int] = {}
    for item in items:
        key = source(item)
        if key and seen.get(key, 0) >= cap:
            held.append(item)
            continue
        seen[key] = seen.get(key, 0) + 1
        kept.append(item)
        if len(kept) == limit:
            return kept
    return (kept + held)[:limit]


def bm25(ask: Ask, limit: int) -> list[Row]:
    """BM25 hits. The query is sent as its words, each once (a query with a double quote, a
    phrase, goes as typed). A lookup of identifiers (MAX_SAVED, DEC-0054, createClient: at least
    half of the words) puts the hits that contain them literally first, in BM25 order: the
    tokenizer splits identifiers into parts, and a text that repeats the parts would win."""
    asked = ask.query if '"' in ask.query else " ".join(ask.words)
    tokens = identifier_tokens(ask.query)
    if not tokens or len(tokens) * 2 < len(ask.words):
        return ask.tbl.fts(asked, ask.text_col, limit, ask.columns, ask.row_filter, ask.boosts)
    rows = ask.tbl.fts(asked, ask.text_col, max(limit, IDENTIFIER_DEPTH), ask.columns, ask.row_filter, ask.boosts)
    return _literal_first(rows, ask, tokens)[:limit]


def _literal_first(rows: Sequence[Row], ask: Ask, tokens: Sequence[str]) -> list[Row]:
    """``rows`` with those holding more of the identifiers literally first (stable: BM25 order within
    a group)."""

    def literal(row: Row) -> int:
        text = str(row.get(ask.text_col) or "").casefold()
        return sum(1 for token in tokens if token in text)

    return sorted(rows, key=lambda row: -literal(row))


Ranked = list[tuple[Row, float]]  # rows best first, each with its score, before the per-document cap


def text_note(ask: Ask) -> str | None:
    """What a text search of ``ask`` says besides its hits: that the query has no words to search
    for, or only common ones, or that the table has no full-text index (then a substring scan ranks)."""
    if ask.text_col not in ask.facts.fts_columns:
        if not ask.words:
            return NO_WORDS
        return (
            f"the table has no full-text index on {ask.text_col!r}, so hits are ranked by the share of "
            f"query words they contain"
        )
    if not ask.words:
        return NO_WORDS
    return ONLY_STOP_WORDS if only_stop_words(ask.words) else None


def shorter_than_grams(ask: Ask) -> int | None:
    """The index's shortest piece when it is cut into character grams (Korean: 2-3) and every word
    of the query is shorter (a one-syllable Korean query: the index holds no such term), else None."""
    if not ask.words:
        return None
    for analysis in (ask.analysis, *row_analyses(ask)):  # (Korean rows' own column: its n-grams)
        options = dict(analysis)
        if options.get("base_tokenizer") == "ngram":
            shortest = int(options.get("ngram_min_length") or 1)
            if all(len(word) < shortest for word in ask.words):
                return shortest
    return None


def text_ranked(ask: Ask) -> tuple[Ranked, TextRanking, str | None]:
    """The rows of a text search best first with their scores, its ranking ("bm25" or "substring")
    and a note, if any. A query whose words are all shorter than a gram index's pieces is looked
    for in the text itself (issue 46 #9: a one-syllable Korean query found nothing, with no word)."""
    note = text_note(ask)
    grams = shorter_than_grams(ask) if ask.text_col in ask.facts.fts_columns else None
    if grams:
        rows = ask.tbl.containing_any(ask.words, ask.text_col, ask.columns, ask.row_filter)
        found = [(r, matched_share(str(r.get(ask.text_col) or ""), ask.words)) for r in rows]
        short = (
            f"the index cuts this table's text into pieces of {grams} or more characters, shorter than "
            f"every query word: hits are the chunks holding it, unranked; a longer word ranks them"
        )
        return [(r, share) for r, share in found if share > 0][: ask.depth], "substring", short
    if ask.text_col in ask.facts.fts_columns:
        if note is not None:
            return [], "bm25", note
        rows = seen_matches(bm25(ask, ask.depth), ask)
        return [(r, r.get("_score", 0.0)) for r in rows], "bm25", None
    if not ask.words:
        return [], "substring", note
    rows = ask.tbl.containing_any(ask.words, ask.text_col, ask.columns, ask.row_filter)
    # Score in Python (the original's share of words); storage only narrowed the candidates.
    scored = [(matched_share(str(r.get(ask.text_col) or ""), ask.words), i, r) for i, r in enumerate(rows)]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [(r, share) for share, _, r in scored], "substring", note


def bm25_ids(ask: Ask, limit: int) -> list[int] | None:
    """The row ids of ``bm25``'s rows in its order, their columns not read (``ReadOnlyTable.fts_ids``)
    but for a lookup of identifiers, whose order needs the text; None when the table only gives whole
    rows. A query with no words to search for ranks nothing."""
    if text_note(ask) is not None:
        return []
    if shorter_than_grams(ask):
        return None  # looked for in the text: text_ranked
    asked = ask.query if '"' in ask.query else " ".join(ask.words)
    tokens = identifier_tokens(ask.query)
    if not tokens or len(tokens) * 2 < len(ask.words):
        return ask.tbl.fts_ids(asked, ask.text_col, limit, ask.row_filter, ask.boosts)
    rows = ask.tbl.fts(
        asked, ask.text_col, max(limit, IDENTIFIER_DEPTH), [ask.text_col], ask.row_filter, ask.boosts, row_ids=True
    )
    if rows and "_rowid" not in rows[0]:
        return None
    return [row["_rowid"] for row in _literal_first(rows, ask, tokens)][:limit]


def fused_ids(ask: Ask, vector: Sequence[float], vector_col: str) -> list[int] | None:
    """``fused_ranked``'s order as row ids (the same fusion of the same two rankings), or None where
    ``bm25_ids`` has none."""
    depth = max(ask.depth, HYBRID_DEPTH)
    near = _LEGS.submit(ask.tbl.nearest_ids, vector, vector_col, depth, ask.row_filter)
    text = bm25_ids(ask, depth)
    if text is None:
        near.result()
        return None
    scores: dict[int, float] = {}
    for rows in (text, near.result()):
        for rank, row_id in enumerate(rows, start=1):
            scores[row_id] = scores.get(row_id, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores, key=lambda row_id: -scores[row_id])


def text_hits(ask: Ask) -> tuple[list[Hit], TextRanking, str | None]:
    """Hits of a text search, its ranking ("bm25" or "substring") and a note, if any."""
    ranked, ranking, note = text_ranked(ask)
    ranked = supporting_later(ranked, lambda e: e[0])
    kept = per_document(ranked, lambda e: source_of(e[0], ask.facts.source_columns), ask.per_document, ask.limit)
    return [hit(r, ask, score) for r, score in kept], ranking, note


def seen_matches(rows: Sequence[Row], ask: Ask) -> list[Row]:
    """The rows whose text, title or heading path holds a query word, when any does: BM25 also
    scores the file path, and a hit that matched only its folder's name (``policies/``) shows a
    person nothing they asked for. A search that matched only paths keeps its rows."""
    kept = [row for row in rows if is_seen(row, ask)]
    return kept or list(rows)


def is_seen(row: Row, ask: Ask, *others: Ask) -> bool:
    """Whether the row's text, title or heading path holds one of the words of the query (or of one
    of ``others``: several phrasings), as written or as the index analyzes them (analyzed once)."""
    visible = " ".join(str(row.get(c) or "") for c in (ask.text_col, TITLE, HEADING))
    asks = (ask, *others)
    if any(matched_share(visible, a.words) > 0 for a in asks):
        return True
    terms = frozenset().union(*(a.terms for a in asks))
    if holds_term(visible, terms, ask.analysis):
        return True
    # a row found in its own language's index (Korean n-grams) holds the query's terms as that one makes them
    return any(
        holds_term(visible, frozenset().union(*(query_terms(a.query, analysis) for a in asks)), analysis)
        for analysis in row_analyses(ask)
    )


def row_analyses(ask: Ask) -> list[Analysis]:
    """How the columns of rows in their own language that the query also runs in analyze words
    (``ReadOnlyTable.row_text_columns``); none on most tables."""
    columns = ask.tbl.row_text_columns(ask.query, ask.text_col) if ask.text_col in ask.facts.fts_columns else []
    return [ask.facts.analyses[column] for column in columns if column in ask.facts.analyses]


def capped(rows: Sequence[Row], ask: Ask) -> list[Row]:
    """``rows`` with at most ``ask.per_document`` chunks of one document, ``ask.limit`` of them."""
    rows = supporting_later(rows, lambda row: row)
    return per_document(rows, lambda row: source_of(row, ask.facts.source_columns), ask.per_document, ask.limit)


def fused(ask: Ask, vector: Sequence[float], vector_col: str) -> tuple[list[Hit], float | None]:
    """Reciprocal rank fusion of the BM25 and the vector ranking: score = sum of 1/(RRF_K + rank).

    Each hit says where it stood in each ranking (``ranks``), so the fused score can be explained.
    Also the strongest of the hits' strengths by meaning (``strength.by_meaning``, None when the
    vector leg found none of them): a hit found by meaning holds few of the query's words, and the
    share of terms alone called a right first hit "no good match" (issue 45).
    """
    best = per_document(
        supporting_later(fused_ranked(ask, vector, vector_col), lambda e: e[0]),
        lambda e: source_of(e[0], ask.facts.source_columns),
        ask.per_document,
        ask.limit,
    )
    hits = [hit(row, ask, score, ranks) for row, score, ranks in best]
    distances = [_distance(row) for row, _, _ in best]
    close = [by_meaning(found.strength, d) for found, d in zip(hits, distances, strict=True) if d is not None]
    return hits, max(close, default=None)


def _distance(row: Row) -> float | None:
    """The row's distance from the query vector, when the vector leg found it."""
    value = row.get("_distance")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def fused_ranked(ask: Ask, vector: Sequence[float], vector_col: str) -> list[tuple[Row, float, dict[str, int]]]:
    """The rows of ``fused`` best first, each with its fused score and its rank in each ranking,
    before the per-document cap."""
    depth = max(ask.depth, HYBRID_DEPTH)
    key = (lambda row: row[ID]) if ID in ask.columns else (lambda row: row.get(ask.text_col))
    # The two legs run at once (LanceDB does the work outside the GIL): the reply is the slower
    # leg's time instead of the sum (at 1M chunks ~60 ms each); the lists are the same either way.
    near = _LEGS.submit(ask.tbl.nearest, vector, vector_col, depth, ask.columns, ask.row_filter)
    text = bm25(ask, depth) if ask.words and not only_stop_words(ask.words) else []
    lists = {"bm25": text, "vector": near.result()}
    entries: dict[Any, dict[str, Any]] = {}
    for name, rows in lists.items():
        for rank, row in enumerate(rows, start=1):
            entry = entries.setdefault(key(row), {"row": row, "score": 0.0, "ranks": {}})
            if name == "vector" and entry["row"] is not row and "_distance" in row:
                entry["row"] = {**entry["row"], "_distance": row["_distance"]}  # how close: its strength
            entry["score"] += 1.0 / (RRF_K + rank)
            entry["ranks"][name] = rank
    return [(e["row"], e["score"], e["ranks"]) for e in sorted(entries.values(), key=lambda e: -e["score"])]


# Threads for hybrid searches' vector legs: a few, so searches from several threads at once (as the
# HTTP server runs them) do not queue behind one another; the pool starts its threads on first use.
_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lancelot-vector")


def source_of(row: Row, source_columns: Sequence[str]) -> str:
    """The row's document, from the first non-empty source column ("" when none)."""
    return next((str(row[c]) for c in source_columns if row.get(c)), "")


def hit(row: Row, ask: Ask, score: float, ranks: dict[str, int] | None = None, strength: float | None = None) -> Hit:
    """``row`` as a hit; ``strength`` when the caller worked it out already (several phrasings). A code
    chunk's line of name words (lancelot_cli/codewords.py) counts for its strength but is not shown."""
    indexed = str(row.get(ask.text_col) or "")
    text = without_name_words(indexed)
    source = source_of(row, ask.facts.source_columns)
    title = str(row.get(TITLE) or (os.path.basename(source.rstrip("/")) if source else "") or "(untitled)")
    hidden = {ID, TITLE, ask.text_col, *HIDDEN_COLUMNS}
    matched = round(matched_share(indexed, ask.words), 3)
    return Hit(
        id=str(row[ID]) if row.get(ID) is not None else f"{source}#?",
        score=_number(score),
        matched=matched,
        strength=strength if strength is not None else _strength(row, ask, indexed, title) if ask.terms else matched,
        title=title,
        source=source,
        snippet=snippet(text, ask.words),
        # Empty columns are left out: they cost an agent tokens and say nothing.
        metadata={k: v for k, v in row.items() if k not in hidden and v is not None},
        text=text,
        ranks=ranks,
    )


def _strength(row: Row, ask: Ask, text: str, title: str) -> float:
    """The share of the query's terms the hit's text, title or heading path holds, as the index
    analyzes words (stemmed, common words left out): engine/strength.py says why and how it is used."""
    visible = " ".join((text, title, str(row.get(HEADING) or "")))
    share = share_of_terms(visible, ask.terms, ask.analysis)
    for analysis in row_analyses(ask) if share < 1 else []:
        share = max(share, share_of_terms(visible, query_terms(ask.query, analysis), analysis))
    return round(share, 2)


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return round(number, 6) if math.isfinite(number) else 0.0
