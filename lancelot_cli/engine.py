"""The read-only engine behind every MCP tool and every CLI command: search, query, status, version.

It returns plain data (dicts of JSON-safe values) that the MCP server and the CLI render. It opens
the database on first use and never writes: it only reaches ``storage.reader``.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import math
import os
import re
from collections.abc import Callable
from typing import Any

from lancelot_cli._version import __version__
from lancelot_cli.context import Chunk, pack
from lancelot_cli.credentials import FoundKey, find_openai_key
from lancelot_cli.errors import (
    ConfigError,
    EmbeddingError,
    InvalidArgumentError,
    LancelotError,
    VectorMismatchError,
)
from lancelot_cli.settings import Settings
from lancelot_cli.storage.reader import ReadOnlyDatabase, ReadOnlyTable, VectorColumn
from lancelot_cli.storage.schema import CHUNK, HASH, ID, SOURCE_COLUMNS, TITLE
from lancelot_cli.textmatch import matched_share, query_words, snippet

log = logging.getLogger(__name__)

SEARCH_TYPES = ("auto", "text", "vector", "hybrid")
MAX_LIMIT = 200
MIN_BUDGET = 200
RRF_K = 60  # the usual reciprocal-rank-fusion constant
HYBRID_DEPTH = 50  # candidates taken from each ranking before fusing
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
            self._db = ReadOnlyDatabase(self.settings.db_path)
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
    ) -> dict[str, Any]:
        """Ranked hits for ``query``. See SPEC §3 (lancedb_search) for the reply's fields."""
        reply = self._search(query, limit, search_type, table, text_column, vector_column)
        for hit in reply["hits"]:
            del hit["_text"]
        return reply

    def _search(
        self, query: str, limit: int | None, search_type: str, table: str | None, text_column: str | None,
        vector_column: str | None,
    ) -> dict[str, Any]:
        """``search`` with each hit's whole text kept under ``_text`` (for ``query``)."""
        limit = self._limit(limit)
        if search_type not in SEARCH_TYPES:
            raise InvalidArgumentError(f"searchType must be one of {', '.join(SEARCH_TYPES)}, got {search_type!r}")
        tbl = self._table(table)
        text_col = text_column or self.settings.text_column
        tbl.require_column(text_col, "text")
        reply: dict[str, Any] = {"query": query, "table": tbl.name}
        plan = self._plan(tbl, search_type, text_col, vector_column or self.settings.vector_column)
        hits: list[dict[str, Any]] = []
        note = plan.note
        if plan.kind in ("vector", "hybrid"):
            try:
                hits, ranking = self._vector_hits(tbl, plan, query, text_col, limit)
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
            hits, ranking, text_note = self._text_hits(tbl, query, text_col, limit)
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

    def _vector_hits(
        self, tbl: ReadOnlyTable, plan: _Plan, query: str, text_col: str, limit: int
    ) -> tuple[list[dict[str, Any]], str]:
        assert plan.column is not None and plan.key is not None
        if not query.strip():
            return [], "distance" if plan.kind == "vector" else "rrf"
        vector = self._make_embedder(plan.key)([query])[0]
        if len(vector) != plan.column.dimension:
            raise VectorMismatchError(
                f"the query vector has {len(vector)} dimensions but column {plan.column.name!r} holds "
                f"{plan.column.dimension}; set EMBEDDING_MODEL to the model the table was embedded with"
            )
        columns = _payload_columns(tbl)
        words = query_words(query)
        if plan.kind == "hybrid":
            return self._fused(tbl, query, vector, text_col, plan.column.name, limit, columns, words), "rrf"
        rows = tbl.nearest(vector, plan.column.name, limit, columns)
        return [self._hit(r, text_col, words, r.get("_distance", 0.0)) for r in rows], "distance"

    def _fused(self, tbl: ReadOnlyTable, query: str, vector: list[float], text_col: str, vector_col: str,
               limit: int, columns: list[str], words: list[str]) -> list[dict[str, Any]]:
        """Reciprocal rank fusion of the BM25 and the vector ranking: score = sum of 1/(60 + rank).

        Each hit says where it stood in each ranking (``ranks``), so the fused score can be explained.
        """
        depth = max(limit, HYBRID_DEPTH)
        key = (lambda row: row[ID]) if ID in columns else (lambda row: row.get(text_col))
        lists = {"bm25": tbl.fts(query, text_col, depth, columns) if query_words(query) else [],
                 "vector": tbl.nearest(vector, vector_col, depth, columns)}
        fused: dict[Any, dict[str, Any]] = {}
        for name, rows in lists.items():
            for rank, row in enumerate(rows, start=1):
                entry = fused.setdefault(key(row), {"row": row, "score": 0.0, "ranks": {}})
                entry["score"] += 1.0 / (RRF_K + rank)
                entry["ranks"][name] = rank
        best = sorted(fused.values(), key=lambda e: -e["score"])[:limit]
        return [{**self._hit(e["row"], text_col, words, e["score"]), "ranks": e["ranks"]} for e in best]

    def _text_hits(
        self, tbl: ReadOnlyTable, query: str, text_col: str, limit: int
    ) -> tuple[list[dict[str, Any]], str, str | None]:
        words = query_words(query)
        if text_col in tbl.fts_columns():
            if not words:
                return [], "bm25", "the query has no words to search for"
            rows = tbl.fts(query, text_col, limit, _payload_columns(tbl))
            return [self._hit(r, text_col, words, r.get("_score", 0.0)) for r in rows], "bm25", None
        note = f"the table has no full-text index on {text_col!r}, so hits are ranked by the share of query words they contain"
        if not words:
            return [], "substring", "the query has no words to search for"
        import pyarrow.compute as pc

        data = tbl.scan(_payload_columns(tbl))
        texts = pc.fill_null(data.column(text_col).cast("string"), "")
        counts = None
        for word in words:
            found = pc.cast(pc.match_substring(texts, word, ignore_case=True), "int32")
            counts = found if counts is None else pc.add(counts, found)
        candidates = [i for i, count in enumerate(counts.to_pylist()) if count]  # type: ignore[union-attr]
        rows = data.take(candidates).to_pylist() if candidates else []
        # Score in Python (the original's share of words); Arrow only narrowed the candidates.
        scored = [(matched_share(str(r.get(text_col) or ""), words), i, r) for i, r in enumerate(rows)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:limit]
        return [self._hit(r, text_col, words, share) for share, _, r in scored], "substring", note

    def _hit(self, row: dict[str, Any], text_col: str, words: list[str], score: float) -> dict[str, Any]:
        text = str(row.get(text_col) or "")
        source = next((str(row[c]) for c in SOURCE_COLUMNS if row.get(c)), "")
        title = row.get(TITLE) or (os.path.basename(source.rstrip("/")) if source else "") or "(untitled)"
        hidden = {ID, TITLE, text_col, "_score", "_distance", "_relevance_score", "_rowid", HASH}
        return {
            "id": str(row[ID]) if row.get(ID) is not None else f"{source}#?",
            "score": _number(score),
            "matched": round(matched_share(text, words), 3),
            "title": str(title),
            "source": source,
            "snippet": snippet(text, words),
            "metadata": {k: _json_safe(v) for k, v in row.items() if k not in hidden},
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
    ) -> dict[str, Any]:
        """One Markdown context block for ``question`` (or an overview with ``warm_start``).

        Returns ``{"question", "table", "mode", "searchType", "ranking", "note"?, "budget",
        "included", "leftOut", "context"}``; ``context`` is the Markdown, at most ``budget`` characters.
        """
        budget = self.settings.context_budget if context_budget is None else context_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < MIN_BUDGET:
            raise InvalidArgumentError(f"contextBudget must be a whole number of at least {MIN_BUDGET}, got {budget!r}")
        limit = self._limit(limit)
        if warm_start:
            tbl = self._table(table)
            chunks = self._overview(tbl, limit)
            info: dict[str, Any] = {"table": tbl.name, "mode": "overview", "searchType": "overview",
                                    "ranking": "overview"}
        else:
            found = self._search(question, limit, "auto", table, None, None)
            chunks = [Chunk(h["title"], h["source"], h["_text"]) for h in found.pop("hits")]
            info = {"table": found["table"], "mode": "question", "searchType": found["searchType"],
                    "ranking": found["ranking"]}
            if "note" in found:
                info["note"] = found["note"]
        header = _context_header(question, info)
        markdown, included, left_out = pack(header, chunks, budget)
        return {"question": question, **info, "budget": budget, "included": included, "leftOut": left_out,
                "context": markdown}

    def _overview(self, tbl: ReadOnlyTable, limit: int) -> list[Chunk]:
        text_col = self.settings.text_column
        tbl.require_column(text_col, "text")
        wanted = [c for c in (*SOURCE_COLUMNS, TITLE, CHUNK, text_col) if c in tbl.columns]
        rows = tbl.scan(wanted).to_pylist()
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
            depth = source.count("/")
            ranked.append(((priority, depth, source, chunk_no or 0), row, source))
        ranked.sort(key=lambda item: item[0])
        return [
            Chunk(str(row.get(TITLE) or os.path.basename(source) or "(untitled)"), source, str(row.get(text_col) or ""))
            for _, row, source in ranked[:limit]
        ]

    # -- status and version -----------------------------------------------------------------

    def status(self, verbose: bool = False) -> dict[str, Any]:
        """Connection, tables (rows, vectors, full-text index), and whether embeddings are available."""
        s = self.settings
        connection: dict[str, Any] = {"path": s.db_path, "ok": False}
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
