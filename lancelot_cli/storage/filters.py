"""Row filters: a path prefix and equality tests, checked against a table's facts and sent to
LanceDB as typed expressions (never as SQL text)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import ColumnNotFoundError, InvalidArgumentError
from lancelot_cli.storage.facts import TableFacts


@dataclass(frozen=True)
class RowFilter:
    """Which rows a search may return: a path prefix and equality tests on scalar columns.

    Values reach LanceDB only as typed literals (``lancedb.expr``), never as SQL text, so a value
    such as ``x' OR '1'='1`` is just a string that matches nothing.
    """

    path_column: str | None = None
    path_prefix: str | None = None
    equals: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.path_prefix) or bool(self.equals)


def equal_to(column: str, *values: Any) -> RowFilter:
    """Rows whose ``column`` equals one of ``values`` (values already of the column's type)."""
    return RowFilter(equals=((column, values),))


def build_filter(facts: TableFacts, path_prefix: str | None, filters: Mapping[str, Any] | None) -> RowFilter | None:
    """Validate a path prefix and equality filters against the table; None when there are none.

    Each filter value is coerced to its column's type (so "3" matches an int column), or refused
    with a message naming the column and the table's columns.
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
    equals = []
    for column, value in (filters or {}).items():
        if column not in facts.types:
            raise ColumnNotFoundError(
                f"cannot filter on {column!r}: table {facts.name!r} has no such column; "
                f"its columns are: {', '.join(facts.columns)}"
            )
        values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        if not values:
            raise InvalidArgumentError(f"filter {column!r} needs at least one value")
        equals.append((column, tuple(_coerce(column, facts.types[column], v) for v in values)))
    return RowFilter(path_col, path_prefix or None, tuple(equals))


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
    """The filter as a ``lancedb.expr`` expression, or None for all rows."""
    if not row_filter:
        return None
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
