"""How many front-matter columns a table may have, and which keys get them.

Each front-matter key becomes a column of the table, and every search pays for every column: one
file with 3,000 keys slowed every search from 7 ms to 2.7 s. So a table has at most
``MAX_META_COLUMNS`` of them. Keys already in the table keep their columns; new keys get the
places left, the keys that more files carry first (then by name, so the choice is the same on
every run), and the other keys are dropped from the rows, each file told which of its keys.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from lancelot_cli.storage.schema import COLUMNS, PATH, VECTOR

MAX_META_COLUMNS = 64
OWN_COLUMNS = frozenset({*COLUMNS, VECTOR})


def meta_keys(names: Iterable[str]) -> set[str]:
    """The front-matter columns among ``names`` (all but the indexer's own)."""
    return {name for name in names if name not in OWN_COLUMNS}


def cap(rows: list[dict[str, Any]], existing: set[str], limit: int = MAX_META_COLUMNS) -> list[tuple[str, str]]:
    """Drop, in place, the front-matter keys of ``rows`` that would take the table past ``limit``
    columns; ``existing`` are the table's front-matter columns now. Returns (path, note) per file
    that lost keys."""
    files: dict[str, set[str]] = {}
    for row in rows:
        files.setdefault(row[PATH], set()).update(meta_keys(row))
    carried = Counter(key for keys in files.values() for key in keys if key not in existing)
    room = max(limit - len(existing), 0)
    dropped = set(sorted(carried, key=lambda key: (-carried[key], key))[room:])
    if not dropped:
        return []
    for row in rows:
        for key in dropped & row.keys():
            del row[key]
    notes = []
    for path, keys in sorted(files.items()):
        lost = sorted(keys & dropped)
        if lost:
            shown = ", ".join(lost[:8]) + (f" and {len(lost) - 8:,} more" if len(lost) > 8 else "")
            notes.append(
                (path, (f"front-matter key(s) not stored, the table has its {limit} front-matter columns: {shown}"))
            )
    return notes
