"""Several phrasings of one question in one search (issue 38): which phrasings count, and how their
rankings become one.

An agent calling ``lancedb_search`` knows the documents' vocabulary better than the user's
question does: it sends ``query`` as asked plus up to ``MAX_PHRASINGS`` other ``queries`` (the
documents' own terms, synonyms, a sentence the answer might contain). Each phrasing is searched
as a single query would be (text, or text and vectors fused); the rankings are then fused by
reciprocal rank: a chunk's score is the sum over the phrasings that found it of
``weight / (FUSION_K + rank)``, the question as asked weighing ``ORIGINAL_WEIGHT`` and every other
phrasing 1. The per-document cap and the limit apply to the fused ranking, as to a single one.

Chosen on the tune splits of eight tuning corpora (English, Chinese, Japanese; 440 questions, half of
them tune) with phrasings a separate model wrote from the question and the tool description alone
(tests/benchmarks/phrasings.py prints the grid; tests/benchmarks/README.md, "Several phrasings"):
MRR@10 of the mean corpus, text search 0.790 query-only -> 0.921, local hybrid 0.805 -> 0.919, both
best at k = 20 with the question weighing as much as each other phrasing (k = 60: 0.918 / 0.909; the
question at 1.5: 0.907 / 0.911). Fusing page ranks instead of chunk ranks scored higher on seven
corpora but lost 0.3 on the eighth, where a whole-book PDF beside the chapter pages holds every
phrasing's words in some chunk: a page's many chunks must not each earn it a vote.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import InvalidArgumentError
from lancelot_cli.limits import (  # the tool's schema and `--also` say the number too
    MAX_PHRASING_CHARS,
    MAX_PHRASINGS,
    MAX_PHRASINGS_CHARS,
)

FUSION_K = 20
ORIGINAL_WEIGHT = 1.0

Row = dict[str, Any]


@dataclass
class Fused:
    """One chunk of the fused ranking: its row (or its row id, until the row is read), fused score and
    the phrasings that found it."""

    row: Any
    score: float
    found_by: list[int]


def distinct(query: str, queries: Sequence[Any] | None) -> list[str]:
    """``[query, *queries]`` without blank phrasings and without repeats of an earlier one (case and
    spacing aside): a repeat would count one phrasing twice. Raises for more than ``MAX_PHRASINGS``,
    a phrasing that is not text, or one longer than ``MAX_PHRASING_CHARS`` (all of them together:
    ``MAX_PHRASINGS_CHARS``): every surface's searches go through here, before any is run."""
    _check_size("the query", query)
    if queries is None:
        return [query]
    if isinstance(queries, (str, bytes)) or not isinstance(queries, Sequence):
        raise InvalidArgumentError(
            f"queries must be a list of up to {MAX_PHRASINGS} strings, got {type(queries).__name__}"
        )
    if len(queries) > MAX_PHRASINGS:
        raise InvalidArgumentError(
            f"queries takes at most {MAX_PHRASINGS} other phrasings, got {len(queries)}; keep the best {MAX_PHRASINGS}"
        )
    for n, phrasing in enumerate(queries, start=1):
        if not isinstance(phrasing, str):
            raise InvalidArgumentError(f"queries[{n - 1}] must be a string, got {type(phrasing).__name__}")
        _check_size(f"other phrasing {n}", phrasing)
    total = len(query) + sum(len(phrasing) for phrasing in queries)
    if total > MAX_PHRASINGS_CHARS:
        raise InvalidArgumentError(
            f"the query and its other phrasings are {total:,} characters together, over the "
            f"{MAX_PHRASINGS_CHARS:,} a search may have; keep the best ones or cut them to their key words"
        )
    said = [query]
    seen = {_folded(query)}
    for phrasing in queries:
        key = _folded(phrasing)
        if key and key not in seen:
            seen.add(key)
            said.append(phrasing)
    return said


def _check_size(name: str, text: object) -> None:
    if isinstance(text, str) and len(text) > MAX_PHRASING_CHARS:
        raise InvalidArgumentError(
            f"{name} is {len(text):,} characters, over the {MAX_PHRASING_CHARS:,} a phrasing may have; "
            "cut it to the words to search for"
        )


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def fuse(
    lists: Sequence[Sequence[Any]],
    key: Callable[[Any], Hashable],
    *,
    k: float = FUSION_K,
    original_weight: float = ORIGINAL_WEIGHT,
) -> list[Fused]:
    """Reciprocal rank fusion of ``lists`` (list 0: the question as asked), best first; ties keep
    the order in which the chunks were first met."""
    entries: dict[Hashable, Fused] = {}
    for n, rows in enumerate(lists):
        weight = original_weight if n == 0 else 1.0
        for rank, row in enumerate(rows, start=1):
            entry = entries.get(key(row))
            if entry is None:
                entry = entries[key(row)] = Fused(row, 0.0, [])
            if n not in entry.found_by:  # a chunk twice in one list (never, but cheap to be sure) counts once
                entry.score += weight / (k + rank)
                entry.found_by.append(n)
    return sorted(entries.values(), key=lambda e: -e.score)
