"""The five read-only tools: their parameters, descriptions and replies, each a thin adapter over ``Engine``.

``register`` adds them to a server (server/app.py ``build_server``). Each tool's parameters are
made from its request type (lancelot_cli/requests.py: fields, bounds, descriptions, camelCase wire
names) as the signature the SDK reads; defaults come from the settings the server was built with,
so the tools are made per server. The SDK's ``Field(alias=...)`` does not carry an alias into both
the schema and the call, so the signature's names are the wire names.
"""

# No `from __future__ import annotations`: pydantic reads the tool signatures at runtime.
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import MISSING, replace
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.models import SearchResult
from lancelot_cli.requests import ERROR_KEY, WHOLE_REPLY_KEY, Query, Read, Request, Search, Status, params
from lancelot_cli.server import completions, links
from lancelot_cli.server.metrics import Metrics
from lancelot_cli.server.process import collector
from lancelot_cli.server.process.memory import release_freed
from lancelot_cli.server.replies import capped as _capped
from lancelot_cli.server.schemas import SearchReply
from lancelot_cli.settings import Settings
from lancelot_cli.wire import to_json, to_wire
from lancelot_cli.wire_rules import wire_key

T = TypeVar("T")


# The CLI's read commands (background/client.py) ask for the engine's whole reply: a tools/call whose
# `_meta` holds {"lancelot/reply": "whole"} gets the reply's `--json` form as structuredContent
# (lancedb_query and lancedb_document too, whose reply to an agent is the context text alone) and,
# for an engine error, its kind and hint in the result's `_meta`, so the CLI words it as in-process.
# Agents never send the key, so what they get is unchanged. The keys: requests.py.
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
Find passages (read-only): terms, identifiers, topics. lancedb_query: \
the best passages' full text; lancedb_document: a document or the chunks around a hit.
For a question in a person's words, also send queries: 2-4 rewrites in the documents' language \
with their own words (the product's names for features, menus, commands), synonyms, and \
one short sentence the answer might contain, searched as one ranking; foundBy says which found a \
hit (0: query).
Hits: score (higher is better; "distance": lower), matched (share of query words found), \
strength (comparable across queries). note: why searchType differs from the one asked, or \
noGoodMatch (rephrase once or say not found)."""

QUERY_DESCRIPTION = """\
Context to answer a question (read-only): the best chunks' full text as one Markdown block in rank \
order, within contextBudget characters (the best chunk cut to fit); queries as in lancedb_search, \
which is cheaper to find where something is."""

DOCUMENT_DESCRIPTION = """\
Read one document as Markdown (read-only): source (a lancedb_search hit's path) for all of it, or \
id (a hit's id) with before/after for the chunks around it; page (with source): one PDF page. Cut to \
contextBudget characters; a last line gives the next id to read."""

STATUS_DESCRIPTION = """\
What can be searched (read-only): per table its rows, languages, indexes, vectors and, in "search", \
what a search does ("hybrid: works, <model>" or "text only: <why>; <fix>"). Call it if \
lancedb_search fails or finds nothing (lancedb_version: the server's)."""

VERSION_DESCRIPTION = "Lancelot's version, MCP revisions and features (read-only; lancedb_status: the database)."


def _json_result(reply: Any) -> CallToolResult:
    # Compact JSON text (for clients that only show text) plus the same object as structured content.
    data = to_wire(reply)
    return CallToolResult(content=[TextContent(type="text", text=to_json(data))], structured_content=data)


def asks_whole(context: Any) -> bool:
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
    return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True, _meta={ERROR_KEY: kind})


def _run(call: Callable[[], T]) -> T:
    """Engine errors become tool errors: the agent reads the message and can correct the call.
    Any other exception (lancedb, pyarrow) too: the SDK would answer it with a bare "Error executing
    tool", and over stdio with no reply at all."""
    try:
        return call()
    except LancelotError as exc:
        raise ToolError(_capped(exc.worded(HINTS))) from exc  # the cause: for a whole reply's _meta
    except Exception as exc:
        raise ToolError(
            _capped(f"{type(exc).__name__}: {exc}; check the table and column arguments against lancedb_status")
        ) from exc
    finally:
        release_freed()  # what the call freed goes back to the system (server/process/memory.py)
        collector.warmed_up()  # a first call ended: the collector paused for the startup comes back soon


GetEngine = Callable[[], Engine]


def register(
    server: MCPServer, settings: Settings, get_engine: GetEngine, metrics: Metrics, protocol_version: str
) -> None:
    """Add the tools and the usage resource to ``server``."""
    for tool, name, title, description, structured in (
        (_search(settings, get_engine), "lancedb_search", "Search documents", SEARCH_DESCRIPTION, True),
        (_query(settings, get_engine), "lancedb_query", "Get context for a question", QUERY_DESCRIPTION, False),
        (_document(settings, get_engine), "lancedb_document", "Read a document", DOCUMENT_DESCRIPTION, False),
        (_status(settings, get_engine, metrics), "lancedb_status", "Database status", STATUS_DESCRIPTION, True),
    ):
        options: dict[str, Any] = {} if structured else {"structured_output": False}
        server.add_tool(
            tool,
            name=name,
            title=title,
            description=description,
            annotations=READ_ONLY,
            **options,
        )

    from lancelot_cli.server.protocol import supported_versions

    supported = supported_versions()

    def lancedb_version() -> CallToolResult:
        return _json_result(get_engine().version(protocol_version, supported=supported))

    server.add_tool(
        lancedb_version,
        name="lancedb_version",
        title="Lancelot version",
        description=VERSION_DESCRIPTION,
        annotations=READ_ONLY,
    )

    @server.resource(
        "lancelot://stats",
        name="stats",
        title="Lancelot usage",
        mime_type="application/json",
        description="Per-tool calls, errors, p50/p95 latency and approximate reply tokens since "
        "the server started (in memory; nothing is written to the database).",
    )
    def stats() -> str:
        return to_json({**metrics.snapshot(), "gc": collector.state()})

    links.register(server, get_engine)
    completions.register(server, get_engine)


def published(request: type[Request[Any]], settings: Settings) -> inspect.Signature:
    """The tool's parameters, made from the request type's fields: each by its wire name, with the
    type, bounds and description its ``Param`` gives, and the default an agent should see (a
    setting's value, a fixed one, or none: the parameter may be left out)."""
    parameters = []
    for f, spec, hint in params(request):
        shown = getattr(settings, spec.setting) if spec.setting else spec.shown
        if shown is not None or f.default not in (None, MISSING):  # a value is always sent: not Optional
            hint = next(a for a in typing.get_args(hint) if a is not type(None)) if _optional(hint) else hint
        given = {"ge": spec.low, "le": spec.high, "max_length": spec.max_items or spec.max_length}
        checks: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        meta: list[Any] = [Field(**checks)]
        if spec.schema is not None:  # validated as typed, published as this schema
            meta.append(WithJsonSchema({**spec.schema, "description": spec.description}))
        else:
            meta[0] = Field(description=spec.description, **checks)
        default = shown if shown is not None else (inspect.Parameter.empty if f.default is MISSING else f.default)
        parameters.append(
            inspect.Parameter(
                wire_key(f), inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[(hint, *meta)]
            )
        )
    return inspect.Signature(parameters)


def _optional(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


def _tool(
    request: type[Request[Any]],
    settings: Settings,
    get_engine: GetEngine,
    respond: Callable[[Any, Any], Any],
    returns: Any,
) -> Callable[..., Any]:
    """The tool for ``request``: its arguments built into the request, run on the engine, and the
    reply made into what the tool answers by ``respond(request, reply)``."""

    def tool(**arguments: Any) -> Any:
        asked = request.from_arguments(arguments)
        return respond(asked, _run(lambda: asked.ask(get_engine())))

    tool.__name__ = tool.__qualname__ = str(request.tool)
    tool.__signature__ = published(request, settings).replace(return_annotation=returns)  # type: ignore[attr-defined]
    return tool


def _search(settings: Settings, get_engine: GetEngine) -> Callable[..., Any]:
    def respond(request: Search, reply: SearchResult) -> CallToolResult:
        result = _json_result(reply)
        if not _whole_reply.get():  # each hit's document as a resource link (server/links.py)
            result.content.extend(links.hit_links(reply.hits, reply.table, settings.table))
        return result

    return _tool(Search, settings, get_engine, respond, Annotated[CallToolResult, SearchReply])


def _context(request: Any, reply: Any) -> str | CallToolResult:
    """lancedb_query and lancedb_document answer an agent with the context text alone; the CLI
    asks for the whole reply (WHOLE_REPLY_KEY)."""
    return _json_result(reply) if _whole_reply.get() else reply.context


def _query(settings: Settings, get_engine: GetEngine) -> Callable[..., Any]:
    return _tool(Query, settings, get_engine, _context, str | CallToolResult)


class _LinkedRead(Read):
    """A document asked for by a hit's resource link: its source, and its table when it names one."""

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> Read:  # type: ignore[override]
        asked = Read.from_arguments(arguments)
        linked = links.parse_doc_uri(asked.source) if asked.source else None
        if linked is None:
            return asked
        return replace(asked, source=linked[0], table=linked[1] or asked.table)


def _document(settings: Settings, get_engine: GetEngine) -> Callable[..., Any]:
    return _tool(_LinkedRead, settings, get_engine, _context, str | CallToolResult)


def _status(settings: Settings, get_engine: GetEngine, metrics: Metrics) -> Callable[..., Any]:
    # no outputSchema: its tables/embeddings are open objects, the text says more
    def respond(request: Status, reply: Any) -> CallToolResult:
        data = to_wire(reply)
        if request.verbose and not _whole_reply.get():  # the CLI's status has no usage: its own process made none
            data["usage"] = metrics.snapshot()
        return _json_result(data)

    return _tool(Status, settings, get_engine, respond, CallToolResult)
