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

    def fts(self, query: str, column: str, limit: int, columns: Sequence[str]) -> list[dict[str, Any]]:
        """BM25 hits with ``_score`` (higher is better)."""
        search = self._table.search(query, query_type="fts", fts_columns=column)
        return search.limit(limit).select([*columns, "_score"]).to_list()

    def nearest(self, vector: Sequence[float], column: str, limit: int, columns: Sequence[str]) -> list[dict[str, Any]]:
        """Nearest rows by vector with ``_distance`` (lower is closer)."""
        search = self._table.search(list(vector), vector_column_name=column)
        return search.limit(limit).select([*columns, "_distance"]).to_list()

    def scan(self, columns: Sequence[str]) -> pa.Table:
        """Every row, only the named columns."""
        return self._table.search().select(list(columns)).limit(None).to_arrow()


class ReadOnlyDatabase:
    """A LanceDB database opened for reading; tables are opened per call (about 1 ms)."""

    def __init__(self, uri: str) -> None:
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
        self._db = lancedb.connect(uri, read_consistency_interval=timedelta(0))

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
        try:
            return ReadOnlyTable(name, self._db.open_table(name))
        except (ValueError, FileNotFoundError) as exc:
            if "not found" not in str(exc).lower() and not isinstance(exc, FileNotFoundError):
                raise
            existing = self.table_names()
            hint = f"tables here: {', '.join(existing)}" if existing else "this database has no tables yet; run `lancelot index SRC DB`"
            raise TableNotFoundError(f"table {name!r} not found in {self.uri}; {hint}") from None
