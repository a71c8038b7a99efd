"""The only code that writes a LanceDB table. Used by `lancelot index`, never by the server.

How a write stays safe for a reader that runs meanwhile (STACK.md §3, verified there):
1. A new table is created empty and gets its full-text index before any row exists. In a local
   folder this happens in a hidden staging folder, and the finished table is moved into place
   with one rename, so a reader never sees the table without its index.
2. Every write of rows is one ``merge_insert`` commit: rows whose hash changed (or that still lack
   a vector) are updated, new ones inserted, rows no longer in the folder deleted. A reader sees
   the old content or the new one.
3. ``optimize()`` then folds the new rows into the full-text index. It keeps versions younger
   than 7 days, so a reader still on the previous version is not broken.
A run that finds nothing changed commits nothing.

Vectors (``index --embed``) live in a ``vector`` column whose field metadata records the model
(``lancedb:tag:model``); vectors of unchanged chunks are reused by content hash.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage.schema import (
    CHUNK, FTS_INDEX_NAME, HASH, ID, MODEL_TAG, PATH, TEXT, TITLE, VECTOR, is_local, local_path,
)


def table_schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema([
        pa.field(ID, pa.string(), nullable=False),
        pa.field(PATH, pa.string()),
        pa.field(TITLE, pa.string()),
        pa.field(CHUNK, pa.int32()),
        pa.field(TEXT, pa.string()),
        pa.field(HASH, pa.string()),
    ])


def fts_config():  # type: ignore[no-untyped-def]
    from lancedb.index import FTS

    # Positions make "quoted phrase" queries work.
    return FTS(with_position=True)


@dataclass(frozen=True)
class WriteResult:
    added: int
    updated: int
    deleted: int
    version: int
    committed: bool


def _guard(action: str, db_uri: str, table: str):  # type: ignore[no-untyped-def]
    """Turn storage errors into one IndexingError that names the table."""
    from contextlib import contextmanager

    @contextmanager
    def wrapped():  # type: ignore[no-untyped-def]
        try:
            yield
        except IndexingError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise IndexingError(f"could not {action} table {table!r} in {db_uri}: {' '.join(str(exc).split())}") from exc

    return wrapped()


class TableWriter:
    """Opens (or creates) one table for writing and makes it hold exactly the rows given."""

    def __init__(self, db_uri: str, table: str) -> None:
        import lancedb

        self.db_uri, self.name = db_uri, table
        with _guard("open", db_uri, table):
            db = lancedb.connect(db_uri)
            if table in db:
                self._tbl = db.open_table(table)
                missing = [f.name for f in table_schema() if f.name not in self._tbl.schema.names]
                if missing:
                    raise IndexingError(
                        f"table {table!r} in {db_uri} was not made by `lancelot index` (it lacks "
                        f"{', '.join(missing)}); pick another name with --table, or remove that table first"
                    )
            else:
                self._tbl = _create_indexed(db, db_uri, table)
            if TEXT not in _fts_columns(self._tbl):
                self._tbl.create_index(TEXT, config=fts_config(), name=FTS_INDEX_NAME)

    # -- what is there ------------------------------------------------------------------------

    def vector_info(self) -> tuple[str | None, int | None]:
        """(model, dimension) of the table's vector column, or (None, None) without one."""
        schema = self._tbl.schema
        if VECTOR not in schema.names:
            return None, None
        field = schema.field(VECTOR)
        model = (field.metadata or {}).get(MODEL_TAG.encode())
        return (model.decode() if model else None), int(field.type.list_size)

    def existing_hashes(self) -> dict[str, str]:
        with _guard("read", self.db_uri, self.name):
            data = self._tbl.search().select([ID, HASH]).limit(None).to_arrow()
        return dict(zip(data.column(ID).to_pylist(), data.column(HASH).to_pylist()))

    def reusable_vectors(self, model: str) -> dict[str, list[float]]:
        """hash -> vector of the rows embedded with ``model`` (empty if the model differs)."""
        stored, _ = self.vector_info()
        if stored != model:
            return {}
        with _guard("read", self.db_uri, self.name):
            data = self._tbl.search().where(f"{VECTOR} IS NOT NULL").select([HASH, VECTOR]).limit(None).to_arrow()
        return dict(zip(data.column(HASH).to_pylist(), data.column(VECTOR).to_pylist()))

    # -- writing ------------------------------------------------------------------------------

    def write(self, rows: Sequence[dict[str, Any]], *, model: str | None = None, dimension: int | None = None) -> WriteResult:
        """Make the table hold exactly ``rows`` (matched by ``id``, changes detected by ``hash``).

        With ``model``, every row carries a ``vector`` of ``dimension`` floats (None where it
        could not be made) and the column records the model.
        """
        import pyarrow as pa

        existing = self.existing_hashes()
        wanted = {row[ID]: row[HASH] for row in rows}
        if len(wanted) != len(rows):
            raise IndexingError("two chunks share one id; this is a bug in the chunk numbering")
        stored_model, stored_dim = self.vector_info()
        vectors_changed = model is not None and (stored_model != model or stored_dim != dimension)
        missing_vectors = 0
        if model is not None and not vectors_changed:
            with _guard("read", self.db_uri, self.name):
                missing_vectors = self._tbl.count_rows(f"{VECTOR} IS NULL")
        added = sum(1 for key in wanted if key not in existing)
        updated = sum(1 for key, value in wanted.items() if key in existing and existing[key] != value)
        deleted = sum(1 for key in existing if key not in wanted)
        if not (added or updated or deleted or vectors_changed or missing_vectors):
            return WriteResult(0, 0, 0, int(self._tbl.version), committed=False)
        with _guard("write", self.db_uri, self.name):
            if vectors_changed:
                self._replace_vector_column(model, dimension)  # type: ignore[arg-type]
            schema = self._tbl.schema
            has_vectors = VECTOR in schema.names
            data = pa.Table.from_pylist([_with_vector(row, has_vectors) for row in rows], schema=schema)
            condition = f"target.{HASH} != source.{HASH}"
            if model is not None:
                condition += f" OR target.{VECTOR} IS NULL"
                if vectors_changed:
                    condition = "true"
            merge = self._tbl.merge_insert(ID).when_matched_update_all(where=condition)
            merge.when_not_matched_insert_all().when_not_matched_by_source_delete().execute(data, on_bad_vectors="null")
            self._tbl.optimize()
        return WriteResult(added, updated, deleted, int(self._tbl.version), committed=True)

    def _replace_vector_column(self, model: str, dimension: int) -> None:
        import pyarrow as pa

        if VECTOR in self._tbl.schema.names:
            self._tbl.drop_columns([VECTOR])
        field = pa.field(VECTOR, pa.list_(pa.float32(), dimension), metadata={MODEL_TAG: model})
        self._tbl.add_columns(field)


def _with_vector(row: dict[str, Any], has_vectors: bool) -> dict[str, Any]:
    if has_vectors and VECTOR not in row:
        return {**row, VECTOR: None}
    return row


def write_table(db_uri: str, table: str, rows: Sequence[dict[str, Any]]) -> WriteResult:
    """Make table ``table`` in ``db_uri`` hold exactly ``rows`` (text only)."""
    return TableWriter(db_uri, table).write(rows)


def _create_indexed(db: Any, db_uri: str, table: str) -> Any:
    """An empty table that has its full-text index from the moment a reader can see it."""
    import lancedb

    if not is_local(db_uri):  # object stores have no atomic rename: create, then index at once
        tbl = db.create_table(table, schema=table_schema())
        tbl.create_index(TEXT, config=fts_config(), name=FTS_INDEX_NAME)
        return tbl
    root = local_path(db_uri)
    staging = os.path.join(root, f".staging-{uuid.uuid4().hex}")
    try:
        staged = lancedb.connect(staging).create_table(table, schema=table_schema())
        staged.create_index(TEXT, config=fts_config(), name=FTS_INDEX_NAME)
        os.rename(os.path.join(staging, f"{table}.lance"), os.path.join(root, f"{table}.lance"))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return db.open_table(table)


def _fts_columns(tbl: Any) -> set[str]:
    columns: set[str] = set()
    for index in tbl.list_indices():
        if str(index.index_type).upper() in {"FTS", "INVERTED"}:
            columns |= set(index.columns)
    return columns
