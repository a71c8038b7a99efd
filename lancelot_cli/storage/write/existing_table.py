"""An existing table opened for writing: checked for damage, brought up to date, or refused.

A little of each of its parts is read for damage; the columns newer Lancelot versions added are
added; a table that `lancelot index` did not make is refused.

A part of the writer (storage/write/table.py), never used by the server.
"""

from __future__ import annotations

from typing import Any

from lancelot_cli.errors import IndexingError, TableDamagedError
from lancelot_cli.storage import damage
from lancelot_cli.storage.read.facts import fts_columns
from lancelot_cli.storage.schema import ADDED_LATER
from lancelot_cli.storage.write.columns import table_schema


def open_checked(db: Any, db_uri: str, table: str) -> tuple[Any, IndexingError | None]:
    """``table`` opened, checked and brought up to date, and None; or None and what is wrong when it
    is damaged (the caller decides whether to build it anew). Raises when the table lacks columns
    `lancelot index` makes."""
    tbl, broken = _open_whole(db, db_uri, table)
    if broken is not None:
        return None, broken
    missing = [f.name for f in table_schema() if f.name not in tbl.schema.names]
    if missing and set(missing) <= set(ADDED_LATER):
        # A table from an earlier Lancelot: add the newer columns (null file state = re-read once).
        tbl.add_columns([f for f in table_schema() if f.name in missing])
        missing = []
    if missing:
        raise IndexingError(
            f"table {table!r} in {db_uri} was not made by `lancelot index` (it lacks "
            f"{', '.join(missing)}); pick another name with --table, or remove that table first"
        )
    return tbl, None


def _open_whole(db: Any, db_uri: str, table: str) -> tuple[Any, IndexingError | None]:
    """``table`` opened, and None; or None and what is wrong when opening it or reading a little of
    each of its parts fails as damage does (storage/damage.py: one column of every data file, each
    full-text index)."""
    try:
        with damage.said(table):
            tbl = db.open_table(table)
        damage.check(table, tbl, tbl.schema.names[0], sorted(fts_columns(tbl)))
    except TableDamagedError as exc:
        return None, IndexingError(f"{exc} (in {db_uri})")
    return tbl, None
