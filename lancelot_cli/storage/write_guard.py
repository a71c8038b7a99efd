"""What a failed write says (one IndexingError naming the table), and one more try after a full disk.

Every storage error of a write becomes one message: a full or read-only disk, a damaged table,
anything else. A step that finds the disk full is tried once more after the table's older
versions are given up.

Used by the writer only (storage/writer.py and the parts it is made of), never by the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage import damage, disk
from lancelot_cli.storage.schema import is_local

T = TypeVar("T")


def guard(action: str, db_uri: str, table: str):  # type: ignore[no-untyped-def]
    """Turn storage errors into one IndexingError that names the table."""
    from contextlib import contextmanager

    @contextmanager
    def wrapped():  # type: ignore[no-untyped-def]
        try:
            yield
        except IndexingError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            full_or_read_only = disk.problem(exc, db_uri)
            if full_or_read_only:
                raise IndexingError(full_or_read_only) from exc
            if damage.is_damage(exc):
                raise IndexingError(
                    f"could not {action} table {table!r} in {db_uri}: it is damaged "
                    f"({damage.plain(str(exc))}); build it again with `lancelot index SRC DB "
                    f"--rebuild`"
                ) from exc
            detail = " ".join(str(exc).split())
            raise IndexingError(f"could not {action} table {table!r} in {db_uri}: {detail}") from exc

    return wrapped()


def with_room(tbl: Any, db_uri: str, step: Callable[[], T], *, committed: bool = False) -> T:
    """``step()``; when it fails because the disk is full, give up every older version of the
    table ``tbl`` and the files the failed step left, then try it once more (issue 37 item 7: after
    a full disk, the old versions, kept 7 days for readers, and the failed step's files, kept 7
    days as "unverified", held the disk full for every later run, even --rebuild, and deleting
    documents freed nothing). The run holds the writer lock, so no other transaction is in
    progress; a reader still on an older version gets one error and then reads the latest.
    ``committed``: the step comes after the run's commit, which stands (its error says so)."""
    try:
        return step()
    except IndexingError as exc:
        cause = exc.__cause__
        if cause is None or not disk.is_full(cause) or tbl is None or not is_local(db_uri):
            raise
    with contextlib.suppress(Exception):  # best effort: the disk may not even hold a manifest
        tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
    try:
        return step()
    except IndexingError as exc:
        cause = exc.__cause__
        if not committed or cause is None or not disk.is_full(cause):
            raise
        raise IndexingError(disk.problem(cause, db_uri, committed=True) or str(exc)) from cause
