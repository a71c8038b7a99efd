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
    Features,
    Status,
    TableStatus,
    VectorStatus,
    Version,
)
from lancelot_cli.settings import Settings
from lancelot_cli.storage.damage import plain
from lancelot_cli.storage.read.database import ReadOnlyDatabase, ReadOnlyTable, display_uri, store_kind


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
    return Status(
        connection=Connection(path=path, ok=error is None, store=store, consistency_seconds=consistency, error=error),
        tables=tuple(tables),
        embeddings=Embeddings(
            available=_available(s.embedding_model, key, tables),
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


def _available(model: str, key: FoundKey | None, tables: list[TableStatus]) -> bool:
    """Whether queries can be embedded here, as far as status knows without loading a model or
    asking a server: an API ``model`` (EMBEDDING_MODEL) with a key configured (not tried: a search
    says whether it works), or a local model in use (EMBEDDING_MODEL or a table's) whose weights are
    on this machine. The extra alone is not enough: a table made by a model that is not here is
    searched by text, or after a download (issue 45), as its search line says."""
    local = [m for m in (model, *(t.embedding_model for t in tables)) if local_embed.is_local(m)]
    configured = key is not None and not local_embed.is_local(model)
    return configured or (local_embed.available() and any(_here(m) for m in local))


def _here(model: str) -> bool:
    """Whether a local model's weights are on this machine (a folder with model.onnx, or fastembed's
    cache holding it): a look at the disk, no import of fastembed, no network."""
    try:
        return local_embed.maybe_here(model)
    except (LancelotError, OSError, RuntimeError):  # no name; a folder path that cannot be resolved
        return False


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
        mcp_protocol_versions=tuple(supported),
        features=Features(transports=tuple(transports)),
    )
