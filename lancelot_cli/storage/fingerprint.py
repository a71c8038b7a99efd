"""A cheap fingerprint of a local table's files, taken without lancedb.

The indexer's ledger (indexer/ledger.py) records it after a run, and a later run that finds it
unchanged knows the table is exactly as that run left it (no commit since, no file missing, cut
short or rewritten).

Every commit writes a new manifest under ``_versions/``, so a change of the table shows up there;
a deleted or truncated data, deletion or index file (the damage storage/damage.py reads for)
shows up as a missing name or another size or mtime. ``_transactions/`` is left out: no read
uses it. Stat calls only (about 1 ms per 1,000 files), nothing is read.
"""

from __future__ import annotations

import hashlib
import os

from lancelot_cli.storage.schema import local_path

SKIPPED = {"_transactions"}


def table_fingerprint(db_uri: str, table: str) -> str | None:
    """A digest of the names, sizes and mtimes of the table's files; None when the table's folder
    cannot be listed (no table, or not a local one)."""
    root = os.path.join(local_path(db_uri), f"{table}.lance")
    digest = hashlib.sha256()
    pending = [("", root)]
    try:
        while pending:
            here, folder = pending.pop()
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            for entry in entries:
                rel = f"{here}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    if rel.lstrip("/") not in SKIPPED:
                        pending.append((rel, entry.path))
                    continue
                info = entry.stat(follow_symlinks=False)
                digest.update(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    except OSError:
        return None
    return digest.hexdigest()
