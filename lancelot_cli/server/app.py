"""The MCP server: five read-only tools, each a thin adapter over ``Engine``.

The engine (and with it lancedb) is created on the first tool call, so ``initialize`` is
answered without waiting for ``import lancedb`` (~1.5 s).
"""

# No `from __future__ import annotations`: pydantic reads the tool signatures at runtime.
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS, CallToolResult, GetPromptResult, Prompt, PromptMessage, TextContent, ToolAnnotations,
)
from pydantic import Field

from lancelot_cli._version import __version__
from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.limits import MAX_LIMIT, MIN_BUDGET
from lancelot_cli.models import SEARCH_TYPES, AgentDocument
from lancelot_cli.server.metrics import Metrics
from lancelot_cli.server.schemas import SearchReply, StatusReply, VersionReply
from lancelot_cli.settings import Settings
from lancelot_cli.storage.reader import display_uri, quick_table_names, warm_up
from lancelot_cli.wire import to_json, to_wire

T = TypeVar("T")

Table = Annotated[str, Field(description="Table to use.", max_length=200)]
FilterValue = str | int | float | bool
PathPrefix = Annotated[str | None, Field(description="Only documents whose path starts with this, e.g. "
                                                     "\"docs/adr/\" (a folder needs its trailing slash).")]
Filters = Annotated[dict[str, FilterValue | list[FilterValue]] | None, Field(
    description="Only rows whose columns equal these values, e.g. {\"kind\": \"adr\"} or "
                "{\"status\": [\"accepted\", \"proposed\"]} (any of a list). Applied before ranking.")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Maximum results, 1 to {MAX_LIMIT}.")]

WARM_UP_DELAY = 0.25  # seconds after the transport starts

# How an agent is told what to do next after an engine error (``LancelotError.hint``).
HINTS = {
    "text_column": " (pass textColumn or set LANCEDB_TEXT_COLUMN)",
    "vector_column": " (pass vectorColumn or set LANCEDB_VECTOR_COLUMN)",
    "find_ids": "; use lancedb_search to find ids",
    "find_source": " (use lancedb_search to find one)",
}

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

SEARCH_DESCRIPTION = """\
Find passages in the indexed documents. Read-only: it never changes the database.

Returns JSON: {query, table, searchType, ranking, note?, count, hits[]}. Each hit has id, score,
matched (share of query words found), title, source (file path), a ~300-character snippet centred
on the matched words, and metadata (the row's other columns). searchType is the search that ran;
when it differs from the one asked for, note says why (no API key, no vectors, vector search failed).
Scores: text (ranking "bm25" or "substring") and hybrid ("rrf"): higher is better; vector
("distance"): lower is closer.

Use this to locate where something is written, to list candidates, or to look up exact terms,
codes and identifiers; narrow it with pathPrefix or filters. Use lancedb_query instead when you
want the full text of the best passages packed into one context block to answer a question, and
lancedb_document to read a whole document (or the chunks around a hit's id)."""

QUERY_DESCRIPTION = """\
Retrieve context for answering a question: runs a search for `question` and returns the best
chunks' full text as one Markdown block (a header, then per chunk its title, source and text, in
rank order), never longer than contextBudget characters; chunks that do not fit are left out and
counted at the end. Read-only: it never changes the database and generates no answer itself.

Use this when you need the passages themselves to answer from. Use lancedb_search instead to find
where something is, to see many hits cheaply, or to choose a search type, and lancedb_document to
read one document in full. Set warmStart=true at the start of a session to get an overview of the
collection (README/index/overview documents and the opening chunk of each document) instead of
answering `question`."""

DOCUMENT_DESCRIPTION = """\
Read one indexed document: its chunks in order, joined, as Markdown (a header with its title,
source and which chunks are shown, then the text), cut to contextBudget characters with a last
line saying what was cut and where to go on. Give `source` (a path as search hits show it) for
the whole document, or `id` (a hit's id) with `before`/`after` for the chunks around that hit.
Read-only: it reads the database, never files.

Division of labour: lancedb_search finds, lancedb_query packs the best passages for a question,
lancedb_document reads."""

STATUS_DESCRIPTION = """\
Report what can be searched: the database connection (path, ok or the error), each table with
its row count, full-text index and vector column (name, dimension), and whether vector search is
available (an API key is present, and from where: env, keychain or file; never the key itself),
with the embedding model. Read-only. Call it first when a search fails or returns nothing, or to
learn the table names; verbose=true adds each table's column names. Use lancedb_version for the
server's own version and features."""

VERSION_DESCRIPTION = """\
Report Lancelot's version, the MCP protocol version of the SDK it runs on, and the features this
build has (transports, search types). Read-only; it does not touch the database. Use
lancedb_status instead to see tables and whether vector search is configured."""


def instructions(settings: Settings) -> str:
    """Server instructions: what this server is for and which tables it can read (a cheap listing)."""
    lines = [
        "Lancelot searches the user's own documents (notes, docs, web pages) indexed in a LanceDB "
        "database. All tools are read-only. Use lancedb_search to find passages and exact terms, "
        "lancedb_query to get the best passages' full text as context for an answer (warmStart=true "
        "for an overview), lancedb_document to read a whole document or the chunks around a hit, "
        "lancedb_status when something fails or to see tables and vectors.",
    ]
    path = settings.db_uri
    if not path:
        lines.append("No database is configured yet (LANCEDB_PATH is unset); tools will say how to set it.")
        return " ".join(lines)
    try:
        tables = quick_table_names(path)
    except OSError:
        lines.append(f"The database folder {path} cannot be read; lancedb_status explains.")
    else:
        if tables is None:  # an object store: listing it would cost requests before `initialize` is answered
            lines.append(f"Database: {display_uri(path)}. Default table: {settings.table}.")
        else:
            shown = ", ".join(tables) if tables else "none yet"
            lines.append(f"Tables: {shown}. Default table: {settings.table}.")
    return " ".join(lines)


def _json_result(reply: Any) -> CallToolResult:
    # Compact JSON text (for clients that only show text) plus the same object as structured content.
    data = to_wire(reply)
    return CallToolResult(content=[TextContent(type="text", text=to_json(data))], structured_content=data)


def _reply_chars(reply: Any) -> int:
    if isinstance(reply, str):
        return len(reply)
    if isinstance(reply, CallToolResult):
        return sum(len(getattr(part, "text", "")) for part in reply.content)
    return 0


MAX_ERROR_CHARS = 1000  # an error echoing a 60 KB argument must not come back whole


def _capped(text: str) -> str:
    half = MAX_ERROR_CHARS // 2
    return text if len(text) <= MAX_ERROR_CHARS else f"{text[:half]} … ({len(text)} characters) … {text[-half:]}"


def _run(call: Callable[[], T]) -> T:
    """Engine errors become tool errors: the agent reads the message and can correct the call.
    Any other exception (lancedb, pyarrow) too: the SDK would answer it with a bare "Error executing
    tool", and over stdio with no reply at all."""
    try:
        return call()
    except LancelotError as exc:
        raise ToolError(_capped(exc.worded(HINTS))) from None
    except Exception as exc:
        raise ToolError(_capped(f"{type(exc).__name__}: {exc}; check the table and column arguments "
                                f"against lancedb_status")) from exc


def _warm(server: MCPServer) -> None:
    """Import lancedb, then start loading the local embedding model of the default table's vectors,
    if they were made by one, so a first vector search does not wait for either (a text search never does)."""
    warm_up()
    get_engine = getattr(server, "_get_engine", None)
    try:
        if get_engine is not None:
            get_engine().warm_embeddings()
    except Exception:  # no database or table yet: the first call says so
        pass


@asynccontextmanager
async def _lifespan(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
    # Started here, not at import: the transport owns stdout by now, so anything the import prints
    # goes to stderr. The short delay lets `initialize` be answered first: importing lancedb holds
    # the GIL most of the time and would slow that answer down by a few hundred milliseconds.
    timer = threading.Timer(WARM_UP_DELAY, _warm, args=(_server,))  # lancedb (~1.5 s), then a local model
    timer.daemon = True
    timer.start()
    yield {}


class LancelotServer(MCPServer):
    """MCPServer whose prompts are read from the database when a client asks: each document with
    ``kind: agent`` in its front matter, or under ``agents/``, is a prompt (read-only)."""

    def __init__(self, get_engine: Callable[[], Engine], metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._get_engine = get_engine
        self.metrics = metrics

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Every call is counted, the ones whose arguments are rejected too."""
        started = time.perf_counter()
        error: str | None = None
        reply_chars = 0
        try:
            result = await super().call_tool(name, arguments, context)
            reply_chars = _reply_chars(result)
            if getattr(result, "is_error", False):
                error = "ToolError"
            return result
        except MCPError:  # a JSON-RPC error, not a tool result
            error = "MCPError"
            raise
        except Exception as exc:
            # The SDK sends the message back as an is_error result's text: the agent reads it too.
            error = type(exc).__name__
            reply_chars = len(str(exc))
            if type(exc) is ToolError and len(str(exc)) > MAX_ERROR_CHARS:  # "Unknown tool: <a 10 KB name>"
                raise ToolError(_capped(str(exc))) from None
            raise
        finally:
            self.metrics.record(name, time.perf_counter() - started, len(to_json(arguments)), reply_chars, error)

    async def list_prompts(self) -> list[Prompt]:
        found = await anyio.to_thread.run_sync(self._agents)
        return [Prompt(name=a.name, title=a.title, description=f"Instructions from {a.source} "
                       f"(read-only, from the Lancelot database)") for a in found]

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        found = {a.name: a for a in await anyio.to_thread.run_sync(self._agents)}
        if name not in found:
            if self._prompt_manager.get_prompt(name) is not None:  # a prompt registered in code
                return await super().get_prompt(name, arguments, context)
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt {name!r}; prompts here: "
                                                        f"{', '.join(sorted(found)) or 'none'}")
        text = await anyio.to_thread.run_sync(lambda: self._get_engine().agent_text(found[name].source))
        return GetPromptResult(description=found[name].title,
                               messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))])

    def _agents(self) -> list[AgentDocument]:
        try:
            return self._get_engine().agent_documents()
        except LancelotError:  # no database yet: no prompts, the tools explain
            return []


def build_server(settings: Settings, engine: Engine | None = None, *, protocol_version: str | None = None,
                 metrics: Metrics | None = None) -> MCPServer:
    """The MCP server with the read-only tools over ``engine`` (built on first use when None)."""
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    holder: dict[str, Engine] = {}
    if engine is not None:
        holder["engine"] = engine

    def get_engine() -> Engine:
        if "engine" not in holder:
            holder["engine"] = Engine(settings)
        return holder["engine"]

    metrics = metrics or Metrics()
    server = LancelotServer(
        get_engine,
        metrics,
        name="lancelot",
        title="Lancelot",
        description="Read-only search over your own documents in LanceDB",
        version=__version__,
        instructions=instructions(settings),
        log_level="WARNING" if settings.log_level_number > 10 else "DEBUG",
        lifespan=_lifespan,
    )
    def tool(name: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            server.add_tool(fn, name=name, annotations=READ_ONLY, **options)
            return fn
        return register

    @server.resource("lancelot://stats", name="stats", title="Lancelot usage", mime_type="application/json",
                     description="Per-tool calls, errors, p50/p95 latency and approximate reply tokens since "
                                 "the server started (in memory; nothing is written to the database).")
    def stats() -> str:
        return to_json(metrics.snapshot())

    @tool(name="lancedb_search", title="Search documents", description=SEARCH_DESCRIPTION)
    def lancedb_search(
        query: Annotated[str, Field(description="What to look for: words, a phrase in double quotes, or an identifier.")],
        limit: Limit = settings.default_limit,
        searchType: Annotated[
            Literal[SEARCH_TYPES],  # type: ignore[valid-type]
            Field(description="auto: hybrid when the table has vectors and a key is set, else text. text: "
                              "BM25 keyword search. vector: semantic search with embeddings. hybrid: both, fused."),
        ] = "auto",
        table: Table = settings.table,
        textColumn: Annotated[str, Field(description="Column holding the text.")] = settings.text_column,
        vectorColumn: Annotated[str, Field(description="Column holding the vectors.")] = settings.vector_column,
        pathPrefix: PathPrefix = None,
        filters: Filters = None,
    ) -> Annotated[CallToolResult, SearchReply]:
        reply = _run(lambda: get_engine().search(query, limit=limit, search_type=searchType, table=table,
                                                 text_column=textColumn, vector_column=vectorColumn,
                                                 path_prefix=pathPrefix, filters=filters))
        return _json_result(reply)

    @tool(name="lancedb_query", title="Get context for a question", description=QUERY_DESCRIPTION,
          structured_output=False)
    def lancedb_query(
        question: Annotated[str, Field(description="The question to retrieve context for.")],
        contextBudget: Annotated[int, Field(ge=MIN_BUDGET, description="Maximum characters of the reply.")] = settings.context_budget,
        warmStart: Annotated[bool, Field(description="Return an overview of the collection instead of answering the question.")] = False,
        table: Table = settings.table,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Maximum chunks, 1 to {MAX_LIMIT}.")] = settings.default_limit,
        pathPrefix: PathPrefix = None,
        filters: Filters = None,
    ) -> str:
        reply = _run(lambda: get_engine().query(question, context_budget=contextBudget, warm_start=warmStart,
                                                table=table, limit=limit, path_prefix=pathPrefix, filters=filters))
        return reply.context

    @tool(name="lancedb_document", title="Read a document", description=DOCUMENT_DESCRIPTION,
          structured_output=False)
    def lancedb_document(
        source: Annotated[str | None, Field(description="The document's path, as search hits show it.")] = None,
        id: Annotated[str | None, Field(description="A hit's id: read the chunks around it instead.")] = None,  # noqa: A002
        before: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks before the hit (with id).")] = 2,
        after: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks after the hit (with id).")] = 2,
        contextBudget: Annotated[int, Field(ge=MIN_BUDGET, description="Maximum characters of the reply.")] = settings.context_budget,
        table: Table = settings.table,
    ) -> str:
        reply = _run(lambda: get_engine().document(source, chunk_id=id, before=before, after=after,
                                                   context_budget=contextBudget, table=table))
        return reply.context

    @tool(name="lancedb_status", title="Database status", description=STATUS_DESCRIPTION)
    def lancedb_status(
        verbose: Annotated[bool, Field(description="Include each table's column names and this server's "
                                                   "usage metrics.")] = False,
    ) -> Annotated[CallToolResult, StatusReply]:
        reply = to_wire(_run(lambda: get_engine().status(verbose=verbose)))
        if verbose:
            reply["usage"] = metrics.snapshot()
        return _json_result(reply)

    @tool(name="lancedb_version", title="Lancelot version", description=VERSION_DESCRIPTION)
    def lancedb_version() -> Annotated[CallToolResult, VersionReply]:
        return _json_result(get_engine().version(protocol_version or LATEST_PROTOCOL_VERSION))

    return server
