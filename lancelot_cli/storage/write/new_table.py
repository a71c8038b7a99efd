"""Where a new table comes from: built aside and renamed into place, or (object store) made empty.

In a local folder the table is built whole in a hidden staging folder and moved into place with
one rename (a reader sees no table, then all of it); in an object store, which has no rename, it
is created empty and indexed at once.

The rows themselves are written by storage/write/first_write.py (with little memory); the writer
(storage/write/table.py) calls this for the first write of a table that does not exist yet.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage.schema import ID, local_path
from lancelot_cli.storage.write import ann, first_write
from lancelot_cli.storage.write.columns import table_schema
from lancelot_cli.storage.write.guard import guard
from lancelot_cli.storage.write.policy import VectorIndexPolicy

# Lance file format of new tables. lancedb 0.40 still writes 2.0 ("stable" there); 2.1, the
# format Lance itself makes by default, reads a search's hits by row id faster (60 random rows of
# a 300k-chunk table: 14.7 -> 9.7 ms) and takes less disk (1M chunks: 2,155 -> 2,104 MB of data).
# Tables already written keep their format (each one records it).
FILE_FORMAT = {"new_table_data_storage_version": "2.1"}


def build_in_place(
    db_uri: str,
    name: str,
    rows: list[dict[str, Any]],
    model: str | None,
    dimension: int | None,
    *,
    release: bool,
    fts: Mapping[str, Any],
    options: dict[str, Any] | None,
    vector_policy: VectorIndexPolicy,
    damaged: bool,
) -> None:
    """Table ``name`` built whole (rows, columns, full-text indexes, the vector index when due) in a
    hidden staging folder of the local database ``db_uri`` and moved into place with one rename; a
    failure before the rename leaves no table (or the ``damaged`` one as it was, which the rename
    replaces)."""
    import lancedb

    if len({row[ID] for row in rows}) != len(rows):
        raise IndexingError("two chunks share one id; this is a bug in the chunk numbering")
    added = len(rows)
    root = local_path(db_uri)
    staging = os.path.join(root, f".staging-{uuid.uuid4().hex}")
    try:
        with guard("create", db_uri, name):
            staged = first_write.create(
                lancedb.connect(staging),
                name,
                rows,
                model,
                dimension,
                release=release,
                storage_options=FILE_FORMAT,
                fts=fts,
                options=options,
            )
            ann.maintain(staged, vector_policy, added)
            del staged
            target = os.path.join(root, f"{name}.lance")
            if damaged and os.path.exists(target):  # --rebuild of a damaged table: it goes aside first
                os.rename(target, os.path.join(staging, "damaged.lance"))
            try:
                os.rename(os.path.join(staging, f"{name}.lance"), target)
            except OSError:
                if damaged and not os.path.exists(target):
                    os.rename(os.path.join(staging, "damaged.lance"), target)  # as it was
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # with the damaged table, if one was put aside


def create_indexed(db: Any, table: str, fts: Mapping[str, Any] | None = None) -> Any:
    """A new table in an object store, which has no atomic rename: created empty, then indexed at
    once (a reader may see it empty and without its index for that moment; it falls back to a
    scan). Local folders build the whole table aside instead (``build_in_place``)."""
    tbl = db.create_table(table, schema=table_schema(), storage_options=FILE_FORMAT)
    first_write.create_text_indexes(tbl, fts)
    return tbl
