"""The only code that writes a LanceDB table. Used by `lancelot index`, never by the server.

How a write stays safe for a reader that runs meanwhile (STACK.md §3, verified there):
1. A new table is created empty and gets its full-text index before any row exists. In a local
   folder this happens in a hidden staging folder, and the finished table is moved into place
   with one rename, so a reader never sees the table without its index.
2. Every write is one ``merge_insert`` commit: rows whose hash changed are updated, new ones
   inserted, rows no longer in the folder deleted. A reader sees the old table or the new one.
3. ``optimize()`` then folds the new rows into the full-text index. It keeps versions younger
   than 7 days, so a reader still on the previous version is not broken.
A run that finds nothing changed commits nothing.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage.schema import CHUNK, FTS_INDEX_NAME, HASH, ID, PATH, TEXT, TITLE, is_local, local_path


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


def write_table(db_uri: str, table: str, rows: Sequence[dict[str, Any]]) -> WriteResult:
    """Make table ``table`` in ``db_uri`` hold exactly ``rows`` (matched by ``id``, changes by ``hash``)."""
    import lancedb
    import pyarrow as pa

    schema = table_schema()
    try:
        db = lancedb.connect(db_uri)
        if table in db:
            tbl = db.open_table(table)
            missing = [f.name for f in schema if f.name not in tbl.schema.names]
            if missing:
                raise IndexingError(
                    f"table {table!r} in {db_uri} was not made by `lancelot index` (it lacks "
                    f"{', '.join(missing)}); pick another name with --table, or remove that table first"
                )
        else:
            tbl = _create_indexed(db, db_uri, table)
        if TEXT not in _fts_columns(tbl):
            tbl.create_index(TEXT, config=fts_config(), name=FTS_INDEX_NAME)
        existing = _existing_hashes(tbl)
        wanted = {row[ID]: row[HASH] for row in rows}
        if len(wanted) != len(rows):
            raise IndexingError("two chunks share one id; this is a bug in the chunk numbering")
        added = sum(1 for key in wanted if key not in existing)
        updated = sum(1 for key, value in wanted.items() if key in existing and existing[key] != value)
        deleted = sum(1 for key in existing if key not in wanted)
        if not (added or updated or deleted):
            return WriteResult(0, 0, 0, int(tbl.version), committed=False)
        data = pa.Table.from_pylist(list(rows), schema=schema)
        (
            tbl.merge_insert(ID)
            .when_matched_update_all(where=f"target.{HASH} != source.{HASH}")
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete()
            .execute(data)
        )
        tbl.optimize()
        return WriteResult(added, updated, deleted, int(tbl.version), committed=True)
    except IndexingError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:
        raise IndexingError(f"could not write table {table!r} in {db_uri}: {exc}") from exc


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
            columns.update(index.columns)
    return columns


def _existing_hashes(tbl: Any) -> dict[str, str]:
    data = tbl.search().select([ID, HASH]).limit(None).to_arrow()
    return dict(zip(data.column(ID).to_pylist(), data.column(HASH).to_pylist()))
