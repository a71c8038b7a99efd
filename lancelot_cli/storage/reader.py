"""Read-only access to a LanceDB database: open, list, count, search, as plain rows. No write call exists here.

The connection uses ``read_consistency_interval=0`` so every read sees the latest committed
version: a server that keeps running sees a table that `lancelot index` rebuilt meanwhile.
A local database folder must exist already: ``lancedb.connect`` would create it, so we check first.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any, NoReturn

from lancelot_cli.errors import ColumnNotFoundError, DatabaseNotFoundError, TableNotFoundError
from lancelot_cli.storage import damage
from lancelot_cli.storage.analyzer import match_query
from lancelot_cli.storage.facts import TableFacts, VectorColumn, fts_indices, table_facts, table_names
from lancelot_cli.storage.filters import RowFilter, where_expression
from lancelot_cli.storage.schema import describe_path, is_local, languages_path, local_path

__all__ = [
    "ReadOnlyDatabase",
    "ReadOnlyTable",
    "RowFilter",
    "TableFacts",
    "VectorColumn",
    "display_uri",
    "fts_query",
    "quick_table_names",
    "store_kind",
    "warm_up",
]

Row = dict[str, Any]
# A ``_versions`` folder unchanged for this long (ns) has no commit its modification time may hide
# (file systems keep it in steps of a few ms).
SETTLED_NS = 1_000_000_000
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
        ``row_ids``: each row also has its ``_rowid`` (not on a table large enough for ``fts_split``)."""
        if boosts and '"' not in query:
            from lancelot_cli.storage import fts_split

            if self.facts.rows >= fts_split.MIN_ROWS:  # the same rows, faster on a large table
                rows = fts_split.search(
                    self._table, query, column, boosts, limit, columns, where_expression(row_filter)
                )
                if rows is not None:
                    return rows
            search = self._table.search(fts_query(query, column, boosts), query_type="fts")
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
        if boosts and '"' not in query:
            from lancelot_cli.storage import fts_split

            if self.facts.rows >= fts_split.MIN_ROWS:
                return None
            search = self._table.search(fts_query(query, column, boosts), query_type="fts")
        else:
            search = self._table.search(query, query_type="fts", fts_columns=column)
        data = _filtered(search, row_filter).limit(limit).with_row_id(True).select(["_score"]).to_arrow()
        return [int(row_id) for row_id in data.column("_rowid").to_pylist()]

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
        With an ANN index (storage/ann.py) at least ``ANN_NPROBES`` partitions are searched (more
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


def fts_query(words: str, column: str, boosts: Mapping[str, float]) -> Any:
    """The full-text query for ``words`` in ``column`` plus the ``boosts`` columns (each with its
    own full-text index): one SHOULD clause per column, so a row's score is the sum of the columns'
    BM25 scores, each times its weight. (LanceDB's MultiMatchQuery keeps only the best column's
    score, so a page whose title and text both match would not gain from the title.)"""
    from lancedb.query import BooleanQuery, FullTextQuery, Occur

    clauses: list[tuple[Occur, FullTextQuery]] = [(Occur.SHOULD, match_query(words, column))]
    clauses += [
        (Occur.SHOULD, match_query(words, name, boost=float(weight)))
        for name, weight in boosts.items()
        if weight and name != column
    ]
    return BooleanQuery(clauses) if len(clauses) > 1 else match_query(words, column)


def store_kind(uri: str) -> str:
    """ "local", or the URI scheme ("s3", "gs", "az", "memory"...)."""
    return "local" if is_local(uri) else uri.split("://", 1)[0].lower()


def display_uri(uri: str) -> str:
    """The URI without any user:password part (never show a secret)."""
    if "://" not in uri:
        return uri
    scheme, rest = uri.split("://", 1)
    if "@" in rest.split("/", 1)[0]:
        rest = rest.split("@", 1)[1]
    return f"{scheme}://{rest}"


def _store_problem(uri: str, exc: Exception) -> str:
    text = " ".join(str(exc).split())
    shown = display_uri(uri)
    if "404" in text or "NoSuchBucket" in text or "not found" in text.lower():
        why = "the bucket (or container) does not exist"
    elif "403" in text or "AccessDenied" in text or "credential" in text.lower() or "401" in text:
        why = "access was refused: check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"
    elif "connect" in text.lower() or "dns" in text.lower() or "timed out" in text.lower():
        why = "the object store cannot be reached: check AWS_ENDPOINT_URL, AWS_REGION and the network"
    else:
        why = text[:200]
    return f"cannot open the database {shown}: {why}"


def _filtered(search: Any, row_filter: RowFilter | None) -> Any:
    where = where_expression(row_filter)
    return search if where is None else search.where(where, prefilter=True)


_SESSIONS: dict[int, Any] = {}  # cap in MiB -> this process's lancedb.Session with that cap
_SESSIONS_LOCK = threading.Lock()


def _session(index_cache_mb: int) -> Any:
    """One LanceDB session per cap in a process for local folders: databases open side by side (the
    CLI's background server keeps three, server/databases.py) share one cap of index and metadata
    caches instead of holding one each. LanceDB keys its cache entries by dataset, so sharing
    changes no answer. Not for object stores: see ``ReadOnlyDatabase``."""
    import lancedb

    with _SESSIONS_LOCK:
        if index_cache_mb not in _SESSIONS:
            _SESSIONS[index_cache_mb] = lancedb.Session(index_cache_size_bytes=index_cache_mb << 20)
        return _SESSIONS[index_cache_mb]


class ReadOnlyDatabase:
    """A LanceDB database opened for reading; table handles are kept (see ``table``).

    Args:
        uri: a folder, or an object-store URI (``s3://bucket/prefix``, ``gs://``, ``az://``...).
        consistency: seconds between checks for a newer table version (0: every read checks).
        storage_options: extra object-store options; credentials and endpoints also come from the
            standard variables (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``...).
        index_cache_mb: the most index data LanceDB keeps in memory, in MiB (None: LanceDB's 6 GiB).
            A long-running server reads posting lists and vector partitions into this cache and,
            uncapped, keeps every one it has read: on a 1M-chunk table 245 MiB after 100 searches
            and growing with each new word. Frequently read entries stay (LanceDB's cache admits
            and evicts by use): with a 128 MiB cap, text and vector searches kept their speed,
            while repeated words are read again (hybrid +13 %, a run asking each query twice +40 %;
            tests/benchmarks/README.md, "1M chunks", run D).
    """

    def __init__(
        self,
        uri: str,
        consistency: float = 0.0,
        storage_options: dict[str, str] | None = None,
        index_cache_mb: int | None = None,
    ) -> None:
        if is_local(uri):
            path = local_path(uri)
            if not os.path.isdir(path):
                what = "is not a folder" if os.path.exists(path) else "does not exist"
                raise DatabaseNotFoundError(
                    f"database folder {path} {what}; set LANCEDB_PATH (or --db) to the folder "
                    f"`lancelot index SRC DB` wrote, or create it with `lancelot index`"
                )
        import lancedb

        self.uri = uri
        self._open: dict[str, ReadOnlyTable] = {}
        # name -> (folder identity, version, facts): reading a schema and index list on every call
        # costs more than the search itself.
        self._facts: dict[str, tuple[Any, int, TableFacts]] = {}
        self._handles: dict[str, tuple[Any, Any]] = {}  # name -> (folder identity, LanceDB table)
        try:
            # For object stores connect lists the prefix: a wrong bucket or bad credentials fail here.
            # Local folders share one session per cap; an object store gets its own: a session
            # also keeps the object stores it opened, with the credentials they were opened with,
            # and a later database without credentials read the first one's through them.
            if not index_cache_mb:
                self._session = None
            elif is_local(uri):
                self._session = _session(index_cache_mb)
            else:
                self._session = lancedb.Session(index_cache_size_bytes=index_cache_mb << 20)
            self._db = lancedb.connect(
                uri,
                read_consistency_interval=timedelta(seconds=consistency),
                storage_options=storage_options or None,
                session=self._session,
            )
        except (ValueError, OSError, RuntimeError) as exc:
            raise DatabaseNotFoundError(_store_problem(uri, exc)) from None

    def index_cache_bytes(self) -> int | None:
        """Bytes LanceDB's caches hold for this database and any other opened with the same cap in
        this process (index and file metadata), or None when it uses LanceDB's shared default
        session (no ``index_cache_mb``)."""
        return None if self._session is None else int(self._session.size_bytes)

    def table_names(self) -> list[str]:
        return table_names(self._db)

    def table(self, name: str) -> ReadOnlyTable:
        """Open a table. On an object store the handle is kept: opening costs requests, and the
        handle itself picks up new versions every ``consistency`` seconds. A folder's table handle
        is kept while its folder is the same one (device, inode and change time: a table rebuilt and
        renamed into place, or removed, is opened again); each call gets the facts of the version
        it sees, worked out once per version."""
        if name in self._open:
            return self._open[name]
        if "\x00" in name:  # no table can be named so (the file system refuses the name)
            self._not_found(name)
        identity = self._folder_identity(name) if is_local(self.uri) else None
        kept = self._handles.get(name) if identity is not None else None
        if kept is not None and kept[0] == identity:
            handle = kept[1]
        else:
            handle = self._open_table(name)
            if identity is not None:
                self._handles[name] = (identity, handle)
        table = ReadOnlyTable(name, handle)
        if not is_local(self.uri):
            self._open[name] = table
        elif identity is not None:
            self._pin_facts(name, table, identity)
        return table

    def _open_table(self, name: str) -> Any:
        try:
            return self._db.open_table(name)
        except (ValueError, FileNotFoundError) as exc:
            message = str(exc).lower()
            if (
                "not found" not in message
                and "invalid table name" not in message
                and not isinstance(exc, FileNotFoundError)
            ):
                raise
            self._not_found(name)
        except Exception as exc:  # a manifest cut short, say
            if damage.is_damage(exc):
                raise damage.damaged(name, exc) from exc
            raise

    def _not_found(self, name: str) -> NoReturn:
        existing = self.table_names()
        hint = (
            f"tables here: {', '.join(existing)}"
            if existing
            else "this database has no tables yet; run `lancelot index SRC DB`"
        )
        raise TableNotFoundError(f"table {name!r} not found in {display_uri(self.uri)}; {hint}") from None

    def _folder_identity(self, name: str) -> tuple[int, int, int] | None:
        """The table folder's device, inode and change time; None when it cannot be told (then
        the table is opened for this call only)."""
        if not name or name.startswith(".") or os.sep in name or (os.altsep and os.altsep in name):
            return None
        try:
            stat = os.stat(os.path.join(local_path(self.uri), f"{name}.lance"))
        except OSError:
            return None
        return stat.st_dev, stat.st_ino, stat.st_ctime_ns

    def _pin_facts(self, name: str, table: ReadOnlyTable, identity: tuple[int, int, int]) -> None:
        """Give the call's table the facts of the version it sees, reused while the folder and
        version are the same (reading a schema and index list costs more than the search). Each
        commit adds a file to ``_versions``: while that folder's modification time is the same and
        more than SETTLED_NS old, the version has not changed and is not asked for (a round trip)."""
        try:
            versions = os.stat(os.path.join(local_path(self.uri), f"{name}.lance", "_versions")).st_mtime_ns
        except OSError:
            versions = None
        key = (identity, versions)
        cached = self._facts.get(name)
        if cached is not None and cached[0] == key and versions is not None and time.time_ns() - versions > SETTLED_NS:
            version, facts = cached[1], cached[2]
        else:
            version = table.version
            if cached is not None and cached[0][0] == identity and cached[1] == version:
                facts = cached[2]
            else:
                facts = table_facts(name, table._table)
            self._facts[name] = (key, version, facts)
        table._facts = (version, facts)
        table._pinned = True


def quick_table_names(uri: str) -> list[str] | None:
    """A local database's table names from its folder listing, without importing lancedb (for the
    server's instructions, sent before anything heavy is loaded); None for an object store.
    Raises OSError when the folder cannot be read."""
    if not is_local(uri):
        return None
    return sorted(name[: -len(".lance")] for name in os.listdir(local_path(uri)) if name.endswith(".lance"))


def quick_descriptions(uri: str, table: str) -> dict[str, str]:
    """The folder descriptions `lancelot index` copied beside a local table (``schema.describe_path``),
    read without lancedb; {} when there are none or they cannot be read."""
    path = describe_path(uri, table)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def quick_languages(uri: str, table: str) -> list[str]:
    """The languages `lancelot index` found in a local table's documents (``schema.languages_path``),
    read without lancedb; [] when unknown."""
    path = languages_path(uri, table)
    try:
        with open(path, encoding="utf-8") as fh:  # type: ignore[arg-type]
            data = json.load(fh)
    except (OSError, ValueError, TypeError):
        return []
    return [str(code) for code in data] if isinstance(data, list) else []


def warm_up() -> None:
    """Import lancedb now (~1.5 s), e.g. in a background thread, so a first search does not wait for it."""
    with contextlib.suppress(Exception):  # the first real call reports any problem
        import lancedb  # noqa: F401
