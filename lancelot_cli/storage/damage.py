"""Telling a damaged table from a bad call: lancedb's errors for missing, truncated or corrupt files,
said in one line without Lance's Rust source paths, with what to do about it.

A table whose data file was truncated, whose ``data/`` or ``_indices/`` folder was deleted, or whose
manifest is cut short opens (or even counts its rows) from the manifest alone and fails only when a
query reads the files. ``check`` reads a little of every part a search reads (one column of every
data file: the first of the schema, usually a short one; and each full-text index, with a one-row
query), so `status` can say so; ``said`` turns such a failure during a call into a ``TableDamagedError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lancelot_cli.errors import LancelotError, TableDamagedError

# What Lance says when a file is missing or cut short; anything else is not taken for damage.
DAMAGE = (
    "Not found",
    "failed to fill whole buffer",
    "file size is too small",
    "LocalFileSystem error",
    "unexpected end of file",
    "Corrupt",
    "corrupt",
    "Invalid protobuf",
    "invalid protobuf",
    "No such file",
)
# ", /rustc/<hash>/library/core/src/ops/function.rs:250:5" and ", /root/.cargo/registry/.../local.rs:273:40"
RUST_PATH = re.compile(r",?\s*/\S*?\.rs:\d+:\d+")
PREFIXES = re.compile(r"\b(?:lance error|LanceError\(\w+\)|Generic \S+ error|Wrapped error):\s*")


def is_damage(exc: BaseException) -> bool:
    """True for Lance's errors about missing or unreadable table files."""
    return not isinstance(exc, LancelotError) and any(marker in str(exc) for marker in DAMAGE)


def plain(text: str) -> str:
    """Lance's error text without Rust source paths and error-kind prefixes, on one line."""
    text = PREFIXES.sub("", RUST_PATH.sub("", text))
    return " ".join(text.split()).strip(" ,:") or "unreadable files"


def damaged(name: str, exc: BaseException) -> TableDamagedError:
    reason = plain(str(exc))
    if len(reason) > 300:
        reason = reason[:300] + "…"
    return TableDamagedError(
        f"table {name!r} is damaged ({reason}); build it again with `lancelot index SRC DB --rebuild`"
    )


@contextmanager
def said(name: str) -> Iterator[None]:
    """Run a read of table ``name``; a failure that is damage becomes one plain ``TableDamagedError``."""
    try:
        yield
    except Exception as exc:
        if is_damage(exc):
            raise damaged(name, exc) from exc
        raise


def check(name: str, table: Any, first_column: str, fts_columns: list[str]) -> None:
    """Read a little of each part of ``table`` a search would read; raise ``TableDamagedError`` if one fails.
    A filter on ``first_column`` reads that column in every data file."""
    quoted = "`" + first_column.replace("`", "``") + "`"
    with said(name):
        table.count_rows(f"{quoted} IS NOT NULL")
        for column in fts_columns:
            table.search("lancelot", query_type="fts", fts_columns=column).limit(1).select([]).to_list()
