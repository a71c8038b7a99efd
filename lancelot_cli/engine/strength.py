"""The "no good match" signal: when every hit of a search is weak, the reply says so, so that an agent
stops rephrasing the same search and tells the user the documents may not cover the question.

A hit's strength (``Hit.strength``, set by ``ranking.hit``) is the share of the query's terms, as
the full-text index analyzes words (stemmed, common words left out), that its text, title or
heading path holds: 0..1 whatever the query's length and the table's scores, so one floor serves
every query and every search type (BM25 scores grow with the query's length and the documents', and
differ from table to table; RRF scores are ranks). Measured with ``tests/benchmarks/no_match.py`` on
the tuning corpora (SciFact train claims, the FastAPI and PostgreSQL tune questions; each table asked
its own questions and the others' as off-topic ones; text search, the best of 10 hits): ROC AUC
0.859 (SciFact), 0.971 (FastAPI), 1.000 (PostgreSQL), against 0.821 / 0.953 / 0.995 for the
substring share ``matched`` and 0.961 / 0.971 / 0.789 for raw BM25. At the floor of 0.5, 92 / 100 /
100 % of the in-domain questions pass and 55 / 84 / 89 % of the off-topic ones are flagged
(tests/benchmarks/README.md, "Current figures", has the command).
"""

from __future__ import annotations

from collections.abc import Sequence

from lancelot_cli.models import Hit
from lancelot_cli.textmatch import identifier_tokens

MATCH_FLOOR = 0.5  # a hit that holds fewer than half the query's words is weak
# A vector search finds by meaning: its best hit often holds few of the query's words ("make the
# browser pop up a username and password prompt" finds HTTP Basic Auth), so the share of terms
# alone called correct first hits no good match (issue 39). Its hits are also strong when they are
# close: cosine similarity at least this. Measured with `tests/benchmarks/no_match.py --type vector
# --tables fastapi` (all-MiniLM-L6-v2; the 30 FastAPI tune questions against 255 off-topic ones; 10
# hits): terms alone passed 83 % of the in-domain questions and flagged 90 % of the off-topic ones
# (ROC AUC 0.973); with similarity 0.4, 97 % and 89 % (AUC 0.983); 0.3: 100 % and 84 %; 0.5: 93 %
# and 90 %. Text search on the same questions: 100 % and 84 %. Not measured with OpenAI's models:
# where similarities run high (ada-002: about 0.7 between unrelated texts) it flags fewer.
SIMILARITY_FLOOR = 0.4


def best(hits: Sequence[Hit]) -> float | None:
    """The strongest hit's strength; None without hits or strengths."""
    found = [hit.strength for hit in hits if hit.strength is not None]
    return max(found) if found else None


def by_meaning(terms: float | None, distance: float) -> float:
    """A vector hit's strength: its share of the query's terms (``terms``) or how close it is,
    whichever is higher. Closeness maps cosine similarity onto the same scale, ``SIMILARITY_FLOOR``
    onto ``MATCH_FLOOR`` and 1 onto 1, linearly on each side. ``distance`` is LanceDB's squared L2
    distance, ``2 - 2 cos`` for unit vectors (OpenAI's and the local models' are). Vectors of
    another length make it a guess, and it only ever raises a strength: at worst a weak hit goes
    unflagged, as before this signal existed, never a strong one flagged."""
    cosine = 1.0 - distance / 2.0
    if cosine >= SIMILARITY_FLOOR:
        close = MATCH_FLOOR + (1.0 - MATCH_FLOOR) * (cosine - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR)
    else:
        close = MATCH_FLOOR * max(cosine, 0.0) / SIMILARITY_FLOOR
    return round(max(terms or 0.0, min(close, 1.0)), 2)


def no_good_match(hits: Sequence[Hit], close: float | None = None) -> bool:
    """True when there are hits and none has a strength of at least ``MATCH_FLOOR``; ``close``: the
    best of a hybrid search's hits by meaning (``by_meaning``, which a vector search's strengths
    are already), which is strong at the floor too (issue 45: a first hit found by the vector leg,
    close to the query yet holding few of its words, was called no good match)."""
    strongest = best(hits)
    return strongest is not None and strongest < MATCH_FLOOR and (close is None or close < MATCH_FLOOR)


def identifier_found(query: str, words: Sequence[str], hits: Sequence[Hit]) -> bool:
    """True for a lookup of identifiers (``MAX_SAVED DEC-0054``: at least half the words, as
    ``ranking.bm25`` treats it) when a hit holds one literally: each identifier is often in its own
    document, so no hit holds half of them, yet every such hit is what was asked for."""
    tokens = identifier_tokens(query)
    if not tokens or len(tokens) * 2 < len(words):
        return False
    return any(token in hit.text.casefold() for hit in hits for token in tokens)


def note(hits: Sequence[Hit], by_vector: bool = False) -> str:
    """What the reply's note says when ``no_good_match``: the best strength, and what to do next
    (``by_vector``: the hits of a vector or hybrid search, which are not close in meaning either)."""
    close = " and none is close in meaning" if by_vector else ""
    return (
        f"no good match: no hit holds half of the query's terms{close} (best strength {best(hits) or 0:.2f}); "
        f"the documents may not cover this: try the words they would use, or tell the user it was not found"
    )
