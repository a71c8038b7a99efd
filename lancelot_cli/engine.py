"""The read-only engine behind every MCP tool and every CLI command: search, query, status, version.

It returns plain data (dicts of JSON-safe values) that the MCP server and the CLI render. It opens
the database on first use and never writes: it only reaches ``storage.reader``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lancelot_cli._version import __version__
from lancelot_cli.context import Chunk, pack
from lancelot_cli.credentials import FoundKey, find_openai_key
from lancelot_cli.errors import (
    ColumnNotFoundError,
    ConfigError,
    DocumentNotFoundError,
    EmbeddingError,
    InvalidArgumentError,
    LancelotError,
    VectorMismatchError,
)
from lancelot_cli.settings import Settings
from lancelot_cli.storage.reader import (
    ReadOnlyDatabase, ReadOnlyTable, RowFilter, VectorColumn, display_uri, store_kind,
)
from lancelot_cli.storage.schema import CHUNK, FILE_STATE, HASH, ID, SOURCE_COLUMNS, TITLE
from lancelot_cli.textmatch import identifier_tokens, matched_share, only_stop_words, query_words, snippet

log = logging.getLogger(__name__)

SEARCH_TYPES = ("auto", "text", "vector", "hybrid")
MAX_LIMIT = 200
MIN_BUDGET = 200
# Tuned on the BEIR SciFact train split (tests/benchmarks/quality.py): K=10 and 100 candidates per
# ranking beat the usual K=60 and 50 (train nDCG@10 0.728 against 0.717).
RRF_K = 10
# Bookkeeping columns of `lancelot index` and LanceDB's score columns: never sent as metadata.
HIDDEN_COLUMNS = frozenset({"_score", "_distance", "_relevance_score", "_rowid", HASH, *FILE_STATE})
HYBRID_DEPTH = 100  # candidates taken from each ranking before fusing
IDENTIFIER_DEPTH = 50  # BM25 candidates re-ordered when a query looks up identifiers
OVERVIEW_NAMES = re.compile(r"^(readme|index|overview|intro|introduction|getting[-_ ]started|summary|about)$", re.I)

Embedder = Callable[[list[str]], list[list[float]]]


class Engine:
    """Read-only operations over the database named by ``settings.db_path``.

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
        self._make_embedder = make_embedder or self._openai_embedder
        self._db: ReadOnlyDatabase | None = None

    # -- plumbing ---------------------------------------------------------------------------

    def _openai_embedder(self, key: FoundKey) -> Embedder:
        from lancelot_cli.providers import OpenAIEmbedder

        return OpenAIEmbedder(key.value, self.settings.embedding_model, self.settings.openai_base_url).embed

    def database(self) -> ReadOnlyDatabase:
        if self._db is None:
            if not self.settings.db_path:
                raise ConfigError(
                    "no database configured: set LANCEDB_PATH to your database folder, pass --db, "
                    "or run `lancelot init`"
                )
            self._db = ReadOnlyDatabase(self.settings.db_path, self.settings.consistency_seconds,
                                        dict(self.settings.storage_options or {}))
        return self._db

    def _table(self, name: str | None) -> ReadOnlyTable:
        return self.database().table(name or self.settings.table)

    def _limit(self, limit: int | None) -> int:
        value = self.settings.default_limit if limit is None else limit
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
            raise InvalidArgumentError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {value!r}")
        return value

    # -- search -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        search_type: str = "auto",
        table: str | None = None,
        text_column: str | None = None,
        vector_column: str | None = None,
        path_prefix: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Ranked hits for ``query``. See SPEC §3 (lancedb_search) for the reply's fields.

        ``path_prefix`` and ``filters`` (column -> value, or a list of values for any of them)
        narrow the rows *before* ranking, so a filtered search still returns its best hits.
        """
        reply = self._search(query, limit, search_type, table, text_column, vector_column, path_prefix, filters)
        for hit in reply["hits"]:
            del hit["_text"]
        return reply

    def _search(
        self, query: str, limit: int | None, search_type: str, table: str | None, text_column: str | None,
        vector_column: str | None, path_prefix: str | None = None, filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``search`` with each hit's whole text kept under ``_text`` (for ``query``)."""
        limit = self._limit(limit)
        if search_type not in SEARCH_TYPES:
            raise InvalidArgumentError(f"searchType must be one of {', '.join(SEARCH_TYPES)}, got {search_type!r}")
        tbl = self._table(table)
        text_col = text_column or self.settings.text_column
        tbl.require_column(text_col, "text")
        ask = _Ask(tbl, query, query_words(query), text_col, limit, _payload_columns(tbl),
                   row_filter(tbl, path_prefix, filters))
        reply: dict[str, Any] = {"query": query, "table": tbl.name}
        plan = self._plan(tbl, search_type, text_col, vector_column or self.settings.vector_column)
        hits: list[dict[str, Any]] = []
        note = plan.note
        if plan.kind in ("vector", "hybrid"):
            try:
                hits, ranking = self._vector_hits(ask, plan)
            except (EmbeddingError, VectorMismatchError) as exc:
                if isinstance(exc, VectorMismatchError) and search_type != "auto":
                    raise
                note = f"{plan.kind} search failed, used text search instead: {exc}"
                plan = _Plan("text", None)
            else:
                if not hits and search_type == "auto":
                    note = f"{plan.kind} search found nothing, used text search instead"
                    plan = _Plan("text", None)
                else:
                    reply["searchType"] = plan.kind
                    reply["ranking"] = ranking
        if plan.kind == "text":
            hits, ranking, text_note = self._text_hits(ask)
            reply["searchType"] = "text"
            reply["ranking"] = ranking
            note = "; ".join(part for part in (note, text_note) if part) or None
        if note:
            reply["note"] = note
        reply["count"] = len(hits)
        reply["hits"] = hits
        return reply

    def _plan(self, tbl: ReadOnlyTable, asked: str, text_col: str, vector_col: str) -> _Plan:
        """Which search to run, and the note that explains a change from what was asked."""
        if asked == "text":
            return _Plan("text", None)
        vectors = {col.name: col for col in tbl.vector_columns()}
        column = vectors.get(vector_col)
        if column is None:
            if asked == "auto":
                return _Plan("text", None)
            why = (f"column {vector_col!r} does not hold vectors" if vector_col in tbl.columns
                   else f"the table has no vector column {vector_col!r}")
            return _Plan("text", f"{asked} search needs vectors but {why}; used text search")
        key = self._find_key()
        if key is None:
            if asked == "auto":
                return _Plan("text", None)
            return _Plan("text", (
                f"{asked} search needs an OpenAI API key and none is set; used text search "
                f"(set OPENAI_API_KEY or run `lancelot init`)"
            ))
        stored_model = column.model or tbl.metadata().get("embedding_model")
        if stored_model and stored_model != self.settings.embedding_model:
            return _Plan("text", (
                f"the table's vectors were made with {stored_model!r} but EMBEDDING_MODEL is "
                f"{self.settings.embedding_model!r}; used text search (set EMBEDDING_MODEL={stored_model} "
                f"or re-index with `lancelot index --embed`)"
            ))
        has_fts = text_col in tbl.fts_columns()
        if asked == "hybrid" and not has_fts:
            return _Plan("vector", f"hybrid search needs a full-text index on {text_col!r}; used vector search",
                         column, key)
        kind = "hybrid" if asked == "hybrid" or (asked == "auto" and has_fts) else "vector"
        return _Plan(kind, None, column, key)

    def _vector_hits(self, ask: _Ask, plan: _Plan) -> tuple[list[dict[str, Any]], str]:
        assert plan.column is not None and plan.key is not None
        if not ask.query.strip():
            return [], "distance" if plan.kind == "vector" else "rrf"
        vector = self._make_embedder(plan.key)([ask.query])[0]
        if len(vector) != plan.column.dimension:
            raise VectorMismatchError(
                f"the query vector has {len(vector)} dimensions but column {plan.column.name!r} holds "
                f"{plan.column.dimension}; set EMBEDDING_MODEL to the model the table was embedded with"
            )
        if plan.kind == "hybrid":
            return self._fused(ask, vector, plan.column.name), "rrf"
        rows = ask.tbl.nearest(vector, plan.column.name, ask.limit, ask.columns, ask.row_filter)
        return [self._hit(r, ask, r.get("_distance", 0.0)) for r in rows], "distance"

    def _fused(self, ask: _Ask, vector: list[float], vector_col: str) -> list[dict[str, Any]]:
        """Reciprocal rank fusion of the BM25 and the vector ranking: score = sum of 1/(60 + rank).

        Each hit says where it stood in each ranking (``ranks``), so the fused score can be explained.
        """
        depth = max(ask.limit, HYBRID_DEPTH)
        key = (lambda row: row[ID]) if ID in ask.columns else (lambda row: row.get(ask.text_col))
        lists = {
            "bm25": self._bm25(ask, depth) if ask.words and not only_stop_words(ask.words) else [],
            "vector": ask.tbl.nearest(vector, vector_col, depth, ask.columns, ask.row_filter),
        }
        fused: dict[Any, dict[str, Any]] = {}
        for name, rows in lists.items():
            for rank, row in enumerate(rows, start=1):
                entry = fused.setdefault(key(row), {"row": row, "score": 0.0, "ranks": {}})
                entry["score"] += 1.0 / (RRF_K + rank)
                entry["ranks"][name] = rank
        best = sorted(fused.values(), key=lambda e: -e["score"])[:ask.limit]
        return [{**self._hit(e["row"], ask, e["score"]), "ranks": e["ranks"]} for e in best]

    def _bm25(self, ask: _Ask, limit: int) -> list[dict[str, Any]]:
        """BM25 hits. The query is sent as its words, each once (a query with a double quote, a
        phrase, goes as typed). A lookup of identifiers (MAX_SAVED, DEC-0054, createClient: at least
        half of the words) puts the hits that contain them literally first, in BM25 order: the
        tokenizer splits identifiers into parts, and a text that repeats the parts would win."""
        asked = ask.query if '"' in ask.query else " ".join(ask.words)
        tokens = identifier_tokens(ask.query)
        if not tokens or len(tokens) * 2 < len(ask.words):
            return ask.tbl.fts(asked, ask.text_col, limit, ask.columns, ask.row_filter)
        rows = ask.tbl.fts(asked, ask.text_col, max(limit, IDENTIFIER_DEPTH), ask.columns, ask.row_filter)

        def literal(row: dict[str, Any]) -> int:
            text = str(row.get(ask.text_col) or "").casefold()
            return sum(1 for token in tokens if token in text)

        return sorted(rows, key=lambda row: -literal(row))[:limit]  # stable: BM25 order within a group

    def _text_hits(self, ask: _Ask) -> tuple[list[dict[str, Any]], str, str | None]:
        if ask.text_col in ask.tbl.fts_columns():
            if not ask.words:
                return [], "bm25", "the query has no words to search for"
            if only_stop_words(ask.words):
                return [], "bm25", "the query has only common words (the, of, and...); add a more specific word"
            rows = self._bm25(ask, ask.limit)
            return [self._hit(r, ask, r.get("_score", 0.0)) for r in rows], "bm25", None
        note = (f"the table has no full-text index on {ask.text_col!r}, so hits are ranked by the share of "
                f"query words they contain")
        if not ask.words:
            return [], "substring", "the query has no words to search for"
        import pyarrow.compute as pc

        data = ask.tbl.scan(ask.columns, ask.row_filter)
        texts = pc.fill_null(data.column(ask.text_col).cast("string"), "")
        counts = None
        for word in ask.words:
            found = pc.cast(pc.match_substring(texts, word, ignore_case=True), "int32")
            counts = found if counts is None else pc.add(counts, found)
        candidates = [i for i, count in enumerate(counts.to_pylist()) if count] if counts is not None else []
        rows = data.take(candidates).to_pylist() if candidates else []
        # Score in Python (the original's share of words); Arrow only narrowed the candidates.
        scored = [(matched_share(str(r.get(ask.text_col) or ""), ask.words), i, r) for i, r in enumerate(rows)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:ask.limit]
        return [self._hit(r, ask, share) for share, _, r in scored], "substring", note

    def _hit(self, row: dict[str, Any], ask: _Ask, score: float) -> dict[str, Any]:
        text = str(row.get(ask.text_col) or "")
        source = next((str(row[c]) for c in SOURCE_COLUMNS if row.get(c)), "")
        title = row.get(TITLE) or (os.path.basename(source.rstrip("/")) if source else "") or "(untitled)"
        hidden = {ID, TITLE, ask.text_col, *HIDDEN_COLUMNS}
        return {
            "id": str(row[ID]) if row.get(ID) is not None else f"{source}#?",
            "score": _number(score),
            "matched": round(matched_share(text, ask.words), 3),
            "title": str(title),
            "source": source,
            "snippet": snippet(text, ask.words),
            # Empty columns are left out: they cost an agent tokens and say nothing.
            "metadata": {k: _json_safe(v) for k, v in row.items() if k not in hidden and v is not None},
            "_text": text,
        }

    # -- query ------------------------------------------------------------------------------

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
    ) -> dict[str, Any]:
        """One Markdown context block for ``question`` (or an overview with ``warm_start``).

        Returns ``{"question", "table", "mode", "searchType", "ranking", "note"?, "budget",
        "included", "leftOut", "context"}``; ``context`` is the Markdown, at most ``budget`` characters.
        """
        budget = self._budget(context_budget)
        limit = self._limit(limit)
        if warm_start:
            tbl = self._table(table)
            chunks = self._overview(tbl, limit, row_filter(tbl, path_prefix, filters))
            info: dict[str, Any] = {"table": tbl.name, "mode": "overview", "searchType": "overview",
                                    "ranking": "overview"}
        else:
            found = self._search(question, limit, "auto", table, None, None, path_prefix, filters)
            chunks = [Chunk(h["title"], h["source"], h["_text"]) for h in found.pop("hits")]
            info = {"table": found["table"], "mode": "question", "searchType": found["searchType"],
                    "ranking": found["ranking"]}
            if "note" in found:
                info["note"] = found["note"]
        header = _context_header(question, info)
        markdown, included, left_out = pack(header, chunks, budget)
        return {"question": question, **info, "budget": budget, "included": included, "leftOut": left_out,
                "context": markdown}

    def _budget(self, context_budget: int | None) -> int:
        budget = self.settings.context_budget if context_budget is None else context_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < MIN_BUDGET:
            raise InvalidArgumentError(f"contextBudget must be a whole number of at least {MIN_BUDGET}, got {budget!r}")
        return budget

    def _overview(self, tbl: ReadOnlyTable, limit: int, narrow: RowFilter | None = None) -> list[Chunk]:
        """README/index/overview documents first, then the opening chunk of each document, shallow
        paths first. Picks from a scan without the text column, then reads the texts it picked."""
        text_col = self.settings.text_column
        tbl.require_column(text_col, "text")
        wanted = [c for c in (ID, *SOURCE_COLUMNS, TITLE, CHUNK) if c in tbl.columns]
        if ID not in wanted:  # no way to fetch the picked rows again: read the text in the same scan
            wanted.append(text_col)
        rows = tbl.scan(wanted, narrow).to_pylist()
        firsts: dict[str, int] = {}
        ranked = []
        for position, row in enumerate(rows):
            source = next((str(row[c]) for c in SOURCE_COLUMNS if row.get(c)), "")
            chunk_no = row.get(CHUNK)
            first = firsts.setdefault(source, position) == position if chunk_no is None else chunk_no == 0
            stem = os.path.splitext(os.path.basename(source))[0]
            if OVERVIEW_NAMES.match(stem):
                priority = 0
            elif first:
                priority = 1
            else:
                continue
            ranked.append(((priority, source.count("/"), source, chunk_no or 0), row, source))
        ranked.sort(key=lambda item: item[0])
        picked = ranked[:limit]
        if ID in wanted and picked:
            ids = tuple(row[ID] for _, row, _ in picked)
            texts = {r[ID]: r[text_col] for r in tbl.scan([ID, text_col], RowFilter(equals=((ID, ids),))).to_pylist()}
            for _, row, _ in picked:
                row[text_col] = texts.get(row[ID])
        return [
            Chunk(str(row.get(TITLE) or os.path.basename(source) or "(untitled)"), source, str(row.get(text_col) or ""))
            for _, row, source in picked
        ]

    # -- document ---------------------------------------------------------------------------

    def document(
        self,
        source: str | None = None,
        *,
        chunk_id: str | None = None,
        before: int = 2,
        after: int = 2,
        context_budget: int | None = None,
        table: str | None = None,
    ) -> dict[str, Any]:
        """A whole indexed document (its chunks in order, joined), or a window of ``before`` and
        ``after`` chunks around ``chunk_id``, cut to the budget. Reads the table only, never files.

        Returns ``{"source", "title", "table", "chunks", "first", "last", "included", "cut",
        "budget", "context"}`` (``first``/``last``: chunk positions shown, 0-based, of ``chunks``).
        """
        if not source and not chunk_id:
            raise InvalidArgumentError("give a source (a document's path, as search hits show it) or a hit id")
        for name, value in (("before", before), ("after", after)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
                raise InvalidArgumentError(f"{name} must be a whole number from 0 to {MAX_LIMIT}, got {value!r}")
        budget = self._budget(context_budget)
        tbl = self._table(table)
        text_col = self.settings.text_column
        tbl.require_column(text_col, "text")
        source_col = next((c for c in SOURCE_COLUMNS if c in tbl.columns), None)
        if source_col is None:
            raise ColumnNotFoundError(f"table {tbl.name!r} has no source column ({', '.join(SOURCE_COLUMNS)})")
        columns = [c for c in (ID, source_col, TITLE, CHUNK, text_col) if c in tbl.columns]
        if chunk_id:
            if ID not in tbl.columns:
                raise ColumnNotFoundError(f"table {tbl.name!r} has no id column; ask by source instead")
            hit = tbl.scan(columns, RowFilter(equals=((ID, (chunk_id,)),))).to_pylist()
            if not hit:
                raise DocumentNotFoundError(f"no chunk with id {chunk_id!r} in table {tbl.name!r}; "
                                            f"use lancedb_search to find ids")
            source = str(hit[0][source_col])
        rows = _document_rows(tbl, source_col, columns, str(source))
        first, last = 0, len(rows) - 1
        if chunk_id:
            at = next(i for i, row in enumerate(rows) if row.get(ID) == chunk_id)
            first, last = max(0, at - before), min(len(rows) - 1, at + after)
        title = str(rows[0].get(TITLE) or os.path.basename(str(source)))
        shown = rows[first:last + 1]
        span = f"chunks {first + 1}–{last + 1} of {len(rows)}" if (first, last) != (0, len(rows) - 1) \
            else f"all {len(rows)} chunk{'s' if len(rows) != 1 else ''}"
        header = f"# {title}\nsource: {source} · {span}\n"
        body, included = _join_within(header, [str(row.get(text_col) or "") for row in shown], budget,
                                      first, str(source))
        return {"source": source, "title": title, "table": tbl.name, "chunks": len(rows), "first": first,
                "last": first + included - 1 if included else None, "included": included, "cut": len(shown) - included,
                "budget": budget, "context": body}

    # -- prompts ----------------------------------------------------------------------------

    def agent_documents(self, table: str | None = None) -> list[dict[str, str]]:
        """Documents to offer as MCP prompts: ``kind: agent`` in their front matter, or under
        ``agents/``. Each ``{"name", "title", "source"}``; names are unique slugs of the file names."""
        tbl = self._table(table)
        source_col = next((c for c in SOURCE_COLUMNS if c in tbl.columns), None)
        if source_col is None:
            return []
        columns = [c for c in (source_col, TITLE) if c in tbl.columns]
        found: dict[str, str] = {}
        filters = [RowFilter(source_col, "agents/")]
        if "kind" in tbl.columns and _is_text(tbl, "kind"):
            filters.append(RowFilter(equals=(("kind", ("agent",)),)))
        for narrow in filters:
            for row in tbl.scan(columns, narrow).to_pylist():
                found.setdefault(str(row[source_col]), str(row.get(TITLE) or ""))
        agents: list[dict[str, str]] = []
        taken: set[str] = set()
        for source in sorted(found):
            base = re.sub(r"[^a-z0-9_-]+", "-", os.path.splitext(os.path.basename(source))[0].lower()).strip("-")
            name, n = base or "agent", 2
            while name in taken:
                name, n = f"{base}-{n}", n + 1
            taken.add(name)
            agents.append({"name": name, "title": found[source] or name, "source": source})
        return agents

    def agent_text(self, source: str, table: str | None = None) -> str:
        """The whole text of one document, its chunks joined in order."""
        tbl = self._table(table)
        text_col = self.settings.text_column
        source_col = next(c for c in SOURCE_COLUMNS if c in tbl.columns)
        rows = _document_rows(tbl, source_col, [c for c in (source_col, CHUNK, text_col) if c in tbl.columns], source)
        return "\n\n".join(str(row.get(text_col) or "").strip() for row in rows)

    # -- status and version -----------------------------------------------------------------

    def status(self, verbose: bool = False) -> dict[str, Any]:
        """Connection, tables (rows, vectors, full-text index), and whether embeddings are available."""
        s = self.settings
        connection: dict[str, Any] = {"path": display_uri(s.db_path) if s.db_path else None, "ok": False}
        if s.db_path:
            connection["store"] = store_kind(s.db_path)
            connection["consistencySeconds"] = s.consistency_seconds
        tables: list[dict[str, Any]] = []
        try:
            db = self.database()
            for name in db.table_names():
                try:
                    tables.append(self._table_status(db.table(name), verbose))
                except Exception as exc:  # one unreadable table must not hide the others
                    tables.append({"name": name, "error": " ".join(str(exc).split())})
            connection["ok"] = True
        except LancelotError as exc:
            connection["error"] = str(exc)
        key = self._find_key()
        return {
            "connection": connection,
            "tables": tables,
            "embeddings": {
                "available": key is not None,
                "keySource": key.source if key else None,
                "model": s.embedding_model,
                "dimensions": s.embedding_dimensions,
                "baseUrl": s.openai_base_url,
            },
            "defaults": {"table": s.table, "textColumn": s.text_column, "vectorColumn": s.vector_column,
                         "limit": s.default_limit, "contextBudget": s.context_budget},
        }

    def _table_status(self, tbl: ReadOnlyTable, verbose: bool) -> dict[str, Any]:
        vectors: list[VectorColumn] = tbl.vector_columns()
        fts = sorted(tbl.fts_columns())
        meta = tbl.metadata()
        entry: dict[str, Any] = {
            "name": tbl.name,
            "rows": tbl.count(),
            "version": tbl.version,
            "updatedAt": tbl.updated_at(),
            "fullTextIndex": bool(fts),
            "fullTextColumns": fts,
            "vectors": [{"column": v.name, "dimension": v.dimension, "model": v.model or meta.get("embedding_model"),
                         "missing": tbl.missing_vectors(v.name)} for v in vectors],
        }
        models = [v["model"] for v in entry["vectors"] if v["model"]]
        if models:
            entry["embeddingModel"] = models[0]
        if meta.get("indexed_at"):
            entry["indexedAt"] = meta["indexed_at"]
        if fts:
            entry["fullTextCoverage"] = tbl.fts_coverage()
        if verbose:
            entry["columns"] = tbl.columns
        return entry

    def version(self, protocol_version: str | None = None, transports: tuple[str, ...] = ("stdio", "http")) -> dict[str, Any]:
        """Lancelot's version, the MCP protocol version, and the features this build has."""
        return {
            "name": "lancelot",
            "version": __version__,
            "mcpProtocolVersion": protocol_version,
            "features": {
                "transports": list(transports),
                "searchTypes": list(SEARCH_TYPES),
                "textRanking": ["bm25", "substring"],
                "vectorSearch": True,
                "hybrid": True,
                "readOnly": True,
            },
        }


@dataclass(frozen=True)
class _Ask:
    """One search request, resolved against its table."""

    tbl: ReadOnlyTable
    query: str
    words: list[str]
    text_col: str
    limit: int
    columns: list[str]
    row_filter: RowFilter | None


def row_filter(tbl: ReadOnlyTable, path_prefix: str | None, filters: Mapping[str, Any] | None) -> RowFilter | None:
    """Validate a path prefix and equality filters against the table; None when there are none."""
    if not path_prefix and not filters:
        return None
    path_col = None
    if path_prefix:
        path_col = next((c for c in SOURCE_COLUMNS if c in tbl.columns), None)
        if path_col is None:
            raise ColumnNotFoundError(f"pathPrefix needs a source column ({', '.join(SOURCE_COLUMNS)}); table "
                                      f"{tbl.name!r} has: {', '.join(tbl.columns)}")
    equals = []
    types = {field.name: field.type for field in tbl.schema}
    for column, value in (filters or {}).items():
        if column not in types:
            raise ColumnNotFoundError(f"cannot filter on {column!r}: table {tbl.name!r} has no such column; "
                                      f"its columns are: {', '.join(tbl.columns)}")
        values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        if not values:
            raise InvalidArgumentError(f"filter {column!r} needs at least one value")
        equals.append((column, tuple(_coerce(column, types[column], v) for v in values)))
    return RowFilter(path_col, path_prefix or None, tuple(equals))


def _coerce(column: str, kind: Any, value: Any) -> Any:
    """A filter value as the column's type (so "3" can match an int column), or a clear error."""
    import pyarrow as pa

    try:
        if pa.types.is_boolean(kind):
            if isinstance(value, str) and value.lower() in {"true", "false"}:
                return value.lower() == "true"
            if isinstance(value, bool):
                return value
            raise ValueError
        if pa.types.is_integer(kind):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if pa.types.is_floating(kind):
            return float(value)
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if isinstance(value, (dict, list)):
                raise ValueError
            return value if isinstance(value, str) else json.dumps(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"filter {column!r}: {value!r} is not a valid {kind} value") from None
    raise InvalidArgumentError(f"cannot filter on {column!r}: only text, number and true/false columns can be "
                               f"filtered, and it holds {kind}")


class _Plan:
    __slots__ = ("kind", "note", "column", "key")

    def __init__(self, kind: str, note: str | None, column: VectorColumn | None = None,
                 key: FoundKey | None = None) -> None:
        self.kind, self.note, self.column, self.key = kind, note, column, key


def _payload_columns(tbl: ReadOnlyTable) -> list[str]:
    """Every column but vectors (never sent to clients)."""
    vectors = {col.name for col in tbl.vector_columns()}
    import pyarrow as pa

    return [f.name for f in tbl.schema if f.name not in vectors and not (
        pa.types.is_list(f.type) and pa.types.is_floating(f.type.value_type))]


def _document_rows(tbl: ReadOnlyTable, source_col: str, columns: list[str], source: str) -> list[dict[str, Any]]:
    rows = tbl.scan(columns, RowFilter(equals=((source_col, (source,)),))).to_pylist()
    if not rows:
        raise DocumentNotFoundError(f"no document {source!r} in table {tbl.name!r}; sources are paths as "
                                    f"search hits show them (use lancedb_search to find one)")
    if CHUNK in columns:
        rows.sort(key=lambda row: row.get(CHUNK) or 0)
    return rows


def _is_text(tbl: ReadOnlyTable, column: str) -> bool:
    import pyarrow as pa

    kind = tbl.schema.field(column).type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _join_within(header: str, texts: list[str], budget: int, first: int, source: str) -> tuple[str, int]:
    """Header plus whole chunk texts in order while they fit; a last line says what was cut."""
    body = header
    included = 0
    for n, text in enumerate(texts):
        rest = len(texts) - n - 1
        tail = _cut_line(rest, first + n + 1, source) if rest else ""
        piece = "\n" + text.strip() + "\n"
        if len(body) + len(piece) + len(tail) > budget:
            break
        body += piece
        included += 1
    if included < len(texts):
        tail = _cut_line(len(texts) - included, first + included, source)
        if len(body) + len(tail) > budget:
            body = body[: max(0, budget - len(tail))]
        body += tail
    return body[:budget], included


def _cut_line(count: int, next_chunk: int, source: str) -> str:
    return (f"\n_{count} more chunk{'s' if count != 1 else ''} cut to fit the budget; ask again with a larger "
            f"contextBudget, or around a later chunk id (next: {source}#{next_chunk})._\n")


def _context_header(question: str, info: dict[str, Any]) -> str:
    lines = [f"# Context for: {question}" if info["mode"] == "question" else "# Overview of the collection"]
    lines.append(f"mode: {info['mode']} · search: {info['searchType']} ({info['ranking']}) · table: {info['table']}")
    if info.get("note"):
        lines.append(f"note: {info['note']}")
    return "\n".join(lines) + "\n"


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return round(number, 6) if math.isfinite(number) else 0.0


def _json_safe(value: Any) -> Any:
    """Arrow/Python values -> JSON-safe values (dates as ISO text, bytes as base64)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return str(value)
