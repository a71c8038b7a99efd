"""Read-only access to a LanceDB database: open, list, count, search. No write call exists here.

The connection uses ``read_consistency_interval=0`` so every read sees the latest committed
version: a server that keeps running sees a table that `lancelot index` rebuilt meanwhile.
A local database folder must exist already: ``lancedb.connect`` would create it, so we check first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from lancelot_cli.errors import ColumnNotFoundError, DatabaseNotFoundError, TableNotFoundError
from lancelot_cli.storage.schema import META_KEY, MODEL_TAG, is_local, local_path

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class VectorColumn:
    name: str
    dimension: int
    model: str | None = None  # as recorded by `lancelot index --embed`, if it was


@dataclass(frozen=True)
class RowFilter:
    """Which rows a search may return: a path prefix and equality tests on scalar columns.

    Values reach LanceDB only as typed literals (``lancedb.expr``), never as SQL text, so a value
    such as ``x' OR '1'='1`` is just a string that matches nothing.
    """

    path_column: str | None = None
    path_prefix: str | None = None
    equals: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.path_prefix) or bool(self.equals)


def _where(row_filter: RowFilter | None) -> Any:
    if not row_filter:
        return None
    from lancedb.expr import col, lit

    parts = []
    if row_filter.path_prefix and row_filter.path_column:
        path = col(row_filter.path_column)
        # A prefix as a range of strings: every string that starts with P sorts in [P, P + U+10FFFF).
        parts.append((path >= lit(row_filter.path_prefix)) & (path < lit(row_filter.path_prefix + "\U0010ffff")))
    for column, values in row_filter.equals:
        parts.append(col(column) == lit(values[0]) if len(values) == 1 else col(column).isin(list(values)))
    where = parts[0]
    for part in parts[1:]:
        where = where & part
    return where


def _quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ReadOnlyTable:
    """One table, opened for reading."""

    def __init__(self, name: str, table: Any) -> None:
        self.name = name
        self._table = table

    @property
    def schema(self) -> pa.Schema:
        return self._table.schema

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

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

    def require_column(self, column: str, role: str) -> None:
        if column not in self.schema.names:
            raise ColumnNotFoundError(
                f"table {self.name!r} has no {role} column {column!r}; its columns are: "
                f"{', '.join(self.columns)} (pass {'textColumn' if role == 'text' else 'vectorColumn'} "
                f"or set LANCEDB_{role.upper()}_COLUMN)"
            )

    def fts_columns(self) -> set[str]:
        """Columns that carry a native full-text (inverted) index."""
        found: set[str] = set()
        for index in self._table.list_indices():
            if str(index.index_type).upper() in {"FTS", "INVERTED"}:
                found |= set(index.columns)
        return found

    def fts_coverage(self) -> dict[str, int]:
        """Indexed and unindexed row counts of the full-text index(es)."""
        indexed = unindexed = 0
        for index in self._table.list_indices():
            if str(index.index_type).upper() in {"FTS", "INVERTED"}:
                indexed += int(getattr(index, "num_indexed_rows", 0) or 0)
                unindexed += int(getattr(index, "num_unindexed_rows", 0) or 0)
        return {"indexed": indexed, "unindexed": unindexed}

    def missing_vectors(self, column: str) -> int:
        """Rows whose vector is null (chunks added without `--embed`)."""
        return int(self._table.count_rows(f"{_quote_identifier(column)} IS NULL"))

    def vector_columns(self) -> list[VectorColumn]:
        """Fixed-size float list columns: the ones LanceDB can search by vector."""
        import pyarrow as pa

        found = []
        for field in self.schema:
            kind = field.type
            if pa.types.is_fixed_size_list(kind) and pa.types.is_floating(kind.value_type):
                model = (field.metadata or {}).get(MODEL_TAG.encode())
                found.append(VectorColumn(field.name, int(kind.list_size), model.decode() if model else None))
        return found

    def metadata(self) -> dict[str, Any]:
        """What the indexer recorded in the schema metadata (embedding model...), else {}."""
        raw = (self.schema.metadata or {}).get(META_KEY.encode())
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def fts(self, query: str, column: str, limit: int, columns: Sequence[str],
            row_filter: RowFilter | None = None) -> list[dict[str, Any]]:
        """BM25 hits with ``_score`` (higher is better), among the rows the filter allows."""
        search = self._table.search(query, query_type="fts", fts_columns=column)
        return _filtered(search, row_filter).limit(limit).select([*columns, "_score"]).to_list()

    def nearest(self, vector: Sequence[float], column: str, limit: int, columns: Sequence[str],
                row_filter: RowFilter | None = None) -> list[dict[str, Any]]:
        """Nearest rows by vector with ``_distance`` (lower is closer), among the rows the filter allows."""
        search = self._table.search(list(vector), vector_column_name=column)
        return _filtered(search, row_filter).limit(limit).select([*columns, "_distance"]).to_list()

    def scan(self, columns: Sequence[str], row_filter: RowFilter | None = None) -> pa.Table:
        """Every row the filter allows, only the named columns."""
        return _filtered(self._table.search(), row_filter).select(list(columns)).limit(None).to_arrow()


def store_kind(uri: str) -> str:
    """"local", or the URI scheme ("s3", "gs", "az", "memory"...)."""
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
    where = _where(row_filter)
    return search if where is None else search.where(where, prefilter=True)


class ReadOnlyDatabase:
    """A LanceDB database opened for reading; tables are opened per call (about 1 ms).

    Args:
        uri: a folder, or an object-store URI (``s3://bucket/prefix``, ``gs://``, ``az://``...).
        consistency: seconds between checks for a newer table version (0: every read checks).
        storage_options: extra object-store options; credentials and endpoints also come from the
            standard variables (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``...).
    """

    def __init__(self, uri: str, consistency: float = 0.0, storage_options: dict[str, str] | None = None) -> None:
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
        try:
            # For object stores connect lists the prefix: a wrong bucket or bad credentials fail here.
            self._db = lancedb.connect(uri, read_consistency_interval=timedelta(seconds=consistency),
                                       storage_options=storage_options or None)
        except (ValueError, OSError, RuntimeError) as exc:
            raise DatabaseNotFoundError(_store_problem(uri, exc)) from None

    def table_names(self) -> list[str]:
        names: list[str] = []
        token = None
        while True:
            page = self._db.list_tables(page_token=token)
            names.extend(page.tables)
            token = page.page_token
            if not token:
                return sorted(names)

    def table(self, name: str) -> ReadOnlyTable:
        """Open a table. On an object store the handle is kept: opening costs requests, and the
        handle itself picks up new versions every ``consistency`` seconds. A folder's tables are
        opened per call (about 1 ms), so a table removed and rebuilt is simply found again."""
        if name in self._open:
            return self._open[name]
        try:
            table = ReadOnlyTable(name, self._db.open_table(name))
        except (ValueError, FileNotFoundError) as exc:
            message = str(exc).lower()
            if "not found" not in message and "invalid table name" not in message \
                    and not isinstance(exc, FileNotFoundError):
                raise
            existing = self.table_names()
            hint = f"tables here: {', '.join(existing)}" if existing else "this database has no tables yet; run `lancelot index SRC DB`"
            raise TableNotFoundError(f"table {name!r} not found in {display_uri(self.uri)}; {hint}") from None
        if not is_local(self.uri):
            self._open[name] = table
        return table
