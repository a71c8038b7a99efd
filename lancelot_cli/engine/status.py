"""What can be searched (the database, each table's rows, indexes and vectors, whether a key is
set) and what this build is (version, protocol, features)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from lancelot_cli import local_embed, redact
from lancelot_cli._version import __version__
from lancelot_cli.credentials import FoundKey
from lancelot_cli.engine.plan import Embedding
from lancelot_cli.engine.readiness import search_line
from lancelot_cli.errors import LancelotError
from lancelot_cli.models import (
    Connection,
    Defaults,
    Embeddings,
    Status,
    TableStatus,
    VectorStatus,
    Version,
)
from lancelot_cli.settings import Settings
from lancelot_cli.storage.damage import plain
from lancelot_cli.storage.reader import ReadOnlyDatabase, ReadOnlyTable, display_uri, store_kind


def status(
    settings: Settings,
    open_database: Callable[[], ReadOnlyDatabase],
    key: FoundKey | None,
    verbose: bool = False,
    embedding: Embedding | None = None,
) -> Status:
    """Connection, tables (rows, vectors, full-text index, what a search of each does: with
    ``embedding``, the engine's), and whether embeddings are available."""
    s = settings
    path = display_uri(s.db_uri) if s.db_uri else None
    store = store_kind(s.db_uri) if s.db_uri else None
    consistency = s.consistency_seconds if s.db_uri else None
    tables: list[TableStatus] = []
    error = None
    try:
        db = open_database()
        for name in db.table_names():
            try:
                tbl = db.table(name)
                entry = table_status(tbl, verbose)
                if embedding is not None:  # the key already found, not looked up again per table
                    asked = Embedding(lambda: key, embedding.make_embedder, embedding.model)
                    entry = replace(entry, search=search_line(tbl, s.text_column, s.vector_column, asked))
                tables.append(entry)
            except LancelotError as exc:  # a damaged table: what to do is in the message
                tables.append(TableStatus(name=name, error=str(exc)))
            except Exception as exc:  # noqa: BLE001 - one unreadable table must not hide the others
                tables.append(TableStatus(name=name, error=plain(str(exc))))
    except LancelotError as exc:
        error = str(exc)
    # Local vectors (a table's, or a local EMBEDDING_MODEL) are searched with no key when the extra is there.
    local = local_embed.is_local(s.embedding_model) or any(local_embed.is_local(t.embedding_model) for t in tables)
    return Status(
        connection=Connection(path=path, ok=error is None, store=store, consistency_seconds=consistency, error=error),
        tables=tuple(tables),
        embeddings=Embeddings(
            available=key is not None or (local and local_embed.available()),
            key_source=key.source if key else None,
            model=s.embedding_model,
            dimensions=s.embedding_dimensions,
            base_url=redact.url(s.openai_base_url),
        ),
        defaults=Defaults(
            table=s.table,
            text_column=s.text_column,
            vector_column=s.vector_column,
            limit=s.default_limit,
            context_budget=s.context_budget,
        ),
    )


def table_status(tbl: ReadOnlyTable, verbose: bool) -> TableStatus:
    facts = tbl.facts
    tbl.check()  # the manifest alone says "ok" for a table whose files are gone
    fts = tuple(sorted(facts.fts_columns))
    vectors = tuple(
        VectorStatus(v.name, v.dimension, facts.vector_model(v), tbl.missing_vectors(v.name)) for v in facts.vectors
    )
    return TableStatus(
        name=tbl.name,
        rows=tbl.count(),
        version=tbl.version,
        updated_at=tbl.updated_at(),
        fts_columns=fts,
        vectors=vectors,
        embedding_model=next((v.model for v in vectors if v.model), None),
        indexed_at=facts.metadata.get("indexed_at") or None,
        fts_coverage=tbl.fts_coverage() if fts else None,
        columns=tuple(facts.columns) if verbose else None,
        languages=tuple(facts.languages),
    )


def version(
    protocol_version: str | None, transports: tuple[str, ...] = ("stdio", "http"), supported: tuple[str, ...] = ()
) -> Version:
    """Lancelot's version, the MCP protocol version (and every revision ``supported``), and the
    features this build has."""
    return Version(
        name="lancelot",
        version=__version__,
        mcp_protocol_version=protocol_version,
        transports=tuple(transports),
        mcp_protocol_versions=tuple(supported),
    )
