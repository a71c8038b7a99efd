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


def best(hits: Sequence[Hit]) -> float | None:
    """The strongest hit's strength; None without hits or strengths."""
    found = [hit.strength for hit in hits if hit.strength is not None]
    return max(found) if found else None


def no_good_match(hits: Sequence[Hit]) -> bool:
    """True when there are hits and none has a strength of at least ``MATCH_FLOOR``."""
    strongest = best(hits)
    return strongest is not None and strongest < MATCH_FLOOR


def identifier_found(query: str, words: Sequence[str], hits: Sequence[Hit]) -> bool:
    """True for a lookup of identifiers (``MAX_SAVED DEC-0054``: at least half the words, as
    ``ranking.bm25`` treats it) when a hit holds one literally: each identifier is often in its own
    document, so no hit holds half of them, yet every such hit is what was asked for."""
    tokens = identifier_tokens(query)
    if not tokens or len(tokens) * 2 < len(words):
        return False
    return any(token in hit.text.casefold() for hit in hits for token in tokens)


def note(hits: Sequence[Hit]) -> str:
    """What the reply's note says when ``no_good_match``: the best strength, and what to do next."""
    return (
        f"no good match: no hit holds half of the query's terms (best strength {best(hits) or 0:.2f}); the "
        f"documents may not cover this: try the words they would use, or tell the user it was not found"
    )
