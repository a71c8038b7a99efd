"""What a table being written keeps besides its rows: index options, descriptions, languages.

The run's index options are field metadata of ``path`` (so a re-run and ``--watch`` use them); the
folder descriptions and the documents' languages are copied to files beside a local table.

A part of the writer (``TableWriter`` in storage/write/table.py inherits it), never used by the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from typing import Any

from lancelot_cli.storage.schema import (
    CODE_KINDS,
    KIND,
    OPTIONS_TAG,
    PATH,
    contents_path,
    describe_path,
    languages_path,
)
from lancelot_cli.storage.write.guard import guard


class TableNotes:
    """The writer's notes on its table; ``_tbl`` is None while the table does not exist yet."""

    db_uri: str
    name: str
    _tbl: Any

    def index_options(self) -> dict[str, Any]:
        """The index options saved with the table (``--exclude``, site detection), {} if none."""
        if self._tbl is None or PATH not in self._tbl.schema.names:
            return {}
        raw = (self._tbl.schema.field(PATH).metadata or {}).get(OPTIONS_TAG.encode())
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def save_index_options(self, options: dict[str, Any]) -> bool:
        """Keep ``options`` with the table (field metadata of ``path``) so that a re-run and
        ``--watch`` use them; one commit, only when they changed (True then)."""
        if self._tbl is None or options == self.index_options():
            return False
        with guard("write", self.db_uri, self.name):
            self._tbl.update_field_metadata({"path": PATH, "metadata": {OPTIONS_TAG: json.dumps(options)}})
        return True

    def save_descriptions(self, descriptions: dict[str, str]) -> None:
        """Keep a copy of the folder descriptions beside the table (``schema.describe_path``), or
        remove it when there are none."""
        _save_beside(describe_path(self.db_uri, self.name), descriptions)

    def save_languages(self, languages: list[str]) -> None:
        """Keep a copy of the documents' languages beside the table (``schema.languages_path``)."""
        _save_beside(languages_path(self.db_uri, self.name), languages)

    def save_contents(self) -> None:
        """Keep beside the table how many of its documents are of each ``CONTENT_KINDS`` kind (the
        ``kind`` column: indexer/code.py, indexer/decisions.py), or remove the copy when none is."""
        counts: dict[str, int] = {}
        if self._tbl is not None and KIND in self._tbl.schema.names:
            where = f"{KIND} IN (" + ", ".join(f"'{kind}'" for kind in CONTENT_KINDS) + ")"
            with guard("read", self.db_uri, self.name):
                rows = self._tbl.count_rows(where)
                found = self._tbl.search().where(where).select([PATH, KIND]).limit(max(rows, 1)).to_arrow()
            documents = set(zip(found.column(PATH).to_pylist(), found.column(KIND).to_pylist(), strict=True))
            for _, kind in documents:
                counts[kind] = counts.get(kind, 0) + 1
        _save_beside(contents_path(self.db_uri, self.name), dict(sorted(counts.items())))


# The kinds of document the server's instructions count (the `kind` column's values).
CONTENT_KINDS = (*sorted(CODE_KINDS), "adr")


def _save_beside(path: str | None, data: dict[str, str] | dict[str, int] | list[str]) -> None:
    """``data`` as JSON at ``path`` (a local table's neighbour), written whole (temporary file, then
    rename), or the file removed when there is nothing to keep; nothing for an object store."""
    if path is None:
        return
    if not data:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        return
    staged = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(staged, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1)
    os.replace(staged, path)
