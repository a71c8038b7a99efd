"""One ranking from the full-text rankings of a table's analyses (issue 51: each row in its own language).

A table whose rows are in several languages keeps the text index of its first language and, for
each other language analyzed otherwise, a column of those rows' text with an index of its own
(storage/analyzer.py ``ROW_TEXT_COLUMNS``). A query runs in the text index and in the columns its
script and words fit (``analyzer.query_languages``), and a row's score is the sum of its BM25
scores, as the weighted columns' scores are summed (``read.table.fts_query``).

Measured on FastAPI's Korean and German docs mixed with the English pages they lack
(tests/benchmarks/row_languages.py; MRR@10 over all questions): the plain sum 0.830 on the Korean
mix, 0.848 on the Korean docs alone, 0.838 on German pages among more English ones; each ranking
divided by its best and summed 0.816 / 0.806 / 0.859; the best of the raw scores 0.830 / 0.824 /
0.774; the best of the divided ones 0.768 / - / 0.812; reciprocal rank fusion 0.790 / - / 0.810.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def fuse(rankings: Sequence[Sequence[tuple[K, float]]], limit: int) -> list[tuple[K, float]]:
    """The best ``limit`` keys of ``rankings`` (each best first, with its BM25 scores), each key's
    scores summed; equal sums in the order the rankings first give them."""
    fused: dict[K, float] = {}
    for ranking in rankings:
        for key, score in ranking:
            fused[key] = fused.get(key, 0.0) + score
    return sorted(fused.items(), key=lambda item: -item[1])[:limit]
