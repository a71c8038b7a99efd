"""The values that cross layers: what the engine returns, what `wire` turns into JSON and `render` draws.

Frozen dataclasses, standard library only. Each reply model is its JSON's shape: `wire` sends its
fields in their order by camelCase name; a field whose wire form breaks that rule says how in its
metadata (``sent(...)``, wire_rules.py): left out when None or empty, another name, never sent. So
field order here is key order on the wire (the golden replies pin it); a field computed from the
others (a count) is an ``init=False`` field set in ``__post_init__``, sent where it stands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from lancelot_cli.wire_rules import sent

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
    # share of the query's terms held (engine/strength.py); None: not computed
    strength: float | None = field(default=None, kw_only=True, metadata=sent(omit="none"))
    title: str
    source: str
    snippet: str
    metadata: Mapping[str, Any]  # the row's other non-empty columns, as read (sent JSON-safe)
    text: str = field(default="", repr=False, metadata=sent(hidden=True))
    # hybrid: place in each fused ranking ("bm25", "vector")
    # (ranks, found_by and a search's folders are not in the search tool's outputSchema: tools/list is read in
    # every session, and the schema allows extra properties)
    ranks: Mapping[str, int] | None = field(default=None, metadata=sent(omit="none", published=False))
    # several phrasings: which found it (0 the query, n its n-th other)
    found_by: tuple[int, ...] | None = field(default=None, metadata=sent(omit="none", published=False))


@dataclass(frozen=True)
class SearchResult:
    query: str = field(metadata=sent(echo=True))
    table: str
    search_type: SearchKind  # the search that ran (it may differ from the one asked for: see note)
    ranking: Ranking
    note: str | None = field(default=None, kw_only=True, metadata=sent(omit="none"))
    # hits, but none reaches ``strength.MATCH_FLOOR`` (engine/strength.py); sent only when true: a token per hit saved
    no_good_match: bool = field(default=False, kw_only=True, metadata=sent(omit="empty"))
    # what the hits' folders hold (.lancelotdescribe), if described
    folders: Mapping[str, str] | None = field(default=None, kw_only=True, metadata=sent(omit="empty", published=False))
    count: int = field(init=False)  # len(hits)
    hits: tuple[Hit, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", len(self.hits))


@dataclass(frozen=True)
class ContextBlock:
    """Markdown for a question (or an overview of the collection), at most ``budget`` characters."""

    question: str = field(metadata=sent(echo=True))
    table: str
    mode: ContextMode
    search_type: SearchKind | Overview
    ranking: Ranking | Overview
    note: str | None = field(default=None, kw_only=True, metadata=sent(omit="none"))
    budget: int
    included: int
    left_out: int
    context: str


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
    size: int | None = field(metadata=sent(omit="none"))
    title: str


@dataclass(frozen=True)
class DocumentList:
    table: str
    path_prefix: str | None = field(metadata=sent(omit="none"))
    count: int = field(init=False)  # len(documents)
    documents: tuple[DocumentEntry, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", len(self.documents))


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
    error: str | None = field(default=None, metadata=sent(omit="none", last=True))
    # what a search of it does, one line (engine/readiness.py)
    search: str | None = field(default=None, metadata=sent(omit="none"))
    rows: int = 0
    # what its documents are written in, most first (indexer/languages.py)
    languages: tuple[str, ...] = field(default=(), metadata=sent(omit="empty"))
    version: int = 0
    updated_at: str | None = None
    full_text_index: bool = field(init=False)  # bool(fts_columns)
    fts_columns: tuple[str, ...] = field(default=(), metadata=sent("fullTextColumns"))
    vectors: tuple[VectorStatus, ...] = ()
    embedding_model: str | None = field(default=None, metadata=sent(omit="none"))
    indexed_at: str | None = field(default=None, metadata=sent(omit="none"))
    # {"indexed", "unindexed"} when there is an index
    fts_coverage: Mapping[str, int] | None = field(default=None, metadata=sent("fullTextCoverage", omit="none"))
    columns: tuple[str, ...] | None = field(default=None, metadata=sent(omit="none"))  # verbose only

    def __post_init__(self) -> None:
        object.__setattr__(self, "full_text_index", bool(self.fts_columns))


@dataclass(frozen=True)
class Connection:
    path: str | None  # shown without secrets
    ok: bool
    store: str | None = field(default=None, metadata=sent(omit="none"))  # "local", "s3"...; None without a database
    consistency_seconds: float | None = field(default=None, metadata=sent(omit="none"))
    error: str | None = field(default=None, metadata=sent(omit="none"))


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
class Features:
    """What this build can do; the last three are true of every build, said for clients that check."""

    transports: tuple[str, ...]
    search_types: tuple[SearchType, ...] = SEARCH_TYPES
    text_rankings: tuple[TextRanking, ...] = field(default=TEXT_RANKINGS, metadata=sent("textRanking"))
    vector_search: bool = field(default=True, init=False)
    hybrid: bool = field(default=True, init=False)
    read_only: bool = field(default=True, init=False)


@dataclass(frozen=True)
class Version:
    name: str
    version: str
    mcp_protocol_version: str | None
    # every revision a client may speak, newest first (server.protocol.supported_versions)
    mcp_protocol_versions: tuple[str, ...] = ()
    features: Features = field(kw_only=True)
