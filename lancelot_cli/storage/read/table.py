"""One table opened for reading: its facts, its searches (full text, vector, by row id) and scans.

Reads return plain rows (lists of dicts), never Arrow objects. Tables come from
``ReadOnlyDatabase.table`` (storage/read/database.py), which keeps their handles and pins their facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

from lancelot_cli.errors import ColumnNotFoundError
from lancelot_cli.storage import damage
from lancelot_cli.storage.analyzer import ROW_TEXT_COLUMNS, match_query, query_languages
from lancelot_cli.storage.read.facts import TableFacts, fts_indices, table_facts
from lancelot_cli.storage.read.filters import RowFilter, where_expression
from lancelot_cli.storage.schema import ID, TEXT

Row = dict[str, Any]
# Threads for the searches in the columns of rows in their own language (``row_text_columns``),
# run while the text index is searched (LanceDB works outside the GIL); started on first use.
_SIDES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lancelot-languages")
# A search with the vector index (IVF_PQ) reads this many partitions at least, and re-ranks about
# this many candidates (at least the limit) by their stored vectors: recall@10 against a flat
# search follows the candidates, 0.93 with 240, 0.98 with 540 at 1M chunks (tests/benchmarks/README.md,
# "Vector search at scale").
ANN_NPROBES, ANN_CANDIDATES = 20, 500


def _quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ReadOnlyTable:
    """One table, opened for reading. Reads return plain rows (lists of dicts), never Arrow objects."""

    def __init__(self, name: str, table: Any) -> None:
        self.name = name
        self._table = table
        self._facts: tuple[int, TableFacts] | None = None
        self._pinned = False  # facts fixed for this object's life (a folder's tables: one per call)

    @property
    def facts(self) -> TableFacts:
        """The table's facts, worked out once per table version (a kept handle sees new versions;
        a handle opened for one call keeps the facts of its opening)."""
        if self._pinned and self._facts is not None:
            return self._facts[1]
        version = self.version
        if self._facts is None or self._facts[0] != version:
            self._facts = (version, table_facts(self.name, self._table))
        return self._facts[1]

    @property
    def columns(self) -> list[str]:
        return list(self.facts.columns)

    @property
    def version(self) -> int:
        return int(self._table.version)

    def updated_at(self) -> str | None:
        """When the current version was written (ISO 8601), i.e. when the table was last indexed."""
        versions = self._table.list_versions()
        if not versions:
            return None
        stamp = max(versions, key=lambda v: v["version"])["timestamp"]
        return stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp)

    def count(self) -> int:
        return int(self._table.count_rows())

    def check(self) -> None:
        """Raise ``TableDamagedError`` when a part a search reads is missing or unreadable (storage/damage.py)."""
        facts = self.facts
        damage.check(self.name, self._table, facts.columns[0], sorted(facts.fts_columns))

    def reading(self) -> AbstractContextManager[None]:
        """Where a read of this table runs: Lance's damage errors come out as one ``TableDamagedError``."""
        return damage.said(self.name)

    def require_column(self, column: str, role: str, facts: TableFacts | None = None) -> None:
        """Raise when ``column`` (the ``role`` column: "text" or "vector") is missing; the hint key
        is ``text_column`` or ``vector_column`` (each surface says how to pass another one)."""
        facts = facts or self.facts
        if column not in facts.columns:
            raise ColumnNotFoundError(
                f"table {self.name!r} has no {role} column {column!r}; its columns are: {', '.join(self.columns)}",
                hint=f"{role}_column",
            )
        if role == "text" and column not in facts.text_columns:
            # Searching a list or number column would fail deep in LanceDB with an Arrow cast error.
            raise ColumnNotFoundError(
                f"column {column!r} of table {self.name!r} holds {facts.types[column]}, not text; its text "
                f"columns are: {', '.join(sorted(facts.text_columns)) or 'none'}",
                hint="text_column",
            )

    def fts_coverage(self) -> dict[str, int]:
        """Indexed and unindexed row counts of the full-text indexes (the text's, and the title,
        heading and path ones: each covers every row, so the least covered one is reported)."""
        counts = [
            (int(getattr(index, "num_indexed_rows", 0) or 0), int(getattr(index, "num_unindexed_rows", 0) or 0))
            for index in fts_indices(self._table)
        ]
        if not counts:
            return {"indexed": 0, "unindexed": 0}
        return {"indexed": min(c[0] for c in counts), "unindexed": max(c[1] for c in counts)}

    def missing_vectors(self, column: str) -> int:
        """Rows whose vector is null (chunks added without `--embed`)."""
        return int(self._table.count_rows(f"{_quote_identifier(column)} IS NULL"))

    def row_text_columns(self, query: str, column: str) -> list[str]:
        """The columns of rows in their own language (``text_ko``...) that a search of ``query`` in
        ``column`` also runs in: for the text column, those with a full-text index whose language
        the query's script can be (none for a "quoted phrase")."""
        if column != TEXT or '"' in query:
            return []
        fts_columns = self.facts.fts_columns
        return [ROW_TEXT_COLUMNS[code] for code in query_languages(query) if ROW_TEXT_COLUMNS[code] in fts_columns]

    def fts(
        self,
        query: str,
        column: str,
        limit: int,
        columns: Sequence[str],
        row_filter: RowFilter | None = None,
        boosts: Mapping[str, float] | None = None,
        row_ids: bool = False,
    ) -> list[Row]:
        """BM25 hits with ``_score`` (higher is better), among the rows the filter allows. With
        ``boosts`` (column -> weight), the query's words are also matched in those columns and each
        one's BM25 score, times its weight, is added to the text column's (see ``fts_query``).
        ``row_ids``: each row also has its ``_rowid`` (not on a table large enough for ``fts_split``).
        A table whose rows of other languages have their own columns is searched in those that fit
        the query too, and the rankings fused (``row_languages.fuse``)."""
        sides = self.row_text_columns(query, column)
        if not sides:
            return self._fts(query, column, limit, columns, row_filter, boosts, row_ids)
        from lancelot_cli.storage.read.row_languages import fuse

        wanted = [*columns, ID] if ID not in columns else list(columns)
        others = [
            _SIDES.submit(self._fts, query, name, limit, wanted, row_filter, boosts, row_ids, True) for name in sides
        ]
        lists = [self._fts(query, column, limit, wanted, row_filter, boosts, row_ids), *(f.result() for f in others)]
        fused = fuse([[(row[ID], float(row["_score"])) for row in rows] for rows in lists], limit)
        by_key = {row[ID]: row for rows in reversed(lists) for row in rows}
        found = [{**by_key[key], "_score": score} for key, score in fused]
        if ID not in columns:
            for row in found:
                row.pop(ID, None)
        return found

    def _fts(
        self,
        query: str,
        column: str,
        limit: int,
        columns: Sequence[str],
        row_filter: RowFilter | None = None,
        boosts: Mapping[str, float] | None = None,
        row_ids: bool = False,
        required: bool = False,
    ) -> list[Row]:
        """``fts`` in one column; ``required``: only rows that match there (a language's column,
        whose boosted title, heading and path match rows of every language)."""
        if boosts and '"' not in query:
            from lancelot_cli.storage.read import fts_split

            if self.facts.rows >= fts_split.MIN_ROWS:  # the same rows, faster on a large table
                rows = fts_split.search(
                    self._table, query, column, boosts, limit, columns, where_expression(row_filter), required
                )
                if rows is not None:
                    return rows
            search = self._table.search(fts_query(query, column, boosts, required), query_type="fts")
        else:
            search = self._table.search(query, query_type="fts", fts_columns=column)
        search = _filtered(search, row_filter).limit(limit).with_row_id(row_ids)
        return search.select([*columns, "_score"]).to_arrow().to_pylist()

    def fts_ids(
        self,
        query: str,
        column: str,
        limit: int,
        row_filter: RowFilter | None = None,
        boosts: Mapping[str, float] | None = None,
    ) -> list[int] | None:
        """The row ids of ``fts``'s rows, best first, none of their columns read: a ranking to fuse
        with others, whose few best rows are then read once (``take``). Reading 60 rows' columns
        costs more than ranking them (FastAPI docs: 4.5 ms against 1.9). None on a table large
        enough for ``fts_split``, whose rows come whole."""
        sides = self.row_text_columns(query, column)
        if not sides:
            scored = self._fts_scores(query, column, limit, row_filter, boosts)
            return None if scored is None else [row_id for row_id, _ in scored]
        from lancelot_cli.storage.read.row_languages import fuse

        others = [_SIDES.submit(self._fts_scores, query, name, limit, row_filter, boosts, True) for name in sides]
        lists = [self._fts_scores(query, column, limit, row_filter, boosts), *(f.result() for f in others)]
        if any(scored is None for scored in lists):
            return None
        return [row_id for row_id, _ in fuse([scored or [] for scored in lists], limit)]

    def _fts_scores(
        self,
        query: str,
        column: str,
        limit: int,
        row_filter: RowFilter | None = None,
        boosts: Mapping[str, float] | None = None,
        required: bool = False,
    ) -> list[tuple[int, float]] | None:
        """``fts_ids`` in one column, each row id with its score (``required``: as ``_fts``)."""
        if boosts and '"' not in query:
            from lancelot_cli.storage.read import fts_split

            if self.facts.rows >= fts_split.MIN_ROWS:
                return None
            search = self._table.search(fts_query(query, column, boosts, required), query_type="fts")
        else:
            search = self._table.search(query, query_type="fts", fts_columns=column)
        data = _filtered(search, row_filter).limit(limit).with_row_id(True).select(["_score"]).to_arrow()
        return list(
            zip(
                (int(row_id) for row_id in data.column("_rowid").to_pylist()),
                (float(score) for score in data.column("_score").to_pylist()),
                strict=True,
            )
        )

    def nearest_ids(
        self, vector: Sequence[float], column: str, limit: int, row_filter: RowFilter | None = None
    ) -> list[int]:
        """The row ids of ``nearest``'s rows, closest first, none of their columns read."""
        search = self._table.search(list(vector), vector_column_name=column)
        refine = max(1, -(-ANN_CANDIDATES // max(1, limit)))
        search = search.minimum_nprobes(ANN_NPROBES).maximum_nprobes(0).refine_factor(refine)
        data = _filtered(search, row_filter).limit(limit).with_row_id(True).select(["_distance"]).to_arrow()
        return [int(row_id) for row_id in data.column("_rowid").to_pylist()]

    def take(self, row_ids: Sequence[int], columns: Sequence[str]) -> dict[int, Row]:
        """The rows of ``row_ids`` (as ``fts_ids`` and ``nearest_ids`` give them) by row id; a row
        gone since (a newer version) is not there."""
        if not row_ids:
            return {}
        data = self._table.take_row_ids(list(row_ids)).with_row_id().select(list(columns)).to_arrow()
        return {int(row.pop("_rowid")): row for row in data.to_pylist()}

    def nearest(
        self,
        vector: Sequence[float],
        column: str,
        limit: int,
        columns: Sequence[str],
        row_filter: RowFilter | None = None,
    ) -> list[Row]:
        """Nearest rows by vector with ``_distance`` (lower is closer), among the rows the filter allows.
        With an ANN index (storage/write/ann.py) at least ``ANN_NPROBES`` partitions are searched (more
        when a filter leaves too few rows there) and ~``ANN_CANDIDATES`` candidates re-ranked by
        their stored vectors; a table without one is searched flat and these settings change nothing."""
        search = self._table.search(list(vector), vector_column_name=column)
        refine = max(1, -(-ANN_CANDIDATES // max(1, limit)))
        search = search.minimum_nprobes(ANN_NPROBES).maximum_nprobes(0).refine_factor(refine)
        return _filtered(search, row_filter).limit(limit).select([*columns, "_distance"]).to_list()

    def rows(self, columns: Sequence[str], row_filter: RowFilter | None = None) -> list[Row]:
        """Every row the filter allows (in table order), only the named columns."""
        return self._scan(columns, row_filter).to_pylist()

    def containing_any(
        self, words: Sequence[str], column: str, columns: Sequence[str], row_filter: RowFilter | None = None
    ) -> list[Row]:
        """Rows whose ``column`` contains at least one of ``words`` (case-insensitive substring),
        in table order: the candidates of a search without a full-text index. Arrow narrows them
        so only matching rows become Python objects."""
        import pyarrow.compute as pc

        data = self._scan(columns, row_filter)
        texts = pc.fill_null(data.column(column).cast("string"), "")
        counts = None
        for word in words:
            found = pc.cast(pc.match_substring(texts, word, ignore_case=True), "int32")
            counts = found if counts is None else pc.add(counts, found)
        picked = [i for i, count in enumerate(counts.to_pylist()) if count] if counts is not None else []
        return data.take(picked).to_pylist() if picked else []

    def _scan(self, columns: Sequence[str], row_filter: RowFilter | None) -> Any:
        return _filtered(self._table.search(), row_filter).select(list(columns)).limit(None).to_arrow()


def fts_query(words: str, column: str, boosts: Mapping[str, float], required: bool = False) -> Any:
    """The full-text query for ``words`` in ``column`` plus the ``boosts`` columns (each with its
    own full-text index): one SHOULD clause per column, so a row's score is the sum of the columns'
    BM25 scores, each times its weight. (LanceDB's MultiMatchQuery keeps only the best column's
    score, so a page whose title and text both match would not gain from the title.) ``required``:
    ``column``'s clause is a MUST (only rows that match there)."""
    from lancedb.query import BooleanQuery, FullTextQuery, Occur

    first = Occur.MUST if required else Occur.SHOULD
    clauses: list[tuple[Occur, FullTextQuery]] = [(first, match_query(words, column))]
    clauses += [
        (Occur.SHOULD, match_query(words, name, boost=float(weight)))
        for name, weight in boosts.items()
        if weight and name != column
    ]
    return BooleanQuery(clauses) if len(clauses) > 1 else match_query(words, column)


def _filtered(search: Any, row_filter: RowFilter | None) -> Any:
    where = where_expression(row_filter)
    return search if where is None else search.where(where, prefilter=True)
