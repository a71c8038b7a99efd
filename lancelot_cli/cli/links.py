"""Where a hit's file is on this machine: the folder each local table was indexed from, and the
``file://…#Lline`` link a terminal opens.

A table records paths relative to the folder it was indexed from, not the folder itself, so
`lancelot index` notes the folder in ``<config dir>/folders.json`` (``{database: {table:
folder}}``, local databases only). A link is made only for a file that is inside that folder and
still there; its URI is percent-encoded (``Path.as_uri``), so a file name cannot carry an escape
sequence into the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from lancelot_cli.settings import Settings, private_folder
from lancelot_cli.storage.schema import is_local, local_path

FOLDERS_FILE = "folders.json"


def _database_key(db_uri: str) -> str:
    return os.path.abspath(os.path.expanduser(local_path(db_uri)))


def _read(config_dir: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((config_dir / FOLDERS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(settings: Settings, folder: str | Path) -> None:
    """Note that ``settings``' table was indexed from ``folder`` (a local database only); a file
    that cannot be written costs the links, never the index run."""
    if not settings.db_uri or not is_local(settings.db_uri):
        return
    known = _read(settings.config_dir)
    tables = known.get(_database_key(settings.db_uri))
    tables = dict(tables) if isinstance(tables, dict) else {}
    tables[settings.table] = str(Path(folder).expanduser().resolve())
    known[_database_key(settings.db_uri)] = tables
    with contextlib.suppress(OSError):
        private_folder(settings.config_dir)
        tmp = settings.config_dir / (FOLDERS_FILE + ".tmp")
        tmp.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, settings.config_dir / FOLDERS_FILE)


def folder_of(settings: Settings, table: str) -> Path | None:
    """The folder ``table`` of the settings' database was last indexed from here, if known."""
    if not settings.db_uri or not is_local(settings.db_uri):
        return None
    folder = _read(settings.config_dir).get(_database_key(settings.db_uri), {})
    found = folder.get(table) if isinstance(folder, dict) else None
    return Path(found) if isinstance(found, str) else None


def file_link(folder: Path, source: str, line: int | None) -> str | None:
    """``file:///abs/path#L42`` for ``source`` under ``folder``; None when it leads outside the
    folder or is no file there (any more)."""
    try:
        root = folder.resolve()
        target = (root / source).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return None
    except (OSError, RuntimeError, ValueError):
        return None
    return target.as_uri() + (f"#L{line}" if line else "")
