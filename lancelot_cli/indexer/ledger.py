"""What the last run left, kept beside a local table so that a re-run with nothing to do answers
from the folder's stat calls alone, without importing lancedb or opening the table.

The ledger is a JSON file in the database folder (``.lancelot-index-<table>.state.json``, written
whole and renamed into place at the end of every run that succeeds, under the writer lock). It
records the table's file fingerprint (storage/fingerprint.py) and what the run knew of the
table then: its version and rows, the options saved with it, the model of its vectors and
whether every row has one, and each indexed file's (size, mtime_ns, content digest). A later
run trusts it only while the fingerprint is the same (no commit since, no file of the table
missing or changed: then a damaged table still takes the slow path, which says so) and the
code's table layout is the same (columns, full-text options). Object stores keep no ledger.

When is a file unchanged? When its size and mtime_ns are the ones recorded, unless the mtime was
too close to the moment the recording run began its walk (``as_of_ns``): a file written within
``RACY_NS`` before that moment may be written again, keeping its size, within the same tick of a
coarse file-system clock (FAT's 2 s, 1 s on some network shares, a few ms on ext4) and so keep
its mtime too. Such a "racy" file is hashed and its digest compared with the recorded one; once
a run has verified every racy file, its own start becomes the new ``as_of_ns``. (Git's racy-git
rule, with the walk's start for the index file's mtime; it assumes the file system's clock is
within ``RACY_NS`` of this machine's.) Without a ledger (the first run after an
upgrade, or a copied database) every unchanged-looking file is hashed once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.indexer.sources import content_digest
from lancelot_cli.storage.analyzer import FTS_OPTIONS
from lancelot_cli.storage.fingerprint import table_fingerprint
from lancelot_cli.storage.schema import COLUMNS, FIELD_INDEX_NAMES, FTS_INDEX_NAME, local_path

FORMAT = 1
# A file whose mtime is this close to (or after) the start of the walk that recorded it is hashed
# on the next run even when its size and mtime are the same (the module doc says why).
RACY_NS = 2_000_000_000
# The table layout this code writes: a ledger made for another one is not trusted (the slow path
# adds missing columns and rebuilds outdated full-text indexes).
LAYOUT = json.dumps([FORMAT, COLUMNS, FTS_INDEX_NAME, FIELD_INDEX_NAMES, FTS_OPTIONS], sort_keys=True, default=str)

State = dict[str, tuple[int | None, int | None, str | None]]  # path -> (size, mtime_ns, digest)
Stat = tuple[int | None, int | None]


@dataclass
class Ledger:
    fingerprint: str  # of the table's files after the run (storage/fingerprint.py)
    version: int
    chunks: int
    options: dict[str, Any]  # the index options saved with the table ({} if none)
    stored_model: str | None  # the model of the table's vectors
    complete_model: str | None  # every row has a vector of this model
    max_file_size: int
    as_of_ns: int  # the start of the walk whose file states this records
    files: dict[str, list[Any]] = field(default_factory=dict)  # path -> [size, mtime_ns, digest]
    unread: dict[str, list[Any]] = field(default_factory=dict)  # path -> [size, mtime_ns, why it was skipped]
    current: bool = False  # (not saved) the table is as this ledger says

    def state(self) -> State:
        return {rel: (size, mtime, digest) for rel, (size, mtime, digest) in self.files.items()}


def path_for(database: str, table: str) -> str:
    return os.path.join(local_path(database), f".lancelot-index-{table}.state.json")


def load(database: str, table: str) -> Ledger | None:
    """The ledger of a local table, or None when there is none or it was made by other code;
    ``current`` says whether the table is still as it says."""
    try:
        with open(path_for(database, table), encoding="utf-8") as handle:
            raw = json.load(handle)
        if raw.pop("layout", None) != LAYOUT:
            return None
        ledger = Ledger(**raw)
    except (OSError, ValueError, TypeError):
        return None
    ledger.current = ledger.fingerprint == table_fingerprint(database, table)
    return ledger


def save(database: str, table: str, ledger: Ledger) -> None:
    """Write ``ledger`` whole (renamed into place); a failure only costs the next run its shortcut."""
    path = path_for(database, table)
    fingerprint = table_fingerprint(database, table)
    if fingerprint is None:
        remove(database, table)
        return
    data = {**vars(ledger), "fingerprint": fingerprint, "layout": LAYOUT}  # (vars: no deep copy of the files)
    data.pop("current")
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(temporary, path)
    except OSError:
        remove(database, table)
        with _quiet():
            os.unlink(temporary)


def remove(database: str, table: str) -> None:
    with _quiet():
        os.unlink(path_for(database, table))


def _quiet() -> Any:
    from contextlib import suppress

    return suppress(OSError)


def racy(mtime_ns: int | None, as_of_ns: int) -> bool:
    """Whether a file recorded with ``mtime_ns`` by a walk that began at ``as_of_ns`` could have
    changed since without changing its mtime (the module doc)."""
    return mtime_ns is None or mtime_ns + RACY_NS > as_of_ns


def digest(path: Path) -> str | None:
    """The content digest the table records for the file (``sources.content_digest``); None when
    the file cannot be read (the read that follows says why)."""
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return None
