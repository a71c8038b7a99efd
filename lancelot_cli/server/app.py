"""The MCP server: instructions, the read-only tools (server/tools.py), prompts from the database,
one count per call, and a lifespan that loads lancedb in the background.

The engine (and with it lancedb) is created on the first tool call, so ``initialize`` is
answered without waiting for ``import lancedb`` (~1.5 s).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    Prompt,
    PromptMessage,
    TextContent,
    Tool,
)
from pydantic import ValidationError

from lancelot_cli._version import __version__
from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.models import AgentDocument, echo, language_names
from lancelot_cli.server import tools
from lancelot_cli.server.databases import Engines
from lancelot_cli.server.metrics import Metrics
from lancelot_cli.server.process import collector
from lancelot_cli.server.replies import MAX_ERROR_CHARS
from lancelot_cli.server.replies import capped as _capped
from lancelot_cli.server.schemas import argument_problems, inline_defs, slim, unknown_arguments
from lancelot_cli.server.tools import _engine_cause, _engine_error, _whole_reply
from lancelot_cli.settings import Settings
from lancelot_cli.storage.read.database import (
    display_uri,
    quick_contents,
    quick_descriptions,
    quick_languages,
    quick_table_names,
    warm_up,
)
from lancelot_cli.wire import to_json

WARM_UP_DELAY = 0.25  # seconds after the transport starts


def instructions(settings: Settings) -> str:
    """Server instructions: what this server is for and which tables it can read (a cheap listing)."""
    lines = [
        (
            "Lancelot searches the user's own documents (notes, docs, web pages) indexed in a LanceDB "
            "database. All tools are read-only. Use lancedb_search to find passages and exact terms, "
            "lancedb_query to get the best passages' full text as context for an answer (warmStart=true "
            "for an overview), lancedb_document to read a whole document or the chunks around a hit, "
            "lancedb_status when something fails or to see tables and vectors. For a question in the "
            "user's own words, send queries too: 2-4 phrasings with the documents' terms for the "
            "thing asked (names of features, menus, commands), synonyms, and a sentence the answer "
            "might contain."
        ),
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
            lines.extend(_languages(path, tables))
            lines.extend(_contents(path, tables))
            lines.extend(_described(path, tables))
    return " ".join(lines)


def _languages(path: str, tables: list[str]) -> list[str]:
    """What each table's documents are written in, and that searches go best in it: an agent asked in
    English about a Korean manual then writes its phrasings in Korean (issue 38)."""
    found = {table: quick_languages(path, table) for table in tables}
    said = [f"table {table} is in {language_names(codes)}" for table, codes in found.items() if codes]
    if not said:
        return []
    advice = (
        ". Search in a table's first language (the query as the user asked it, and queries written in "
        "that language with the documents' own terms)"
    )
    if any(len(codes) > 1 for codes in found.values()):
        # issue 51: each page is analysed in its own language, so a page is found by words of its language
        advice += "; in a table of several languages, also a query in each of its other languages"
    return ["Languages: " + "; ".join(said) + advice + "."]


def _contents(path: str, tables: list[str]) -> list[str]:
    """What besides prose each table holds: a project's code and decision records, and the filters
    that reach them (issue 47), so an agent asks for `kind: adr` or `kind: code` when that is the need."""
    lines = []
    for table in tables:
        counts = quick_contents(path, table)
        parts = []
        if counts.get("code") or counts.get("test"):
            code, tests, migrations = (counts.get(kind, 0) for kind in ("code", "test", "migration"))
            parts.append(
                f"source code, one chunk per function or class ({code} files: filter kind: code; "
                f"{tests} of tests: kind: test; {migrations} migrations: kind: migration)"
            )
        if counts.get("adr"):
            parts.append(f"{counts['adr']} architecture decision records (filter kind: adr; columns status, date)")
        if parts:
            lines.append(f"Table {table} also holds " + " and ".join(parts) + ".")
    return lines


MAX_DESCRIBED_CHARS = 2000  # of folder descriptions in the instructions: they are read in every session


def _described(path: str, tables: list[str]) -> list[str]:
    """What each table's folders hold, from the copy `lancelot index` keeps of ``.lancelotdescribe``."""
    lines: list[str] = []
    used = 0
    for table in tables:
        described = quick_descriptions(path, table)
        if not described:
            continue
        line = f"What table {table} holds: " + "; ".join(f"{key} {text}" for key, text in described.items()) + "."
        if used + len(line) > MAX_DESCRIBED_CHARS:
            lines.append("More folder descriptions come with search hits (folders).")
            break
        lines.append(line)
        used += len(line)
    return lines


def _reply_chars(reply: Any) -> int:
    if isinstance(reply, str):
        return len(reply)
    if isinstance(reply, CallToolResult):
        return sum(len(getattr(part, "text", "")) for part in reply.content)
    return 0


def _warm(server: MCPServer, stopped: threading.Event) -> None:
    """Import lancedb, then start loading the local embedding model of the default table's vectors,
    if they were made by one, so a first vector search does not wait for either (a text search never does).
    Nothing is opened once the server has stopped (``stopped``): a server built per request (Lambda,
    tests) must not leave a thread reading a database after it is gone."""
    try:
        warm_up()
        if stopped.is_set():
            return
        get_engine = getattr(server, "_get_engine", None)
        try:
            if get_engine is not None:
                get_engine().warm_embeddings()
        except Exception:  # noqa: BLE001 - no database or table yet: the first call says so
            pass
    finally:
        collector.warmed_up()  # the garbage collector paused for the startup comes back (server/process/collector.py)


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

    def __init__(self, engines: Engines, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._engines = engines
        self._get_engine = engines.get
        self.metrics = metrics
        self._listed: list[Tool] | None = None

    async def list_tools(self) -> list[Tool]:
        """The tools with slimmed schemas (``schemas.slim``): the list is read in every conversation.
        Arguments are still validated by the SDK's full pydantic models."""
        if self._listed is None:
            self._listed = [
                tool.model_copy(
                    update={
                        "input_schema": slim(tool.input_schema),
                        "output_schema": slim(inline_defs(tool.output_schema)) if tool.output_schema else None,
                    }
                )
                for tool in await super().list_tools()
            ]
        return self._listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Every call is counted, the ones whose arguments are rejected too."""
        started = time.perf_counter()
        error: str | None = None
        reply_chars = 0
        whole = _whole_reply.set(tools.asks_whole(context))
        database = self._engines.ask(context)
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
            self._engines.done(database)
            _whole_reply.reset(whole)
            self.metrics.record(name, time.perf_counter() - started, len(to_json(arguments)), reply_chars, error)

    async def list_prompts(self) -> list[Prompt]:
        found = await anyio.to_thread.run_sync(self._agents)
        return [
            Prompt(
                name=a.name,
                title=a.title,
                description=f"Instructions from {a.source} (read-only, from the Lancelot database)",
            )
            for a in found
        ]

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """The SDK's, with its errors bounded: "Unknown resource: <uri>" came back with a 1 MB URI
        whole, in the message and again in the error's data (issue 37). Said as the SDK says it
        (invalid params for an unknown resource), with the URI cut."""
        try:
            return await super().read_resource(uri, context)
        except ResourceError as exc:
            if len(str(exc)) <= MAX_ERROR_CHARS and len(str(uri)) <= MAX_ERROR_CHARS:
                raise
            code = INVALID_PARAMS if isinstance(exc, ResourceNotFoundError) else INTERNAL_ERROR
            raise MCPError(code=code, message=_capped(str(exc)), data={"uri": echo(str(uri), 200)}) from None

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        found = {a.name: a for a in await anyio.to_thread.run_sync(self._agents)}
        if name not in found:  # every prompt is a document: none is registered in code
            raise MCPError(
                code=INVALID_PARAMS,
                message=_capped(
                    f"unknown prompt {echo(name, 80)!r}; prompts here: {', '.join(sorted(found)) or 'none'}"
                ),
            )
        text = await anyio.to_thread.run_sync(lambda: self._get_engine().agent_text(found[name].source))
        return GetPromptResult(
            description=found[name].title,
            messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
        )

    def _agents(self) -> list[AgentDocument]:
        try:
            return self._get_engine().agent_documents()
        except LancelotError:  # no database yet: no prompts, the tools explain
            return []


def build_server(
    settings: Settings,
    engine: Engine | None = None,
    *,
    protocol_version: str | None = None,
    metrics: Metrics | None = None,
    any_database: bool = False,
    on_databases: Callable[[list[str]], None] | None = None,
) -> MCPServer:
    """The MCP server with the read-only tools over ``engine`` (built on first use when None).
    ``any_database``: a call may name another database (server/databases.py; `serve --socket` only),
    ``on_databases`` hears which are open."""
    from mcp_types.version import LATEST_PROTOCOL_VERSION

    engines = Engines(settings, engine, any_database=any_database, on_change=on_databases)
    metrics = metrics or Metrics()
    server = LancelotServer(
        engines,
        metrics,
        name="lancelot",
        title="Lancelot",
        description="Read-only search over your own documents in LanceDB",
        version=__version__,
        instructions=instructions(settings),
        log_level="WARNING" if settings.log_level_number > 10 else "DEBUG",
        lifespan=_lifespan,
    )
    tools.register(server, settings, engines.get, metrics, protocol_version or LATEST_PROTOCOL_VERSION)
    return server
