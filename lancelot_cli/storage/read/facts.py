"""What a table holds, worked out once from its schema and index list.

Text, vector and source columns, full-text indexes, the indexer's recorded metadata, the row count.
Also the one full-text-index test (``fts_indices``) that the reader and the writer share."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lancelot_cli.storage.analyzer import analysis_of
from lancelot_cli.storage.schema import META_KEY, MODEL_TAG, OPTIONS_TAG, PATH, SOURCE_COLUMNS

FTS_INDEX_TYPES = frozenset({"FTS", "INVERTED"})


@dataclass(frozen=True)
class VectorColumn:
    name: str
    dimension: int
    model: str | None = None  # as recorded by `lancelot index --embed`, if it was


@dataclass(frozen=True)
class TableFacts:
    """One version of a table, described once (reading a schema or listing indexes costs I/O)."""

    name: str
    columns: tuple[str, ...]
    types: Mapping[str, Any]  # column -> Arrow type (used to coerce filter values)
    vectors: tuple[VectorColumn, ...]  # fixed-size float lists: searchable by vector
    payload: tuple[str, ...]  # columns sent to clients: all but vectors and other float lists
    text_columns: frozenset[str]  # string columns
    fts_columns: frozenset[str]  # columns with a native full-text (inverted) index
    metadata: Mapping[str, Any]  # what the indexer recorded (embedding model...), else {}
    rows: int  # of this version (a search asks it to pick its way: storage/read/fts_split.py)
    source_columns: tuple[str, ...] = SOURCE_COLUMNS
    descriptions: Mapping[str, str] = field(default_factory=dict)  # folder -> what it holds (.lancelotdescribe)
    # column -> how its full-text index analyzes words (``analyzer.Analysis``), as the index records it
    analyses: Mapping[str, Any] = field(default_factory=dict)
    languages: tuple[str, ...] = ()  # what `lancelot index` found the documents are written in, most first

    @property
    def source_column(self) -> str | None:
        """The column that names each row's document, most specific first; None when there is none."""
        return next((c for c in self.source_columns if c in self.columns), None)

    def vector(self, name: str) -> VectorColumn | None:
        return next((v for v in self.vectors if v.name == name), None)

    def vector_model(self, column: VectorColumn) -> str | None:
        """The model that made a column's vectors: its field tag, else the table's metadata."""
        return column.model or self.metadata.get("embedding_model")


def table_names(db: Any) -> list[str]:
    """Every table of a lancedb connection, sorted. ``list_tables`` answers in pages; lancedb's
    older ``table_names()`` (deprecated) returns only its first page, 10 names by default, so
    with more tables it missed some."""
    names: list[str] = []
    token = None
    while True:
        page = db.list_tables(page_token=token)
        names.extend(page.tables)
        token = page.page_token
        if not token:
            return sorted(names)


def is_fts(index: Any) -> bool:
    """Whether a ``list_indices()`` entry is a full-text index (LanceDB has named the type both ways)."""
    return str(index.index_type).upper() in FTS_INDEX_TYPES


def fts_indices(table: Any) -> list[Any]:
    """The full-text (inverted) index configs of an open LanceDB table."""
    return [index for index in table.list_indices() if is_fts(index)]


def fts_columns(table: Any) -> frozenset[str]:
    """The columns that have a full-text index."""
    return frozenset(column for index in fts_indices(table) for column in index.columns)


def fts_details(indices: list[Any]) -> dict[str, Mapping[str, Any]]:
    """Column -> its full-text index's recorded options (tokenizer, language, stemming...), from
    ``fts_indices``."""
    found: dict[str, Mapping[str, Any]] = {}
    for index in indices:
        details = getattr(index, "index_details", None) or {}
        for column in index.columns:
            found.setdefault(column, details)
    return found


def table_facts(name: str, table: Any) -> TableFacts:
    """Facts of an open LanceDB table (one schema read, one index listing, one row count)."""
    import pyarrow as pa

    schema = table.schema
    indices = fts_indices(table)
    vectors = []
    payload = []
    for f in schema:
        kind = f.type
        if pa.types.is_fixed_size_list(kind) and pa.types.is_floating(kind.value_type):
            model = (f.metadata or {}).get(MODEL_TAG.encode())
            vectors.append(VectorColumn(f.name, int(kind.list_size), model.decode() if model else None))
        elif not (pa.types.is_list(kind) and pa.types.is_floating(kind.value_type)):
            payload.append(f.name)
    return TableFacts(
        name=name,
        columns=tuple(schema.names),
        types={f.name: f.type for f in schema},
        vectors=tuple(vectors),
        payload=tuple(payload),
        text_columns=frozenset(
            f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
        ),
        fts_columns=frozenset(column for index in indices for column in index.columns),
        rows=int(table.count_rows()),
        metadata=_metadata(schema.metadata),
        descriptions=_descriptions(schema),
        analyses={column: analysis_of(details) for column, details in fts_details(indices).items()},
        languages=_languages(schema),
    )


def _languages(schema: Any) -> tuple[str, ...]:
    """The languages `lancelot index` detected and kept with its options (field metadata of ``path``)."""
    if PATH not in schema.names:
        return ()
    found = _metadata(schema.field(PATH).metadata, OPTIONS_TAG).get("languages")
    return tuple(str(code) for code in found) if isinstance(found, list) else ()


def _descriptions(schema: Any) -> dict[str, str]:
    """The folder descriptions `lancelot index` kept with its options (field metadata of ``path``)."""
    if PATH not in schema.names:
        return {}
    found = _metadata(schema.field(PATH).metadata, OPTIONS_TAG).get("descriptions")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _metadata(raw_metadata: Mapping[bytes, bytes] | None, key: str = META_KEY) -> dict[str, Any]:
    raw = (raw_metadata or {}).get(key.encode())
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
