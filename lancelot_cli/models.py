"""The values that cross layers: what the engine returns, what `wire` turns into JSON and `render` draws.

Frozen dataclasses, standard library only. Field names are Python's; the camelCase names agents
see are `wire`'s business. Optional parts are None when absent (the JSON then leaves them out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

# The choices, each named once: the engine, the server's tool schemas and the CLI's options use these.
SearchType = Literal["auto", "text", "vector", "hybrid"]  # what a caller may ask for
SearchKind = Literal["text", "vector", "hybrid"]  # the search that ran ("auto" decided on one)
TextRanking = Literal["bm25", "substring"]  # how a text search ranks: full-text index, or word share
Ranking = Literal[TextRanking, "distance", "rrf"]  # how a search ranked its hits
ContextMode = Literal["question", "overview"]  # a context block answers a question, or shows the collection
Overview = Literal["overview"]  # a context block's search type and ranking when it ran no search
KeySource = Literal["env", "keychain", "file"]  # where the OpenAI key was found

SEARCH_TYPES: tuple[SearchType, ...] = get_args(SearchType)
TEXT_RANKINGS: tuple[TextRanking, ...] = get_args(TextRanking)
ECHO_CHARS = 200  # how much of a query a reply repeats back


# The languages `lancelot index` tells apart (indexer/languages.py), by ISO 639-1 code.
LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "pt": "Portuguese",
    "it": "Italian",
    "nl": "Dutch",
    "ru": "Russian",
    "ko": "Korean",
    "ja": "Japanese",
    "zh": "Chinese",
}


def language_names(codes: Sequence[str]) -> str:
    """``["ko", "en"]`` as "Korean and English"."""
    names = [LANGUAGE_NAMES.get(code, code) for code in codes]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as a reply repeats it: whole when short, else its start and its length, so a 40 KB
    query does not come back whole (``"refund polic… (40,679 characters)"``)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def cited(source: str, metadata: Mapping[str, Any]) -> str:
    """Where a hit is, as replies name it: ``guide.pdf · page 12`` for a chunk of a PDF (its ``page``
    column), else the source alone."""
    page = metadata.get("page")
    return f"{source} · page {page}" if isinstance(page, int) and not isinstance(page, bool) else source


@dataclass(frozen=True)
class Hit:
    """One ranked chunk. ``text`` is the chunk's whole text (for packing; never sent by search)."""

    id: str
    score: float
    matched: float  # share of the query's words the text contains
    title: str
    source: str
    snippet: str
    metadata: Mapping[str, Any]  # the row's other non-empty columns, as read
    text: str = field(default="", repr=False)
    ranks: Mapping[str, int] | None = None  # hybrid: place in each fused ranking ("bm25", "vector")
    strength: float | None = None  # share of the query's terms held (engine/strength.py); None: not computed
    found_by: tuple[int, ...] | None = None  # several phrasings: which found it (0 the query, n its n-th other)


@dataclass(frozen=True)
class SearchResult:
    query: str
    table: str
    search_type: SearchKind  # the search that ran (it may differ from the one asked for: see note)
    ranking: Ranking
    hits: tuple[Hit, ...]
    note: str | None = None
    no_good_match: bool = False  # hits, but none reaches ``strength.MATCH_FLOOR`` (engine/strength.py)
    folders: Mapping[str, str] | None = None  # what the hits' folders hold (.lancelotdescribe), if described

    @property
    def count(self) -> int:
        return len(self.hits)


@dataclass(frozen=True)
class ContextBlock:
    """Markdown for a question (or an overview of the collection), at most ``budget`` characters."""

    question: str
    table: str
    mode: ContextMode
    search_type: SearchKind | Overview
    ranking: Ranking | Overview
    budget: int
    included: int
    left_out: int
    context: str
    note: str | None = None


@dataclass(frozen=True)
class Document:
    """A document's chunks ``first``..``last`` (0-based, of ``chunks``) joined, cut to ``budget``."""

    source: str
    title: str
    table: str
    chunks: int
    first: int
    last: int | None  # None when not even one chunk fitted
    included: int
    cut: int
    budget: int
    context: str


@dataclass(frozen=True)
class DocumentEntry:
    """One indexed document as `lancelot ls` lists it: its chunks, its file's size in bytes (None
    for a table another tool wrote) and its title."""

    source: str
    chunks: int
    size: int | None
    title: str


@dataclass(frozen=True)
class DocumentList:
    table: str
    path_prefix: str | None
    documents: tuple[DocumentEntry, ...]


@dataclass(frozen=True)
class AgentDocument:
    """A document offered as an MCP prompt: a unique slug, its title and where it comes from."""

    name: str
    title: str
    source: str


@dataclass(frozen=True)
class VectorStatus:
    column: str
    dimension: int
    model: str | None
    missing: int  # rows without a vector


@dataclass(frozen=True)
class TableStatus:
    """One table's facts; an unreadable table has only ``name`` and ``error``."""

    name: str
    error: str | None = None
    rows: int = 0
    version: int = 0
    updated_at: str | None = None
    fts_columns: tuple[str, ...] = field(default=(), metadata={"wire": "fullTextColumns"})
    vectors: tuple[VectorStatus, ...] = ()
    embedding_model: str | None = None
    indexed_at: str | None = None
    # {"indexed", "unindexed"} when there is an index
    fts_coverage: Mapping[str, int] | None = field(default=None, metadata={"wire": "fullTextCoverage"})
    columns: tuple[str, ...] | None = None  # verbose only
    search: str | None = None  # what a search of it does, one line (engine/readiness.py)
    languages: tuple[str, ...] = ()  # what its documents are written in, most first (indexer/languages.py)


@dataclass(frozen=True)
class Connection:
    path: str | None  # shown without secrets
    ok: bool
    store: str | None = None  # "local", "s3"...; None without a database
    consistency_seconds: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class Embeddings:
    available: bool
    key_source: KeySource | None
    model: str
    dimensions: int | None
    base_url: str | None


@dataclass(frozen=True)
class Defaults:
    table: str
    text_column: str
    vector_column: str
    limit: int
    context_budget: int


@dataclass(frozen=True)
class Status:
    connection: Connection
    tables: tuple[TableStatus, ...]
    embeddings: Embeddings
    defaults: Defaults


@dataclass(frozen=True)
class Version:
    name: str
    version: str
    mcp_protocol_version: str | None
    transports: tuple[str, ...]
    # every revision a client may speak, newest first (server.protocol.supported_versions)
    mcp_protocol_versions: tuple[str, ...] = ()
    search_types: tuple[SearchType, ...] = SEARCH_TYPES
    text_rankings: tuple[TextRanking, ...] = TEXT_RANKINGS
