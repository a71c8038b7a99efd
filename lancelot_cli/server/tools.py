"""The five read-only tools: their parameters, descriptions and replies, each a thin adapter over ``Engine``.

``register`` adds them to a server (server/app.py ``build_server``). Parameter defaults come from
the settings the server was built with, so the tools are made per server (closures). Their
parameters are camelCase on purpose: they are the wire names the original server's tools have
(../SPEC.md keeps them), and the SDK's ``Field(alias=...)`` does not carry an alias into both the
schema and the call, so the Python names are the wire names.
"""

# No `from __future__ import annotations`: pydantic reads the tool signatures at runtime.
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, WithJsonSchema

from lancelot_cli.engine import Engine
from lancelot_cli.engine.ranking import PER_DOCUMENT
from lancelot_cli.errors import LancelotError
from lancelot_cli.limits import MAX_LIMIT, MAX_PHRASINGS, MIN_BUDGET
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.server import collector, completions, links
from lancelot_cli.server.memory import release_freed
from lancelot_cli.server.metrics import Metrics
from lancelot_cli.server.replies import capped as _capped
from lancelot_cli.server.schemas import SearchReply
from lancelot_cli.settings import Settings
from lancelot_cli.wire import to_json, to_wire

T = TypeVar("T")

Table = Annotated[str, Field(description="Table to use.", max_length=200)]
FilterValue = str | int | float | bool
PathPrefix = Annotated[str | None, Field(description='Only paths starting with this (a folder: "docs/adr/").')]
# Validated as typed; published as a plain object (the anyOf of its values cost 190 characters of tools/list).
Filters = Annotated[
    dict[str, FilterValue | list[FilterValue]] | None,
    WithJsonSchema(
        {
            "type": "object",
            "description": 'Only rows whose columns equal these (any of a list): {"kind": "adr", "tag": ["a", "b"]}.',
        }
    ),
]
# lancedb_query's narrowing is lancedb_search's: said once, there.
SamePathPrefix = Annotated[str | None, Field(description="As in lancedb_search.")]
SamePhrasings = Annotated[
    list[str] | None,
    Field(max_length=MAX_PHRASINGS),
    WithJsonSchema(
        {"type": "array", "items": {"type": "string"}, "maxItems": 6, "description": "As in lancedb_search."}
    ),
]
SameFilters = Annotated[
    dict[str, FilterValue | list[FilterValue]] | None,
    WithJsonSchema({"type": "object", "description": "As in lancedb_search."}),
]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Maximum results.")]
Phrasings = Annotated[list[str] | None, Field(max_length=MAX_PHRASINGS, description="Other phrasings of query.")]
Budget = Annotated[int, Field(ge=MIN_BUDGET, description="Maximum characters of the reply.")]


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
Find passages (read-only): terms, identifiers, topics. lancedb_query: \
the best passages' full text; lancedb_document: a document or the chunks around a hit.
For a question in a person's words, also send queries: 2-4 rewrites in the documents' language \
with their own words (the product's names for features, menus, commands), synonyms, and \
one short sentence the answer might contain, searched as one ranking; foundBy says which found a \
hit (0: query).
Hits: score (higher is better; "distance": lower), matched (share of query words found), \
strength (comparable across queries). note: why searchType differs from the one asked, or \
noGoodMatch (rephrase once or say not found). At most 2 chunks per document (perDocument)."""

QUERY_DESCRIPTION = """\
Context to answer a question (read-only): the best chunks' full text as one Markdown block in rank \
order, within contextBudget characters (the best chunk cut to fit); queries as in lancedb_search, \
which is cheaper to find where something is."""

DOCUMENT_DESCRIPTION = """\
Read one document as Markdown (read-only): source (a lancedb_search hit's path) for all of it, or \
id (a hit's id) with before/after for the chunks around it; page (with source): one PDF page. Cut to \
contextBudget characters; a last line gives the id to go on from."""

STATUS_DESCRIPTION = """\
What can be searched (read-only): per table its rows, languages, full-text index, vectors and, in \
"search", what a search does ("hybrid: works, <model>" or "text only: <why>; <what to do>"). Call it \
when lancedb_search fails or finds nothing (lancedb_version: the server's)."""

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
        release_freed()  # what the call freed goes back to the system (server.memory)
        collector.warmed_up()  # a first call ended: the collector paused for the startup comes back soon


GetEngine = Callable[[], Engine]


def register(
    server: MCPServer, settings: Settings, get_engine: GetEngine, metrics: Metrics, protocol_version: str
) -> None:
    """Add the tools and the usage resource to ``server``."""
    for make, name, title, description, structured in (
        (_search, "lancedb_search", "Search documents", SEARCH_DESCRIPTION, True),
        (_query, "lancedb_query", "Get context for a question", QUERY_DESCRIPTION, False),
        (_document, "lancedb_document", "Read a document", DOCUMENT_DESCRIPTION, False),
        (_status, "lancedb_status", "Database status", STATUS_DESCRIPTION, True),
    ):
        options: dict[str, Any] = {} if structured else {"structured_output": False}
        server.add_tool(
            make(settings, get_engine, metrics),
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


def _search(settings: Settings, get_engine: GetEngine, metrics: Metrics) -> Callable[..., Any]:
    def lancedb_search(
        query: Annotated[str, Field(description='Words, a "phrase" or an identifier.')],
        limit: Limit = settings.default_limit,
        searchType: Annotated[
            Literal[SEARCH_TYPES],  # type: ignore[valid-type]
            Field(
                description="auto: hybrid if vectors can be queried, else text. text: BM25 keywords. "
                "vector: semantic. hybrid: both, fused."
            ),
        ] = "auto",
        table: Table = settings.table,
        textColumn: Annotated[str, Field(description="Text column.")] = settings.text_column,
        vectorColumn: Annotated[str, Field(description="Vector column.")] = settings.vector_column,
        pathPrefix: PathPrefix = None,
        filters: Filters = None,
        perDocument: Annotated[
            int, Field(ge=0, le=MAX_LIMIT, description="Most chunks of one document among the hits; 0: every chunk.")
        ] = PER_DOCUMENT,
        queries: Phrasings = None,
    ) -> Annotated[CallToolResult, SearchReply]:
        reply = _run(
            lambda: get_engine().search(
                query,
                limit=limit,
                search_type=searchType,
                table=table,
                text_column=textColumn,
                vector_column=vectorColumn,
                path_prefix=pathPrefix,
                filters=filters,
                per_document=perDocument,
                queries=queries,
            )
        )
        result = _json_result(reply)
        if not _whole_reply.get():  # each hit's document as a resource link (server/links.py)
            result.content.extend(links.hit_links(reply.hits, reply.table, settings.table))
        return result

    return lancedb_search


def _query(settings: Settings, get_engine: GetEngine, metrics: Metrics) -> Callable[..., Any]:
    def lancedb_query(
        question: Annotated[str, Field(description="The question.")],
        contextBudget: Budget = settings.context_budget,
        warmStart: Annotated[bool, Field(description="An overview instead.")] = False,
        table: Table = settings.table,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Maximum chunks.")] = settings.default_limit,
        pathPrefix: SamePathPrefix = None,
        filters: SameFilters = None,
        queries: SamePhrasings = None,
    ) -> str | CallToolResult:  # CallToolResult: the whole reply (WHOLE_REPLY_KEY)
        reply = _run(
            lambda: get_engine().query(
                question,
                context_budget=contextBudget,
                warm_start=warmStart,
                table=table,
                limit=limit,
                path_prefix=pathPrefix,
                filters=filters,
                queries=queries,
            )
        )
        return _json_result(reply) if _whole_reply.get() else reply.context

    return lancedb_query


def _document(settings: Settings, get_engine: GetEngine, metrics: Metrics) -> Callable[..., Any]:
    def lancedb_document(
        source: Annotated[str | None, Field(description="A path, as hits show it.")] = None,
        id: Annotated[str | None, Field(description="A hit's id: the chunks around it.")] = None,  # noqa: A002
        before: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks before id's.")] = 2,
        after: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Chunks after id's.")] = 2,
        page: Annotated[int | None, Field(ge=1, description="With source: one PDF page.")] = None,
        contextBudget: Budget = settings.context_budget,
        table: Table = settings.table,
    ) -> str | CallToolResult:  # CallToolResult: the whole reply (WHOLE_REPLY_KEY)
        linked = links.parse_doc_uri(source) if source else None
        if linked is not None:  # a hit's resource link: its source, and its table when it names one
            source, table = linked[0], linked[1] or table
        reply = _run(
            lambda: get_engine().document(
                source, chunk_id=id, before=before, after=after, context_budget=contextBudget, table=table, page=page
            )
        )
        return _json_result(reply) if _whole_reply.get() else reply.context

    return lancedb_document


def _status(settings: Settings, get_engine: GetEngine, metrics: Metrics) -> Callable[..., Any]:
    def lancedb_status(
        verbose: Annotated[bool, Field(description="Add columns and usage.")] = False,
    ) -> CallToolResult:  # no outputSchema: its tables/embeddings are open objects, the text says more
        reply = to_wire(_run(lambda: get_engine().status(verbose=verbose)))
        if verbose and not _whole_reply.get():  # the CLI's status has no usage: its own process made no calls
            reply["usage"] = metrics.snapshot()
        return _json_result(reply)

    return lancedb_status
