"""The MCP server: five read-only tools, each a thin adapter over ``Engine``.

The engine (and with it lancedb) is created on the first tool call, so ``initialize`` is
answered without waiting for ``import lancedb`` (~1.5 s).
"""

# No `from __future__ import annotations`: pydantic reads the tool signatures at runtime.
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS, CallToolResult, GetPromptResult, Prompt, PromptMessage, TextContent, Tool, ToolAnnotations,
)
from pydantic import Field, ValidationError, WithJsonSchema

from lancelot_cli._version import __version__
from lancelot_cli.engine import Engine
from lancelot_cli.engine.ranking import PER_DOCUMENT
from lancelot_cli.errors import LancelotError
from lancelot_cli.limits import MAX_LIMIT, MIN_BUDGET
from lancelot_cli.models import SEARCH_TYPES, AgentDocument
from lancelot_cli.server.memory import release_freed
from lancelot_cli.server.metrics import Metrics
from lancelot_cli.server.schemas import SearchReply, argument_problems, inline_defs, slim, unknown_arguments
from lancelot_cli.settings import Settings
from lancelot_cli.storage.reader import display_uri, quick_table_names, warm_up
from lancelot_cli.wire import to_json, to_wire

T = TypeVar("T")

Table = Annotated[str, Field(description="Table to use.", max_length=200)]
FilterValue = str | int | float | bool
PathPrefix = Annotated[str | None, Field(description="Only paths starting with this (a folder: \"docs/adr/\").")]
Filters = Annotated[dict[str, FilterValue | list[FilterValue]] | None, Field(
    description="Only rows whose columns equal these (any of a list): {\"kind\": \"adr\", \"status\": [\"a\", \"b\"]}.")]
# lancedb_query's narrowing is lancedb_search's: said once, there.
SamePathPrefix = Annotated[str | None, Field(description="As in lancedb_search.")]
SameFilters = Annotated[dict[str, FilterValue | list[FilterValue]] | None,
                       WithJsonSchema({"type": "object", "description": "As in lancedb_search."})]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Maximum results.")]

WARM_UP_DELAY = 0.25  # seconds after the transport starts

# The CLI's read commands (cli/background.py) ask for the engine's whole reply: a tools/call whose
# `_meta` holds {"lancelot/reply": "whole"} gets the reply's `--json` form as structuredContent
# (lancedb_query and lancedb_document too, whose reply to an agent is the context text alone) and,
# for an engine error, its kind and hint in the result's `_meta`, so the CLI words it as in-process.
# Agents never send the key, so what they get is unchanged.
WHOLE_REPLY_KEY = "lancelot/reply"
ERROR_KEY = "lancelot/error"
_whole_reply: ContextVar[bool] = ContextVar("lancelot_whole_reply", default=False)

# How an agent is told what to do next after an engine error (``LancelotError.hint``).
HINTS = {
    "text_column": " (pass textColumn or set LANCEDB_TEXT_COLUMN)",
    "vector_column": " (pass vectorColumn or set LANCEDB_VECTOR_COLUMN)",
    "find_ids": "; use lancedb_search to find ids",
    "find_source": " (use lancedb_search to find one)",
}

# destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec): not sent.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

SEARCH_DESCRIPTION = """\
Find passages (read-only): where something is written, candidates, exact terms, codes, identifiers. \
Use lancedb_query for the best passages' full text to answer from, lancedb_document to read a \
document or the chunks around a hit's id.
Hits carry score (higher is better; lower for ranking "distance") and matched (share of query \
words found); note says why searchType (what ran) differs from the one asked. At most 2 chunks of \
one document by default (perDocument; 0: all)."""

QUERY_DESCRIPTION = """\
Context to answer a question (read-only; writes no answer): the best chunks' full text as one \
Markdown block in rank order, within contextBudget characters (the best chunk is cut to fit, others \
left out are counted). lancedb_search is cheaper to find where something is. warmStart=true (start \
of a session): an overview instead (README/index documents, each document's opening chunk)."""

DOCUMENT_DESCRIPTION = """\
Read one document as Markdown (read-only; from the database, never files): `source` (a path as \
lancedb_search hits show it) for all of it, or `id` (a hit's id) with before/after for the chunks \
around it, not both. Cut to contextBudget characters; a last line then gives the id to go on from. \
Chunks count from 0, as in ids (path#0)."""

STATUS_DESCRIPTION = """\
What can be searched (read-only): each table's rows, full-text index and vectors, and whether vector \
search works (and with which key source or model; never the key). Call it first when a search fails \
or finds nothing, or for table names; lancedb_version has the server's version."""

VERSION_DESCRIPTION = """\
Lancelot's version, MCP protocol version and features. Read-only; no database access (lancedb_status \
has that)."""


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


def _asks_whole(context: Any) -> bool:
    """True when the request's `_meta` asks for the whole reply (see WHOLE_REPLY_KEY)."""
    try:
        meta = context.request_context.meta if context is not None else None
    except ValueError:  # a Context made outside a request (in-process calls)
        return False
    return isinstance(meta, dict) and meta.get(WHOLE_REPLY_KEY) == "whole"


def _engine_cause(exc: BaseException) -> LancelotError | None:
    """The engine error behind a tool error (`_run` raised it from one; the SDK wraps that again)."""
    found: BaseException | None = exc
    while found is not None and not isinstance(found, LancelotError):
        found = found.__cause__
    return found


def _engine_error(exc: ToolError, cause: LancelotError) -> CallToolResult:
    """An engine error for a whole-reply caller: the text agents get, and its kind and hint."""
    kind = {"kind": type(cause).__name__, "message": str(cause), "hint": cause.hint}
    return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True,
                          _meta={ERROR_KEY: kind})


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
        raise ToolError(_capped(exc.worded(HINTS))) from exc  # the cause: for a whole reply's _meta
    except Exception as exc:
        raise ToolError(_capped(f"{type(exc).__name__}: {exc}; check the table and column arguments "
                                f"against lancedb_status")) from exc
    finally:
        release_freed()  # what the call freed goes back to the system (server.memory)


def _warm(server: MCPServer, stopped: threading.Event) -> None:
    """Import lancedb, then start loading the local embedding model of the default table's vectors,
    if they were made by one, so a first vector search does not wait for either (a text search never does).
    Nothing is opened once the server has stopped (``stopped``): a server built per request (Lambda,
    tests) must not leave a thread reading a database after it is gone."""
    warm_up()
    if stopped.is_set():
        return
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
    stopped = threading.Event()
    timer = threading.Timer(WARM_UP_DELAY, _warm, args=(_server, stopped))  # lancedb (~1.5 s), then a local model
    timer.daemon = True
    timer.start()
    try:
        yield {}
    finally:
        stopped.set()
        timer.cancel()


class LancelotServer(MCPServer):
    """MCPServer whose prompts are read from the database when a client asks: each document with
    ``kind: agent`` in its front matter, or under ``agents/``, is a prompt (read-only)."""

    def __init__(self, get_engine: Callable[[], Engine], metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._get_engine = get_engine
        self.metrics = metrics
        self._listed: list[Tool] | None = None

    async def list_tools(self) -> list[Tool]:
        """The tools with slimmed schemas (``schemas.slim``): the list is read in every conversation.
        Arguments are still validated by the SDK's full pydantic models."""
        if self._listed is None:
            self._listed = [tool.model_copy(update={
                "input_schema": slim(tool.input_schema),
                "output_schema": slim(inline_defs(tool.output_schema)) if tool.output_schema else None,
            }) for tool in await super().list_tools()]
        return self._listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Every call is counted, the ones whose arguments are rejected too."""
        started = time.perf_counter()
        error: str | None = None
        reply_chars = 0
        whole = _whole_reply.set(_asks_whole(context))
        try:
            schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
            unknown = unknown_arguments(list(arguments), schema) if schema is not None else None
            if unknown:
                raise ToolError(_capped(f"Error executing tool {name}: {unknown}"))
            result = await super().call_tool(name, arguments, context)
            reply_chars = _reply_chars(result)
            if getattr(result, "is_error", False):
                error = "ToolError"
            return result
        except MCPError:  # a JSON-RPC error, not a tool result
            error = "MCPError"
            raise
        except ToolError as exc:
            cause = _engine_cause(exc)
            if _whole_reply.get() and cause is not None:
                error, reply_chars = "ToolError", len(str(exc))
                return _engine_error(exc, cause)
            if not isinstance(exc.__cause__, ValidationError):
                error, reply_chars = type(exc).__name__, len(str(exc))
                if type(exc) is ToolError and len(str(exc)) > MAX_ERROR_CHARS:  # "Unknown tool: <a 10 KB name>"
                    raise ToolError(_capped(str(exc))) from None
                raise
            # pydantic's multi-line text (with its URL) becomes one line the agent can act on.
            schema = next((t.input_schema for t in await self.list_tools() if t.name == name), {})
            message = f"Error executing tool {name}: {argument_problems(exc.__cause__.errors(), schema, arguments)}"
            error, reply_chars = "ToolError", len(message)
            raise ToolError(_capped(message)) from exc.__cause__
        except Exception as exc:
            # The SDK sends the message back as an is_error result's text: the agent reads it too.
            error = type(exc).__name__
            reply_chars = len(str(exc))
            raise
        finally:
            _whole_reply.reset(whole)
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
        query: Annotated[str, Field(description="Words, a \"phrase\" or an identifier.")],
        limit: Limit = settings.default_limit,
        searchType: Annotated[
            Literal[SEARCH_TYPES],  # type: ignore[valid-type]
            Field(description="auto: hybrid if vectors and a key exist, else text. text: BM25 keywords. "
                              "vector: semantic. hybrid: both, fused."),
        ] = "auto",
        table: Table = settings.table,
        textColumn: Annotated[str, Field(description="Text column.")] = settings.text_column,
        vectorColumn: Annotated[str, Field(description="Vector column.")] = settings.vector_column,
        pathPrefix: PathPrefix = None,
        filters: Filters = None,
        perDocument: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Most chunks of one document among "
                                          "the hits; 0: every chunk.")] = PER_DOCUMENT,
    ) -> Annotated[CallToolResult, SearchReply]:
        reply = _run(lambda: get_engine().search(query, limit=limit, search_type=searchType, table=table,
                                                 text_column=textColumn, vector_column=vectorColumn,
                                                 path_prefix=pathPrefix, filters=filters, per_document=perDocument))
        return _json_result(reply)

    @tool(name="lancedb_query", title="Get context for a question", description=QUERY_DESCRIPTION,
          structured_output=False)
    def lancedb_query(
        question: Annotated[str, Field(description="The question.")],
        contextBudget: Annotated[int, Field(ge=MIN_BUDGET, description="Maximum characters of the reply.")] = settings.context_budget,
        warmStart: Annotated[bool, Field(description="An overview instead of an answer.")] = False,
        table: Table = settings.table,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Maximum chunks.")] = settings.default_limit,
        pathPrefix: SamePathPrefix = None,
        filters: SameFilters = None,
    ) -> str:
        reply = _run(lambda: get_engine().query(question, context_budget=contextBudget, warm_start=warmStart,
                                                table=table, limit=limit, path_prefix=pathPrefix, filters=filters))
        return _json_result(reply) if _whole_reply.get() else reply.context

    @tool(name="lancedb_document", title="Read a document", description=DOCUMENT_DESCRIPTION,
          structured_output=False)
    def lancedb_document(
        source: Annotated[str | None, Field(description="A path, as hits show it.")] = None,
        id: Annotated[str | None, Field(description="A hit's id: the chunks around it.")] = None,  # noqa: A002
        before: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks before id's.")] = 2,
        after: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks after id's.")] = 2,
        contextBudget: Annotated[int, Field(ge=MIN_BUDGET, description="Maximum characters of the reply.")] = settings.context_budget,
        table: Table = settings.table,
    ) -> str:
        reply = _run(lambda: get_engine().document(source, chunk_id=id, before=before, after=after,
                                                   context_budget=contextBudget, table=table))
        return _json_result(reply) if _whole_reply.get() else reply.context

    @tool(name="lancedb_status", title="Database status", description=STATUS_DESCRIPTION)
    def lancedb_status(
        verbose: Annotated[bool, Field(description="Add column names and usage metrics.")] = False,
    ) -> CallToolResult:  # no outputSchema: its tables/embeddings are open objects, the text says more
        reply = to_wire(_run(lambda: get_engine().status(verbose=verbose)))
        if verbose and not _whole_reply.get():  # the CLI's status has no usage: its own process made no calls
            reply["usage"] = metrics.snapshot()
        return _json_result(reply)

    @tool(name="lancedb_version", title="Lancelot version", description=VERSION_DESCRIPTION)
    def lancedb_version() -> CallToolResult:
        return _json_result(get_engine().version(protocol_version or LATEST_PROTOCOL_VERSION))

    return server
