"""What an argument may be, for MCP completions (server/completions.py): table names, path prefixes
(folders, then documents), the columns a filter can test and the values a column holds.

Each reads one column of one table at most (never the text), read-only like every engine call, and
returns at most ``MAX_CHOICES`` values in sorted order plus how many there were.
"""

from __future__ import annotations

from lancelot_cli.engine.ranking import HIDDEN_COLUMNS
from lancelot_cli.storage.read.database import ReadOnlyDatabase, ReadOnlyTable
from lancelot_cli.storage.schema import HEADING, ID, LINE_END, LINE_START, TITLE

MAX_CHOICES = 100  # the MCP spec's cap on completion values
# Columns no one filters on: every row's own value (ids, titles, heading paths, line numbers).
NOT_FILTERS = frozenset({ID, TITLE, HEADING, LINE_START, LINE_END, *HIDDEN_COLUMNS})
MAX_VALUE_CHARS = 200  # a long text column is not a filter key's value list


def _starting(values: set[str], typed: str) -> tuple[list[str], int]:
    folded = typed.casefold()
    found = sorted(v for v in values if v.casefold().startswith(folded))
    return found[:MAX_CHOICES], len(found)


def tables(db: ReadOnlyDatabase, typed: str) -> tuple[list[str], int]:
    return _starting(set(db.table_names()), typed)


def path_prefixes(tbl: ReadOnlyTable, typed: str) -> tuple[list[str], int]:
    """The next level under ``typed``: each folder (with its slash) and each document there, so a
    client can walk down the tree as a shell completes paths."""
    column = tbl.facts.source_column
    if column is None:
        return [], 0
    found: set[str] = set()
    for row in tbl.rows([column]):
        source = str(row.get(column) or "")
        if not source.startswith(typed):
            continue
        cut = source.find("/", len(typed))
        found.add(source if cut < 0 else source[: cut + 1])
    return _starting(found, typed)


def filter_columns(tbl: ReadOnlyTable, text_col: str, typed: str) -> tuple[list[str], int]:
    """Columns a filter can test (text, number, true/false ones), without the text and bookkeeping."""
    plain_types = {"string", "large_string", "bool"}
    columns = {
        name
        for name in tbl.facts.payload
        if name not in NOT_FILTERS
        and name != text_col
        and (str(tbl.facts.types.get(name)) in plain_types or _numeric(tbl.facts.types.get(name)))
    }
    return _starting(columns, typed)


def _numeric(kind: object) -> bool:
    name = str(kind)
    return name.startswith(("int", "uint", "float", "double", "halffloat"))


def column_values(tbl: ReadOnlyTable, column: str, typed: str) -> tuple[list[str], int]:
    """The distinct values ``column`` holds (as text), for a filter on it; none for another column."""
    if column not in filter_columns(tbl, "", column)[0]:
        return [], 0
    values = {_text(row.get(column)) for row in tbl.rows([column]) if row.get(column) is not None}
    return _starting({v for v in values if len(v) <= MAX_VALUE_CHARS}, typed)


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
