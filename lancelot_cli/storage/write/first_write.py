"""The first write of a new table in a local folder, made with little memory.

Issue 25: a full index of three copies of the FastAPI docs peaked at 229 MiB, of the PostgreSQL
manual at 257.

The writer's general path (storage/write/table.py) creates the table empty with its four full-text
indexes, turns every row into one Arrow table, appends it and then runs ``optimize()`` to fold
the rows into the indexes, which rewrites each of them whole. Here, for a table that does not exist
yet (the writer builds it in a staging folder and renames it into place, so a failure leaves the
state before it):
- the table is created from record batches of ``BATCH_ROWS`` rows, built column by column, so
  no second copy of all the rows is held as Arrow data; with ``release`` the caller's list of
  row dicts is emptied batch by batch as well, so their Python objects go as they are written;
- the batches live in pyarrow's system memory pool (glibc malloc), not in its bundled jemalloc
  or mimalloc, which keep freed pages for reuse: ``heap.trim`` then hands them back before the
  full-text indexes are built;
- each full-text index is built once over every row, after the data; no ``optimize()`` follows,
  as it would find nothing to fold or compact (one fragment, every row indexed).
The table holds the same rows, columns, field metadata and indexes as the general path would
make (tests/test_first_write.py), in 5 versions instead of 7.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from lancelot_cli.storage import heap
from lancelot_cli.storage.analyzer import LANGUAGE_OF_COLUMN, fts_config, fts_options
from lancelot_cli.storage.schema import FIELD_INDEX_NAMES, FTS_INDEX_NAME, MODEL_TAG, OPTIONS_TAG, PATH, TEXT, VECTOR
from lancelot_cli.storage.write.columns import OWN_COLUMNS, coerce, infer_type, table_schema

if TYPE_CHECKING:
    import pyarrow as pa

# Rows per record batch: ~1-2 MB of text each for 1,200-character chunks. Lance groups the batches
# into its own pages and files, so the table's layout does not depend on it.
BATCH_ROWS = 1024


def first_schema(
    rows: list[dict[str, Any]], model: str | None, dimension: int | None, options: dict[str, Any] | None = None
) -> pa.Schema:
    """The schema the general path leaves a new table with: the indexer's columns (``path`` with the
    run's ``options`` in its field metadata, as ``TableWriter.save_index_options`` keeps them: no
    commit of their own), then the vector column when ``model`` is given (its field metadata names the
    model), then one column per front-matter key of the rows (sorted), typed from their values."""
    import json

    import pyarrow as pa

    base = table_schema()
    fields = list(base)
    if options:
        at = base.get_field_index(PATH)
        fields[at] = fields[at].with_metadata({OPTIONS_TAG: json.dumps(options)})
    if model is not None:
        fields.append(pa.field(VECTOR, pa.list_(pa.float32(), dimension), metadata={MODEL_TAG: model}))
    keys = sorted({key for row in rows for key in row} - set(base.names) - {VECTOR})
    fields.extend(pa.field(key, infer_type(row.get(key) for row in rows)) for key in keys)
    return pa.schema(fields)


def batches(rows: list[dict[str, Any]], schema: pa.Schema, *, release: bool) -> Iterator[pa.RecordBatch]:
    """The rows as record batches of ``schema``, in their order, in the system memory pool. With
    ``release`` the list is emptied as it goes (each batch's rows are taken off it first)."""
    import pyarrow as pa

    pool = pa.system_memory_pool()
    total = len(rows)
    if release:
        rows.reverse()  # then each batch comes off the end of the list, which costs no moving
    for start in range(0, total, BATCH_ROWS):
        if release:
            chunk = rows[-BATCH_ROWS:]
            del rows[-BATCH_ROWS:]
            chunk.reverse()
        else:
            chunk = rows[start : start + BATCH_ROWS]
        arrays = [pa.array(_values(chunk, field), type=field.type, memory_pool=pool) for field in schema]
        del chunk
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _values(rows: list[dict[str, Any]], field: pa.Field) -> list[Any]:
    """One column of ``rows``: the indexer's own values as they are, front-matter values made to
    fit the column's type (as ``columns.complete`` does for the general path)."""
    name = field.name
    if name in OWN_COLUMNS:
        return [row.get(name) for row in rows]
    return [coerce(row.get(name), field.type) for row in rows]


def create(
    db: Any,
    table: str,
    rows: list[dict[str, Any]],
    model: str | None = None,
    dimension: int | None = None,
    *,
    release: bool = False,
    storage_options: dict[str, str] | None = None,
    fts: Mapping[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Any:
    """Table ``table`` made in ``db`` from ``rows``: its data in one commit, then its four
    full-text indexes, one commit each. With ``release`` the list is empty afterwards (also when
    this fails part way: the caller has given the rows up)."""
    import pyarrow as pa

    schema = first_schema(rows, model, dimension, options)
    try:
        reader = pa.RecordBatchReader.from_batches(schema, batches(rows, schema, release=release))
        tbl = db.create_table(table, data=reader, storage_options=storage_options, on_bad_vectors="null")
        del reader
    finally:
        if release:
            rows.clear()
    # The batches and the rows' objects are freed by now; most of that lies free in the heap (and
    # would stay counted as the process's while the indexes take their own memory): handed back.
    heap.trim()
    create_text_indexes(tbl, fts)
    return tbl


def create_text_indexes(tbl: Any, fts: Mapping[str, Any] | None = None) -> None:
    """The table's four full-text indexes (its text, then the title, heading and path columns), one
    commit each, analyzing words as ``fts`` says (``analyzer.fts_options``): over every row here,
    over none when the writer makes an object store's table."""
    tbl.create_index(TEXT, config=fts_config(fts), name=FTS_INDEX_NAME)
    for column, index_name in FIELD_INDEX_NAMES.items():
        tbl.create_index(column, config=fts_config(fts), name=index_name)
    for column in row_text_columns(tbl.schema.names):
        create_row_text_index(tbl, column)


def row_text_columns(names: Iterable[str]) -> list[str]:
    """The columns among ``names`` that hold the text of the rows of one language (``text_ko``...)."""
    return [name for name in names if name in LANGUAGE_OF_COLUMN]


def create_row_text_index(tbl: Any, column: str) -> None:
    """The full-text index of one language's text column, analyzed as that language's."""
    options = fts_options([LANGUAGE_OF_COLUMN[column]])
    tbl.create_index(column, config=fts_config(options), name=f"{column}_idx", replace=True)
