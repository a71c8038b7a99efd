"""Documents and searches as MCP resources: the ``lancelot://doc/{+source}{?table}`` template, the
resource links a search reply carries for its hits' documents (``lancedb_document`` accepts the same
URIs), and ``lancelot://search/{query}{?table,pathPrefix,column,value}``, whose arguments are the ones
MCP completion can complete (the spec completes prompt and resource-template arguments, not a tool's:
server/completions.py).

A link lets a client open or attach a hit's document without a tool call; an agent that only reads
tool text can pass the URI (or the plain source) to ``lancedb_document``. The URI names a document
in the database, never a file: reading it is ``Engine.document``, read-only, cut to the default budget.
``{+source}`` (RFC 6570 reserved expansion) keeps a source's slashes as they are; anything else that
is not safe in a URI is percent-encoded. ``?table=`` is there only for a table other than the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import parse_qs, quote, unquote, urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.types import ResourceLink

from lancelot_cli.engine import Engine
from lancelot_cli.errors import LancelotError
from lancelot_cli.models import Hit
from lancelot_cli.server.replies import capped as _capped
from lancelot_cli.wire import to_json

SCHEME = "lancelot://doc/"
TEMPLATE = SCHEME + "{+source}{?table}"
SEARCH_TEMPLATE = "lancelot://search/{query}{?table,pathPrefix,column,value}"
MIME = "text/markdown"
# How a resource reader is told what to do next after an engine error (``LancelotError.hint``).
HINTS = {"find_source": " (use lancedb_search to find one)", "find_ids": "; use lancedb_search to find ids"}


def doc_uri(source: str, table: str, default_table: str) -> str:
    """The resource URI of ``source`` in ``table`` (``?table=`` only when it is not the default)."""
    uri = SCHEME + quote(source, safe="/")
    return uri if table == default_table else f"{uri}?table={quote(table, safe='')}"


def parse_doc_uri(uri: str) -> tuple[str, str | None] | None:
    """(source, table or None) of a ``lancelot://doc/`` URI; None for anything else."""
    if not uri.startswith(SCHEME):
        return None
    parts = urlsplit(uri)
    tables = parse_qs(parts.query).get("table")
    return unquote(uri[len(SCHEME) :].split("?", 1)[0]), (tables[0] if tables else None)


def hit_links(hits: Sequence[Hit], table: str, default_table: str) -> list[ResourceLink]:
    """One resource link per document among ``hits``, in rank order."""
    seen: dict[str, Hit] = {}
    for hit in hits:
        if hit.source:
            seen.setdefault(hit.source, hit)
    return [
        ResourceLink(
            type="resource_link",
            uri=doc_uri(source, table, default_table),
            name=source,
            title=hit.title,
            mime_type=MIME,
        )
        for source, hit in seen.items()
    ]


def register(server: MCPServer, get_engine: Callable[[], Engine]) -> None:
    """Add the document resource template to ``server``."""

    @server.resource(
        TEMPLATE,
        name="document",
        title="Indexed document",
        mime_type=MIME,
        description="One indexed document as Markdown, read from the database (never from files), "
        "cut to the default context budget; the links in lancedb_search replies use it.",
    )
    def document(source: str, table: str | None = None) -> str:
        try:
            return get_engine().document(source, table=table).context
        except LancelotError as exc:
            raise ResourceError(_capped(exc.worded(HINTS))) from exc

    @server.resource(
        SEARCH_TEMPLATE,
        name="search",
        title="Search results",
        mime_type="application/json",
        description="lancedb_search's JSON reply for query, narrowed by pathPrefix and one filter "
        "(column = value); its arguments can be completed.",
        # Words and folder names, never file paths: nothing here reaches the file system.
        security=ResourceSecurity(exempt_params={"query", "table", "pathPrefix", "column", "value"}),
    )
    def search(
        query: str,
        table: str | None = None,
        pathPrefix: str | None = None,
        column: str | None = None,
        value: str | None = None,
    ) -> str:
        filters = {column: value} if column and value is not None else None
        try:
            return to_json(get_engine().search(query, table=table, path_prefix=pathPrefix, filters=filters))
        except LancelotError as exc:
            raise ResourceError(_capped(exc.worded(HINTS))) from exc
