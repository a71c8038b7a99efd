"""`lancelot index SRC --tag NAME`: give the version a run committed a name that readers can be
pinned to (``LANCELOT_TABLE_VERSION``, `serve --table-version`; storage/read/pins.py).

The tag is made through LanceDB's public tags API once the write has finished (the table is opened
again, ``tags.create``), on the version the run reported, so a run started meanwhile is not what
gets the name. A tag that exists is moved (``tags.update``): `index --tag live` in CI, with replicas
pinned to ``live``, switches them to the new version at their next look (within
LANCELOT_READ_CONSISTENCY). Names are checked before any file is read: letters, digits, ``.``,
``-`` and ``_``, not digits only (that is a version number to a reader), within what Lance accepts.

A tagged version keeps its files: LanceDB (0.40) then gives up no version older than the oldest
tag when `index` prunes old versions (it refuses the whole cleanup), so tags that are no longer
served should be deleted (docs: the recipe). Used by `lancelot index` only, never by the server.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

from lancelot_cli.errors import ConfigError, IndexingError
from lancelot_cli.storage.read.database import display_uri

MAX_LENGTH = 100
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Tagged:
    """What ``tag`` did: ``name`` now names ``version``; ``moved_from`` is the version it named before."""

    name: str
    version: int
    moved_from: int | None = None
    older: tuple[tuple[str, int], ...] = ()  # the table's other tags on older versions: (name, version)

    def line(self, table: str) -> str:
        """One line for the person who ran `index` (and a note while other tags hold old versions)."""
        moved = f" (moved from version {self.moved_from})" if self.moved_from not in (None, self.version) else ""
        done = f"Tagged version {self.version} of table {table!r} as {self.name!r}{moved}."
        if not self.older:
            return done
        held = ", ".join(f"{name} (version {number})" for name, number in self.older)
        return (
            f"{done} Note: tags {held} keep old versions, and no version older than a tag is given up "
            f"while it stays; delete the tags no server reads any more."
        )

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "movedFrom": self.moved_from}


def check_name(name: str) -> str:
    """``name`` when it can name a version; else a one-line ``ConfigError`` saying what can."""
    clean = name.strip()
    why = None
    if not _NAME.fullmatch(clean):
        why = "use letters, digits, '.', '-' and '_', starting with a letter, digit, '-' or '_'"
    elif clean.isdigit():
        why = "a name of digits only would be read as a version number; add a letter (v7, release-7)"
    elif ".." in clean or clean.endswith((".", ".lock")):
        why = "it must not hold '..' or end with '.' or '.lock'"
    elif len(clean) > MAX_LENGTH:
        why = f"use at most {MAX_LENGTH} characters"
    if why:
        raise ConfigError(f"--tag {name!r} cannot name a version: {why}")
    return clean


def tag(db_uri: str, table: str, name: str, version: int, storage_options: dict[str, str] | None = None) -> Tagged:
    """Make ``name`` name ``version`` of ``table``: create it, or move it when it names another one."""
    import lancedb

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            handle = lancedb.connect(db_uri, storage_options=storage_options or None).open_table(table)
            tags = {str(k): int(v["version"]) for k, v in handle.tags.list().items()}
            before = tags.get(name)
            if before is None:
                handle.tags.create(name, version)
            elif before != version:
                handle.tags.update(name, version)
            older = tuple(sorted(((k, v) for k, v in tags.items() if k != name and v < version), key=lambda t: t[1]))
    except (OSError, RuntimeError, ValueError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise IndexingError(
            f"the table was written (version {version}) but tagging it {name!r} in {display_uri(db_uri)} failed: "
            f"{detail}; run `lancelot index` with --tag again"
        ) from None
    return Tagged(name, version, before, older)
