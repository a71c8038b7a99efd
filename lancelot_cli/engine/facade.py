"""``Engine``: the read-only operations every MCP tool and CLI command calls, returning models.

It checks arguments, opens the database on first use (never creating or writing anything) and
hands each job to its module: ``search``, ``documents``, ``packing``, ``prompts``, ``status``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lancelot_cli.credentials import FoundKey, find_openai_key
from lancelot_cli.engine import agents, choices, documents, listing
from lancelot_cli.engine import search as searching
from lancelot_cli.engine import status as statuses
from lancelot_cli.engine.packing import Chunk, pack
from lancelot_cli.engine.plan import Embedder, Embedding, warm
from lancelot_cli.engine.search import SearchRequest
from lancelot_cli.errors import ConfigError, InvalidArgumentError
from lancelot_cli.limits import MAX_BUDGET, MAX_LIMIT, MIN_BUDGET
from lancelot_cli.mdtext import plain_headings
from lancelot_cli.models import (
    AgentDocument,
    ContextBlock,
    ContextMode,
    Document,
    DocumentList,
    Hit,
    Overview,
    Ranking,
    SearchKind,
    SearchResult,
    SearchType,
    Status,
    Version,
    cited,
    echo,
)
from lancelot_cli.settings import Settings
from lancelot_cli.storage.read.database import ReadOnlyDatabase, ReadOnlyTable
from lancelot_cli.storage.read.filters import build_filter
from lancelot_cli.storage.schema import HEADING, LINE_START

__all__ = ["Embedder", "Engine"]


def _chunk(hit: Hit) -> Chunk:
    """A hit as a section of a context block: under its heading path, with its line and id."""
    heading, line = hit.metadata.get(HEADING), hit.metadata.get(LINE_START)
    return Chunk(
        heading if isinstance(heading, str) and heading.strip() else hit.title,
        cited(hit.source, hit.metadata),
        plain_headings(hit.text),
        hit.id,
        line if isinstance(line, int) and not isinstance(line, bool) else None,
    )


class Engine:
    """Read-only operations over the database named by ``settings.database``.

    Args:
        settings: resolved settings.
        find_key: returns the OpenAI key and its source, or None (env, keychain, key file).
        make_embedder: builds the function that embeds texts, given the key; the default uses the
            ``openai`` client with ``OPENAI_BASE_URL`` and ``EMBEDDING_MODEL``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        find_key: Callable[[], FoundKey | None] | None = None,
        make_embedder: Callable[[FoundKey], Embedder] | None = None,
    ) -> None:
        self.settings = settings
        self._find_key = find_key or (lambda: find_openai_key(settings.config_dir))
        self._embedding = Embedding(self._find_key, make_embedder or self._openai_embedder, settings.embedding_model)
        self._db: ReadOnlyDatabase | None = None

    def _openai_embedder(self, key: FoundKey) -> Embedder:
        from lancelot_cli.providers import OpenAIEmbedder

        return OpenAIEmbedder(key.value, self.settings.embedding_model, self.settings.openai_base_url).embed

    def database(self) -> ReadOnlyDatabase:
        """The database, opened on first use."""
        if self._db is None:
            location = self.settings.database
            if location is None:
                raise ConfigError(
                    "no database configured: set LANCEDB_PATH to your database folder, pass --db, "
                    "or run `lancelot init`"
                )
            self._db = ReadOnlyDatabase(
                location.uri,
                self.settings.consistency_seconds,
                dict(self.settings.storage_options or {}),
                self.settings.index_cache_mb,
                {self.settings.table: self.settings.table_version},  # a pinned table (storage/read/pins.py)
            )
        return self._db

    def _table(self, name: str | None) -> ReadOnlyTable:
        return self.database().table(name or self.settings.table)

    def _limit(self, limit: int | None) -> int:
        value = self.settings.default_limit if limit is None else limit
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {value!r}")
        return value

    def _budget(self, context_budget: int | None) -> int:
        budget = self.settings.context_budget if context_budget is None else context_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or not MIN_BUDGET <= budget <= MAX_BUDGET:
            raise InvalidArgumentError(
                f"the context budget must be a whole number from {MIN_BUDGET} to {MAX_BUDGET:,} characters, "
                f"got {echo(str(budget), 40)}"
            )
        return budget

    def search(
        self,
        query: str | SearchRequest,
        *,
        limit: int | None = None,
        search_type: SearchType = "auto",
        table: str | None = None,
        text_column: str | None = None,
        vector_column: str | None = None,
        path_prefix: str | None = None,
        filters: Mapping[str, Any] | None = None,
        per_document: int | None = None,
        queries: Sequence[str] | None = None,
    ) -> SearchResult:
        """Ranked hits for a ``SearchRequest``, or for ``query`` with the same fields as keywords.

        ``queries``: other phrasings of ``query`` (at most ``phrasings.MAX_PHRASINGS``), each searched
        and all fused into one ranking (engine/phrasings.py); None or none new: ``query`` alone.

        ``path_prefix`` and ``filters`` (column -> value, or a list of values for any of them)
        narrow the rows *before* ranking, so a filtered search still returns its best hits.
        ``per_document``: at most this many chunks of one document among the hits (None: the
        default, ``ranking.PER_DOCUMENT``; 0: every chunk).
        """
        request = (
            query
            if isinstance(query, SearchRequest)
            else SearchRequest(
                query,
                limit=limit,
                search_type=search_type,
                table=table,
                text_column=text_column,
                vector_column=vector_column,
                path_prefix=path_prefix,
                filters=filters,
                per_document=per_document,
                queries=tuple(queries) if isinstance(queries, (list, tuple)) else queries,  # type: ignore[arg-type]
            )
        )
        limit = self._limit(request.limit)
        searching.check_search_type(request.search_type)
        tbl = self._table(request.table)
        with tbl.reading():
            return searching.run(
                tbl,
                request,
                request.text_column or self.settings.text_column,
                request.vector_column or self.settings.vector_column,
                limit,
                self._embedding,
            )

    def query(
        self,
        question: str,
        *,
        context_budget: int | None = None,
        warm_start: bool = False,
        table: str | None = None,
        limit: int | None = None,
        path_prefix: str | None = None,
        filters: Mapping[str, Any] | None = None,
        queries: Sequence[str] | None = None,
        per_document: int | None = None,
    ) -> ContextBlock:
        """One Markdown context block for ``question`` (or an overview with ``warm_start``), at most
        ``context_budget`` characters: the best chunks' whole text in rank order. ``queries`` and
        ``per_document`` (at most this many chunks of one document) as in ``search``."""
        budget = self._budget(context_budget)
        limit = self._limit(limit)
        mode: ContextMode
        search_type: SearchKind | Overview
        ranking: Ranking | Overview
        if warm_start:
            tbl = self._table(table)
            with tbl.reading():
                chunks = documents.overview(
                    tbl, self.settings.text_column, limit, build_filter(tbl.facts, path_prefix, filters)
                )
            table_name, mode, search_type, ranking, note = tbl.name, "overview", "overview", "overview", None
        else:
            found = self.search(
                SearchRequest(
                    question,
                    limit=limit,
                    table=table,
                    path_prefix=path_prefix,
                    filters=filters,
                    queries=tuple(queries) if isinstance(queries, (list, tuple)) else queries,  # type: ignore[arg-type]
                    per_document=per_document,
                )
            )
            chunks = [_chunk(hit) for hit in found.hits]
            table_name, mode, search_type, ranking, note = (
                found.table,
                "question",
                found.search_type,
                found.ranking,
                found.note,
            )
        lines = [
            f"# Context for: {echo(question)}" if mode == "question" else "# Overview of the collection",
            f"mode: {mode} · search: {search_type} ({ranking}) · table: {table_name}",
        ]
        if note:
            lines.append(f"note: {note}")
        markdown, included, left_out = pack("\n".join(lines) + "\n", chunks, budget)
        return ContextBlock(
            question=question,
            table=table_name,
            mode=mode,
            search_type=search_type,
            ranking=ranking,
            budget=budget,
            included=included,
            left_out=left_out,
            context=markdown,
            note=note,
        )

    def document(
        self,
        source: str | None = None,
        *,
        chunk_id: str | None = None,
        before: int = 2,
        after: int = 2,
        context_budget: int | None = None,
        table: str | None = None,
        page: int | None = None,
    ) -> Document:
        """A whole indexed document (its chunks in order, joined), or a window of ``before`` and
        ``after`` chunks around ``chunk_id``, or with ``page`` the chunks of that page of a PDF (from
        1), cut to the budget. Reads the table only, never files."""
        if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1 or not source):
            raise InvalidArgumentError(f"page goes with a source and is a whole number from 1, got {page!r}")
        if not source and not chunk_id:
            raise InvalidArgumentError("give a source (a document's path, as search hits show it) or a hit id")
        if source and chunk_id:  # silently preferring one would read a document the caller did not mean
            raise InvalidArgumentError(
                f"give source (a whole document) or id (the chunks around a hit), not both; "
                f"got source {echo(source, 80)!r} and id {echo(chunk_id, 80)!r}"
            )
        for name, value in (("before", before), ("after", after)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
                raise InvalidArgumentError(f"{name} must be a whole number from 0 to {MAX_LIMIT}, got {value!r}")
        budget = self._budget(context_budget)
        tbl = self._table(table)
        with tbl.reading():
            return documents.document(tbl, self.settings.text_column, source, chunk_id, before, after, budget, page)

    def documents(self, path_prefix: str | None = None, table: str | None = None) -> DocumentList:
        """The table's documents (under ``path_prefix``), by path: chunks, file size, title."""
        tbl = self._table(table)
        with tbl.reading():
            return listing.documents(tbl, path_prefix or None)

    def complete(
        self, argument: str, typed: str, table: str | None = None, column: str | None = None
    ) -> tuple[list[str], int]:
        """Values an argument may take that start with ``typed`` (at most 100) and how many there are:
        ``table``, ``pathPrefix`` or ``source`` (folders, then documents), ``column`` (what a filter
        can test) and ``value`` (what ``column`` holds). Another argument has none."""
        if argument == "table":
            return choices.tables(self.database(), typed)
        if argument not in ("pathPrefix", "source", "column", "value"):
            return [], 0
        tbl = self._table(table)
        with tbl.reading():
            if argument in ("pathPrefix", "source"):
                return choices.path_prefixes(tbl, typed)
            if argument == "column":
                return choices.filter_columns(tbl, self.settings.text_column, typed)
            return choices.column_values(tbl, column, typed) if column else ([], 0)

    def agent_documents(self, table: str | None = None) -> list[AgentDocument]:
        """Documents to offer as MCP prompts (``kind: agent``, or under ``agents/``)."""
        return agents.agent_documents(self._table(table))

    def agent_text(self, source: str, table: str | None = None) -> str:
        """The whole text of one document, its chunks joined in order."""
        return agents.agent_text(self._table(table), self.settings.text_column, source)

    def status(self, verbose: bool = False) -> Status:
        """Connection, tables (rows, vectors, full-text index), and whether embeddings are available."""
        return statuses.status(self.settings, self.database, self._find_key(), verbose, self._embedding)

    def warm_embeddings(self) -> str | None:
        """Start loading the local model the default table's vectors are searched with (in a background
        thread, so no call waits for it unless it needs it); its identity, or None when there is none."""
        return warm(self._table(None), self.settings.vector_column, self._embedding)

    def version(
        self,
        protocol_version: str | None = None,
        transports: tuple[str, ...] = ("stdio", "http"),
        supported: tuple[str, ...] = (),
    ) -> Version:
        """Lancelot's version, the MCP protocol version (and every revision ``supported``), and the
        features this build has."""
        return statuses.version(protocol_version, transports, supported)
