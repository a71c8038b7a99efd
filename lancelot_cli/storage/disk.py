"""A write that fails because of where the database is, said as such.

A full disk, a read-only file system, a folder the user may not write: Lance reports these as text
("No space left on device (os error 28)"), Python as ``OSError`` with an errno; both are
recognised."""

from __future__ import annotations

import errno

# errno -> (what is wrong, what to do)
_PROBLEMS = {
    errno.ENOSPC: ("the disk is full", "free some space, then run again"),
    errno.EDQUOT: ("the disk quota is used up", "free some space, then run again"),
    errno.EROFS: ("the file system is read-only", "give a database folder on a writable disk (--db or LANCEDB_PATH)"),
    errno.EACCES: ("writing there is not allowed", "give a folder you may write, or fix its permissions"),
    errno.EPERM: ("writing there is not allowed", "give a folder you may write, or fix its permissions"),
}
_TEXTS = {
    "No space left on device": errno.ENOSPC,
    "Disk quota exceeded": errno.EDQUOT,
    "Read-only file system": errno.EROFS,
    "Permission denied": errno.EACCES,
}


def problem(exc: BaseException, where: str, *, committed: bool = False) -> str | None:
    """One line for a write into ``where`` that failed for one of the reasons above, else None.
    ``committed``: the failed step came after the run's commit (compacting, folding the indexes),
    so the documents are in and searchable."""
    code = _code(exc)
    if code is None:
        return None
    what, todo = _PROBLEMS[code]
    if committed:
        return (
            f"cannot finish writing the database in {where}: {what}; {todo} (the documents are written "
            f"and searchable; compacting the table and its indexes waits for the next run)"
        )
    return f"cannot write the database in {where}: {what}; {todo} (the table was not changed)"


def is_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the quota) is full."""
    return _code(exc) in (errno.ENOSPC, errno.EDQUOT)


def _code(exc: BaseException) -> int | None:
    code = exc.errno if isinstance(exc, OSError) else None
    if code not in _PROBLEMS:
        code = next((number for text, number in _TEXTS.items() if text in str(exc)), None)
    return code
