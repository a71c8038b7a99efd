"""The weighted multi-column BM25 query on a large table, computed from single-column queries
with the same result, or not at all (the caller then runs the combined query).

LanceDB runs a BooleanQuery over several indexed columns (``read.table.fts_query``: the text plus the
weighted title, heading path and file path) with a scorer that visits every posting of every
query word: on SciFact chunks it took 12 ms at 10,000 rows, 32 ms at 100,000 and 70-98 ms at
300,000, while a single-column query prunes (WAND) and stays near 10 ms. So, on a large table:

1. one round trip, in parallel: the text column's best ``n`` rows (``n`` well above the limit)
   and each weighted column's single best score (its maximum over the rows the filter allows);
2. one round trip: each weighted column's scores of those ``n`` rows only (a prefilter on their
   row ids), summed with the text's in float32 in the combined query's clause order: the same
   float32 arithmetic as LanceDB's, checked bit for bit (tests/test_fts_split.py);
3. the rows of the best ``limit``, read by row id (a third round trip: see ``search``).

A row outside the ``n`` scores at most the n-th text score plus every weighted column's maximum
times its weight; when the ``limit``-th total is above that bound, the top ``limit`` are exactly
the combined query's (equal totals in row-id order, as LanceDB breaks ties). When it is not, when
rows were added since the full-text indexes were built (see ``_fully_indexed``), or when lancedb
lacks what this needs, ``None`` is returned and the combined query runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from lancelot_cli.storage.analyzer import match_query
from lancelot_cli.storage.read.facts import fts_indices

Row = dict[str, Any]

MIN_ROWS = 50_000  # below this the combined query is as fast (measured: 12 ms against 18 at 10,000 rows)
CANDIDATES = 200  # text rows scored in every column: at least this many, or 4x the limit
# table handle -> (version, columns whose full-text index covers every row)
_INDEXED: weakref.WeakKeyDictionary[Any, tuple[int, frozenset[str]]] = weakref.WeakKeyDictionary()
# Relative slack on the bound for float32 rounding of the sums (scores are ~1-100, ulp ~1e-7).
SLACK = 1e-5


def search(
    table: Any,
    words: str,
    column: str,
    boosts: Mapping[str, float],
    limit: int,
    columns: Sequence[str],
    where: str | None,
    required: bool = False,
) -> list[Row] | None:
    """The combined query's rows (``columns`` plus ``_score``, best first), or None when they
    cannot be had for sure this way (see the module docstring). ``required``: the text column's
    clause is a MUST (``read.table.fts_query``), so a row it does not match scores nothing."""
    handle = _async_handle(table)
    if handle is None or limit < 1:
        return None
    weighted = [(name, float(weight)) for name, weight in boosts.items() if weight and name != column]
    if not weighted or not _fully_indexed(table, [column, *(name for name, _ in weighted)]):
        return None
    n = max(CANDIDATES, 4 * limit)
    text, maxima = _candidates(handle, words, column, weighted, n, where)  # round trip 1
    if not text:
        return None
    full, last_text = len(text) == n, text[-1][1]  # before pruning: what bounds the rows not fetched
    reach = sum(w * m for (_, w), m in zip(weighted, maxima, strict=True))  # the most the weighted columns add
    text = _pruned(text, limit, reach)
    by_column = _weighted_scores(handle, words, weighted, maxima, text)  # round trip 2
    top = _top(text, weighted, by_column, limit, required)
    outside = last_text + reach if full else (0.0 if required else reach)
    if not _sure(top, limit, outside):
        return None
    # Only the top rows are read, once they are known: reading the text's best 2x limit meanwhile
    # (saving this round trip) read twice the rows, and on 2 busy cores that cost more (1M chunks:
    # engine text p50 72 -> 68 ms, hybrid 144 -> 134 ms, the two ways interleaved).
    read = _run(_take(handle, [row_id for _, row_id in top], columns))  # round trip 3
    if any(row_id not in read for _, row_id in top):  # the table changed between the calls
        return None
    return [{**read[row_id], "_score": total} for total, row_id in top]


def _async_handle(table: Any) -> Any | None:
    """The table's async handle, or None when this lancedb lacks what the split needs."""
    try:
        from lancedb.background_loop import LOOP  # noqa: F401 - checked here, used by _run
        from lancedb.table import AsyncTable
    except ImportError:  # a lancedb without these: the combined query
        return None
    handle = getattr(table, "_table", None)
    return handle if isinstance(handle, AsyncTable) else None


def _run(call: Any) -> Any:
    """Run a coroutine on lancedb's background loop (where its async tables live)."""
    from lancedb.background_loop import LOOP

    return LOOP.run(call)


async def _gather(*calls: Any) -> list[Any]:
    import asyncio

    return list(await asyncio.gather(*calls))


async def _scores(handle: Any, query: Any, count: int, predicate: str | None) -> list[tuple[int, float]]:
    """The best ``count`` (row id, score) pairs of one query."""
    built = handle.query().nearest_to_text(query)
    if predicate is not None:
        built = built.where(predicate)
    table_ = await built.limit(count).with_row_id().select(["_score"]).to_arrow()
    return list(zip(table_["_rowid"].to_pylist(), table_["_score"].to_pylist(), strict=True))


async def _take(handle: Any, row_ids: list[int], columns: Sequence[str]) -> dict[int, Row]:
    if not row_ids:
        return {}
    rows = await handle.take_row_ids(row_ids).with_row_id().select(list(columns)).to_arrow()
    return {row.pop("_rowid"): row for row in rows.to_pylist()}


def _candidates(
    handle: Any, words: str, column: str, weighted: list[tuple[str, float]], n: int, where: str | None
) -> tuple[list[tuple[int, float]], list[float]]:
    """The text column's best ``n`` rows and each weighted column's best score, in one round trip."""
    text, *tops = _run(
        _gather(
            _scores(handle, match_query(words, column), n, where),
            *(_scores(handle, match_query(words, name), 1, where) for name, weight in weighted),
        )
    )
    return text, [top[0][1] if top else 0.0 for top in tops]


def _pruned(text: list[tuple[int, float]], limit: int, reach: float) -> list[tuple[int, float]]:
    """The candidates that can still make the top: a row below the limit-th text score minus what
    the weighted columns add at most cannot."""
    if len(text) < limit:
        return text
    floor = text[limit - 1][1] - reach * (1 + SLACK) - SLACK
    return [(row_id, score) for row_id, score in text if score >= floor] if floor > 0 else text


def _weighted_scores(
    handle: Any, words: str, weighted: list[tuple[str, float]], maxima: list[float], text: list[tuple[int, float]]
) -> dict[str, dict[int, float]]:
    """Each weighted column's scores of the candidates (the columns that match at all), in one round trip."""
    ids = ",".join(str(row_id) for row_id, _ in text)
    wanted = [(name, weight) for (name, weight), top in zip(weighted, maxima, strict=True) if top > 0]
    found = (
        _run(
            _gather(
                *(_scores(handle, match_query(words, name), len(text), f"_rowid IN ({ids})") for name, weight in wanted)
            )
        )
        if wanted
        else []
    )
    return {name: dict(rows) for (name, _), rows in zip(wanted, found, strict=True)}


def _top(
    text: list[tuple[int, float]],
    weighted: list[tuple[str, float]],
    by_column: Mapping[str, Mapping[int, float]],
    limit: int,
    required: bool = False,
) -> list[tuple[float, int]]:
    """The best ``limit`` (total, row id) of the candidates."""
    # Equal totals in row-id order, as the combined query puts them (its ties are broken by row
    # address, which is the row id of a table without stable row ids, as `lancelot index` makes).
    ranked = sorted((-_total(score, row_id, weighted, by_column, required), row_id) for row_id, score in text)
    return [(-negative, row_id) for negative, row_id in ranked[:limit]]


def _sure(top: list[tuple[float, int]], limit: int, outside: float) -> bool:
    """Whether no row outside the candidates (scoring at most ``outside``) can be in the top."""
    if len(top) < limit:
        return outside <= 0  # fewer rows than asked: only sure when no other row can score at all
    return top[-1][0] > outside * (1 + SLACK)


def _fully_indexed(table: Any, columns: list[str]) -> bool:
    """Whether each column's full-text index covers every row. With rows added since (searched
    unindexed), LanceDB's combined scores vary in the last float32 bit from one run to the next,
    so there is no one answer to match. Worked out once per table version."""
    version = table.version
    known = _INDEXED.get(table)
    if known is None or known[0] != version:
        covered = frozenset(
            name
            for index in fts_indices(table)
            if getattr(index, "num_unindexed_rows", None) == 0
            for name in index.columns
        )
        known = _INDEXED[table] = (version, covered)
    return all(name in known[1] for name in columns)


def _total(
    text_score: float,
    row_id: int,
    weighted: list[tuple[str, float]],
    by_column: Mapping[str, Mapping[int, float]],
    required: bool = False,
) -> float:
    """The combined query's score: float32 sums in clause order, as LanceDB adds them (with the
    text's clause a MUST, the SHOULD clauses' sum is added to it)."""
    import numpy as np

    if required:
        should = np.float32(0.0)
        for name, weight in weighted:
            should = np.float32(should + np.float32(weight) * np.float32(by_column.get(name, {}).get(row_id, 0.0)))
        return float(np.float32(np.float32(text_score) + should))
    total = np.float32(text_score)
    for name, weight in weighted:
        total = np.float32(total + np.float32(weight) * np.float32(by_column.get(name, {}).get(row_id, 0.0)))
    return float(total)
