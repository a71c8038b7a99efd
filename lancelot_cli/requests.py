"""One definition per read request: its fields, defaults, bounds and wire names, said once.

Each operation (search, query, document, status, list) is a frozen dataclass here. The CLI builds
one from its options; the background client sends ``arguments()`` (cli/answer.py, background/client.py);
the MCP tools publish a schema made from its fields and build it back with ``from_arguments``
(server/tools.py); ``ask`` runs it on an engine, in-process or in the server, and ``reply_from_wire``
reads the tool's whole reply back into the model the CLI draws. A field's wire name is its Python
name in camelCase (``wire_rules.wire_name``), its ``Param`` says what the tool publishes. A new option is a
field here, its use in the engine, and the CLI option (and a test).

Standard library only, and nothing heavy at import: the warm CLI path imports this module.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from lancelot_cli.limits import MAX_LIMIT, MAX_PHRASINGS, MIN_BUDGET
from lancelot_cli.models import SearchType
from lancelot_cli.wire_rules import wire_key

if TYPE_CHECKING:
    from lancelot_cli import models
    from lancelot_cli.engine import Engine

R = TypeVar("R")
FilterValue = str | int | float | bool
Filters = dict[str, FilterValue | list[FilterValue]]

# Private `_meta` keys of a tools/call, said once: the CLI's background client sends the first two,
# the server answers an engine error with the third (server/tools.py, server/databases.py).
WHOLE_REPLY_KEY = "lancelot/reply"  # {"lancelot/reply": "whole"}: the reply's --json form as structuredContent
DATABASE_KEY = "lancelot/db"  # the database a call is about
ERROR_KEY = "lancelot/error"  # an engine error's kind, message and hint
WHOLE_REPLY = {WHOLE_REPLY_KEY: "whole"}

PER_DOCUMENT = 2  # engine/ranking.py PER_DOCUMENT, published as the tools' default (a test checks they agree)


@dataclass(frozen=True)
class Param:
    """What a tool publishes about a field besides its type: its description and bounds, and its
    default when that is not the field's own None ("the setting's default") but a value an agent
    should see: a setting's (``setting``, a ``Settings`` attribute) or a fixed one (``shown``)."""

    description: str
    low: int | None = None
    high: int | None = None
    max_items: int | None = None
    max_length: int | None = None
    setting: str | None = None
    shown: Any = None
    schema: Mapping[str, Any] | None = None  # published as this JSON schema (validated as typed)


def param(description: str, default: Any = None, *, required: bool = False, **spec: Any) -> Any:
    """A request field: its default (None: the setting's) and its ``Param``."""
    meta = {"param": Param(description, **spec)}
    return field(metadata=meta) if required else field(default=default, metadata=meta)


def params(request: type[Request[Any]]) -> list[tuple[dataclasses.Field[Any], Param, Any]]:
    """A request type's fields, in order, each with its ``Param`` and resolved type."""
    hints = typing.get_type_hints(request)
    return [(f, f.metadata["param"], hints[f.name]) for f in dataclasses.fields(request)]


def bounds(request: type[Request[Any]], name: str) -> Param:
    """The ``Param`` of one field (for the CLI's option bounds)."""
    return next(f.metadata["param"] for f in dataclasses.fields(request) if f.name == name)


@dataclass(frozen=True)
class Request(Generic[R]):
    """A read request: ``tool`` names the MCP tool that answers it (None: the CLI's own)."""

    tool: ClassVar[str | None] = None

    def arguments(self) -> dict[str, Any]:
        """The tool's arguments: the fields that are set, by wire name."""
        found = ((wire_key(f), getattr(self, f.name)) for f in dataclasses.fields(self))
        return {name: value for name, value in found if value is not None}

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> typing.Self:
        """The request from a tool's arguments (by wire name; a missing one keeps its default)."""
        names = {f.name: wire_key(f) for f in dataclasses.fields(cls)}
        return cls(**{name: arguments[wire] for name, wire in names.items() if wire in arguments})

    def ask(self, engine: Engine) -> R:
        """Run the request on ``engine``."""
        raise NotImplementedError

    def reply_from_wire(self, data: dict[str, Any]) -> R:
        """The tool's whole reply (its ``--json`` form) as the model ``ask`` returns."""
        raise NotImplementedError


@dataclass(frozen=True)
class Search(Request["models.SearchResult"]):
    tool: ClassVar[str | None] = "lancedb_search"

    query: str = param('Words, a "phrase" or an identifier.', required=True)
    limit: int | None = param("Maximum results.", low=1, high=MAX_LIMIT, setting="default_limit")
    search_type: SearchType = param(  # noqa: RUF009 - a field(), with its Param
        "auto: hybrid if vectors can be queried, else text. text: BM25 keywords. vector: semantic. "
        "hybrid: both, fused.",
        "auto",
    )
    table: str | None = param("Table to use.", max_length=200, setting="table")
    text_column: str | None = param("Text column.", setting="text_column")
    vector_column: str | None = param("Vector column.", setting="vector_column")
    path_prefix: str | None = param('Only paths starting with this (a folder: "docs/adr/").')
    # Validated as typed; published as a plain object (the anyOf of its values cost 190 characters of tools/list).
    filters: Filters | None = param(  # noqa: RUF009 - a field(), with its Param
        'Only rows whose columns equal these (any of a list): {"kind": "adr", "tag": ["a", "b"]}.',
        schema={"type": "object"},
    )
    per_document: int | None = param("Chunks per document at most; 0: all.", low=0, high=MAX_LIMIT, shown=PER_DOCUMENT)
    queries: list[str] | None = param("Other phrasings of query.", max_items=MAX_PHRASINGS)  # noqa: RUF009

    def ask(self, engine: Engine) -> models.SearchResult:
        return engine.search(
            self.query,
            limit=self.limit,
            search_type=self.search_type,
            table=self.table,
            text_column=self.text_column,
            vector_column=self.vector_column,
            path_prefix=self.path_prefix,
            filters=self.filters,
            per_document=self.per_document,
            queries=self.queries,
        )

    def reply_from_wire(self, data: dict[str, Any]) -> models.SearchResult:
        from lancelot_cli import models
        from lancelot_cli.wire import from_wire

        return from_wire(models.SearchResult, data, query=self.query)  # the reply echoes the query capped


# lancedb_query's narrowing is lancedb_search's: said once, there.
SAME = "As in lancedb_search."


@dataclass(frozen=True)
class Query(Request["models.ContextBlock"]):
    tool: ClassVar[str | None] = "lancedb_query"

    question: str = param("The question.", required=True)
    context_budget: int | None = param("Reply size in characters.", low=MIN_BUDGET, setting="context_budget")
    warm_start: bool = param("An overview instead.", False)
    table: str | None = param("Table to use.", max_length=200, setting="table")
    limit: int | None = param("Maximum chunks.", low=1, high=MAX_LIMIT, setting="default_limit")
    path_prefix: str | None = param(SAME)
    filters: Filters | None = param(SAME, schema={"type": "object"})  # noqa: RUF009
    queries: list[str] | None = param(  # noqa: RUF009
        SAME, max_items=MAX_PHRASINGS, schema={"type": "array", "items": {"type": "string"}, "maxItems": MAX_PHRASINGS}
    )
    per_document: int | None = param(SAME, low=0, high=MAX_LIMIT, shown=PER_DOCUMENT)

    def ask(self, engine: Engine) -> models.ContextBlock:
        return engine.query(
            self.question,
            context_budget=self.context_budget,
            warm_start=self.warm_start,
            table=self.table,
            limit=self.limit,
            path_prefix=self.path_prefix,
            filters=self.filters,
            queries=self.queries,
            per_document=self.per_document,
        )

    def reply_from_wire(self, data: dict[str, Any]) -> models.ContextBlock:
        from lancelot_cli import models
        from lancelot_cli.wire import from_wire

        return from_wire(models.ContextBlock, data, question=self.question)


@dataclass(frozen=True)
class Read(Request["models.Document"]):
    """A document (``source``), or the chunks around a hit (``id``): lancedb_document, `lancelot show`."""

    tool: ClassVar[str | None] = "lancedb_document"

    source: str | None = param("A path, as hits show it.")
    id: str | None = param("A hit's id: the chunks around it.")
    before: int = param("Chunks before id's.", 2, low=0, high=MAX_LIMIT)
    after: int = param("Chunks after id's.", 2, low=0, high=MAX_LIMIT)
    page: int | None = param("With source: one PDF page.", low=1)
    context_budget: int | None = param("Reply size in characters.", low=MIN_BUDGET, setting="context_budget")
    table: str | None = param("Table to use.", max_length=200, setting="table")

    def ask(self, engine: Engine) -> models.Document:
        return engine.document(
            self.source,
            chunk_id=self.id,
            before=self.before,
            after=self.after,
            context_budget=self.context_budget,
            table=self.table,
            page=self.page,
        )

    def reply_from_wire(self, data: dict[str, Any]) -> models.Document:
        from lancelot_cli import models
        from lancelot_cli.wire import from_wire

        return from_wire(models.Document, data)


@dataclass(frozen=True)
class Status(Request["models.Status"]):
    tool: ClassVar[str | None] = "lancedb_status"

    verbose: bool = param("Add columns and usage.", False)

    def ask(self, engine: Engine) -> models.Status:
        return engine.status(verbose=self.verbose)

    def reply_from_wire(self, data: dict[str, Any]) -> models.Status:
        from lancelot_cli import models
        from lancelot_cli.wire import from_wire

        return from_wire(models.Status, data)


@dataclass(frozen=True)
class Listing(Request["models.DocumentList"]):
    """The indexed documents (`lancelot ls`); no tool lists them (agents search)."""

    path_prefix: str | None = param("Only documents whose path starts with this.")
    table: str | None = param("Table to use.", max_length=200, setting="table")

    def ask(self, engine: Engine) -> models.DocumentList:
        return engine.documents(self.path_prefix, table=self.table)


TOOL_REQUESTS: tuple[type[Request[Any]], ...] = (Search, Query, Read, Status)
