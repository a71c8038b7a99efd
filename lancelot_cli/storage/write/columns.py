"""Column typing for the writer: the Arrow schema, whether a full-text index is outdated, front-matter values typed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lancelot_cli.storage.analyzer import FTS_OPTIONS, ROW_TEXT_COLUMNS, same_analysis
from lancelot_cli.storage.read.facts import is_fts
from lancelot_cli.storage.schema import (
    CHUNK,
    COLUMNS,
    FILE_HASH,
    FILE_MTIME,
    FILE_SIZE,
    HASH,
    HEADING,
    ID,
    LINE_END,
    LINE_START,
    PAGE,
    PATH,
    TEXT,
    TITLE,
    VECTOR,
)

if TYPE_CHECKING:
    import pyarrow as pa


def table_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(ID, pa.string(), nullable=False),
            pa.field(PATH, pa.string()),
            pa.field(TITLE, pa.string()),
            pa.field(CHUNK, pa.int32()),
            pa.field(TEXT, pa.string()),
            pa.field(HASH, pa.string()),
            pa.field(FILE_SIZE, pa.int64()),
            pa.field(FILE_MTIME, pa.int64()),
            pa.field(FILE_HASH, pa.string()),
            pa.field(HEADING, pa.string()),
            pa.field(LINE_START, pa.int32()),
            pa.field(LINE_END, pa.int32()),
            pa.field(PAGE, pa.int32()),
        ]
    )


def fts_outdated(tbl: Any, column: str = TEXT, options: Mapping[str, Any] = FTS_OPTIONS) -> bool:
    """True when ``column``'s index was built with other tokenizer options than ``options``."""
    for index in tbl.list_indices():
        if column in index.columns and is_fts(index):
            return not same_analysis(getattr(index, "index_details", None) or {}, options)
    return False


def infer_type(values: Iterable[Any]) -> pa.DataType:
    """The Arrow type for a column holding ``values`` (None ignored): the narrowest that fits all."""
    import pyarrow as pa

    seen = [v for v in values if v is not None]
    if not seen:
        return pa.string()
    if all(isinstance(v, bool) for v in seen):
        return pa.bool_()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in seen):
        return pa.int64()
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen):
        return pa.float64()
    if all(isinstance(v, list) for v in seen):
        return pa.list_(pa.string())
    return pa.string()


def coerce(value: Any, kind: Any) -> Any:
    """``value`` as a value of Arrow type ``kind`` (a column that already exists), or None."""
    import pyarrow as pa

    if value is None:
        return None
    try:
        if pa.types.is_boolean(kind):
            return value if isinstance(value, bool) else None
        if pa.types.is_integer(kind):
            return int(value) if not isinstance(value, bool) and float(value) == int(value) else None
        if pa.types.is_floating(kind):
            return float(value) if not isinstance(value, bool) else None
        if pa.types.is_list(kind):
            return value if isinstance(value, list) else [str(value)]
    except (TypeError, ValueError):
        return None
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return value if isinstance(value, str) else json.dumps(value)


def complete(row: dict[str, Any], schema: Any) -> dict[str, Any]:
    """The row with every column of the table (None for those it lacks, e.g. ``vector``), values of
    front-matter columns made to fit their column's type."""
    return {f.name: row.get(f.name) if f.name in OWN_COLUMNS else coerce(row.get(f.name), f.type) for f in schema}


OWN_COLUMNS = frozenset({*COLUMNS, VECTOR, *ROW_TEXT_COLUMNS.values()})


def sql_string(value: str) -> str:
    """A SQL string literal: the value in single quotes, inner quotes doubled."""
    return "'" + value.replace("'", "''") + "'"
