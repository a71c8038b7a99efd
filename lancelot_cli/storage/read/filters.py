"""Row filters: a path prefix, equality tests and list membership, checked against a table's facts
and sent to LanceDB as typed expressions, or as SQL with quoted literals when a list column is tested."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import ColumnNotFoundError, InvalidArgumentError
from lancelot_cli.storage.read.facts import TableFacts


@dataclass(frozen=True)
class RowFilter:
    """Which rows a search may return: a path prefix, equality tests on scalar columns and
    membership tests on list columns (``contains``: rows whose list holds one of the values).

    Values reach LanceDB as typed literals (``lancedb.expr``), or, with a list column (which
    ``lancedb.expr`` cannot test), as SQL literals quoted by ``_sql``; either way a value such as
    ``x' OR '1'='1`` is just a string that matches nothing.
    """

    path_column: str | None = None
    path_prefix: str | None = None
    equals: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    contains: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.path_prefix) or bool(self.equals) or bool(self.contains)


def equal_to(column: str, *values: Any) -> RowFilter:
    """Rows whose ``column`` equals one of ``values`` (values already of the column's type)."""
    return RowFilter(equals=((column, values),))


def build_filter(facts: TableFacts, path_prefix: str | None, filters: Mapping[str, Any] | None) -> RowFilter | None:
    """Validate a path prefix and equality filters against the table; None when there are none.

    Each filter value is coerced to its column's type (so "3" matches an int column), or refused
    with a message naming the column and the table's columns. A list column (front-matter
    ``tags: [a, b]``) matches rows whose list holds the value (any of several values).
    """
    if not path_prefix and not filters:
        return None
    path_col = None
    if path_prefix:
        path_col = facts.source_column
        if path_col is None:
            raise ColumnNotFoundError(
                f"a path prefix needs a source column ({', '.join(facts.source_columns)}); "
                f"table {facts.name!r} has: {', '.join(facts.columns)}"
            )
    import pyarrow as pa

    equals, contains = [], []
    for column, value in (filters or {}).items():
        if column not in facts.types:
            raise ColumnNotFoundError(
                f"cannot filter on {column!r}: table {facts.name!r} has no such column; "
                f"its columns are: {', '.join(facts.columns)}"
            )
        values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        if not values:
            raise InvalidArgumentError(f"filter {column!r} needs at least one value")
        kind = facts.types[column]
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            contains.append((column, tuple(_coerce(column, kind.value_type, v) for v in values)))
        else:
            equals.append((column, tuple(_coerce(column, kind, v) for v in values)))
    return RowFilter(path_col, path_prefix or None, tuple(equals), tuple(contains))


def _coerce(column: str, kind: Any, value: Any) -> Any:
    """A filter value as the column's Arrow type, or a clear error."""
    import pyarrow as pa

    try:
        if pa.types.is_boolean(kind):
            if isinstance(value, str) and value.lower() in {"true", "false"}:
                return value.lower() == "true"
            if isinstance(value, bool):
                return value
            raise ValueError
        if pa.types.is_integer(kind):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if pa.types.is_floating(kind):
            return float(value)
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if isinstance(value, (dict, list)):
                raise ValueError
            return value if isinstance(value, str) else json.dumps(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"filter {column!r}: {value!r} is not a valid {kind} value") from None
    raise InvalidArgumentError(
        f"cannot filter on {column!r}: only text, number and true/false columns can be filtered, and it holds {kind}"
    )


def where_expression(row_filter: RowFilter | None) -> Any:
    """The filter as a ``lancedb.expr`` expression (as SQL text when it tests a list column), or
    None for all rows."""
    if not row_filter:
        return None
    if row_filter.contains:
        return _where_sql(row_filter)
    from lancedb.expr import col, lit

    parts = []
    if row_filter.path_prefix and row_filter.path_column:
        path = col(row_filter.path_column)
        # A prefix as a range of strings: every string that starts with P sorts in [P, P + U+10FFFF).
        parts.append((path >= lit(row_filter.path_prefix)) & (path < lit(row_filter.path_prefix + "\U0010ffff")))
    for column, values in row_filter.equals:
        parts.append(col(column) == lit(values[0]) if len(values) == 1 else col(column).isin(list(values)))
    where = parts[0]
    for part in parts[1:]:
        where = where & part
    return where


def _where_sql(row_filter: RowFilter) -> str:
    """The filter as a SQL predicate. ``lancedb.expr`` has no list membership (``func`` knows no
    ``array_has``), and its ``to_sql`` leaves a quote after a backslash unescaped, so every literal
    here is written by ``_sql``: strings with inner quotes doubled (LanceDB's SQL takes backslashes
    literally), numbers from their own types."""
    parts = []
    if row_filter.path_prefix and row_filter.path_column:
        path = _identifier(row_filter.path_column)
        low, high = _sql(row_filter.path_prefix), _sql(row_filter.path_prefix + "\U0010ffff")
        parts.append(f"{path} >= {low} AND {path} < {high}")
    for column, values in row_filter.equals:
        parts.append(f"{_identifier(column)} IN ({', '.join(map(_sql, values))})")
    for column, values in row_filter.contains:
        parts.append(" OR ".join(f"array_has({_identifier(column)}, {_sql(value)})" for value in values))
    return " AND ".join(f"({part})" for part in parts)


def _identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql(value: Any) -> str:
    """A SQL literal for a value already coerced by ``_coerce``: str, bool, int or finite float."""
    import math

    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(f"filter value {value!r} is not a finite number")
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"  # LanceDB's SQL takes backslashes as they are
