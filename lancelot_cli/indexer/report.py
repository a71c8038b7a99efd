"""What one `lancelot index` run did: `IndexReport`, and its JSON form (the summary `--json` prints)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IndexReport:
    """What one run did."""

    source: str
    database: str
    table: str
    files: int = 0  # documents of the folder now in the table
    read: int = 0  # of them, read this run (new or changed)
    chunks: int = 0  # rows of the table after the run
    added: int = 0
    updated: int = 0
    deleted: int = 0
    version: int = 0
    committed: bool = False
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    model: str | None = None
    embedded: int = 0
    truncated: int = 0
    without_vectors: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)  # files indexed, with something to know
    site: str | None = None  # "Sphinx site found: left out ..." (see indexer.sites)
    code: str | None = None  # what the run did with source code, or left out and why (scanning.Scan.code_note)
    indexes_built: list[str] = field(default_factory=list)  # full-text indexes an earlier version's table got anew
    languages: list[str] = field(default_factory=list)  # what the documents are written in (indexer/languages.py)
    languages_found: bool = False  # read off the documents in this run (a new table, --rebuild, an older table)
    text_seconds: float | None = None  # from the start until the text was committed (vectors follow)
    vectors_hint: str | None = None  # how to get vectors, when a plain run found no local model (indexer.run)
    chunk_size_note: str | None = None  # a --chunk-size other than the table's waits for --rebuild (saved_options)
    text_read_again: bool = False  # every file read again: an older version read the table's text (saved_options)
    optimized: bool = False  # optimize() ran (storage.write.policy.OptimizePolicy); not in as_dict
    # Not in as_dict either: files hashed to be sure although size and mtime matched (indexer/ledger.py),
    # and whether the run was answered from the ledger without opening the table.
    hashed: int = 0
    from_ledger: bool = False
    need_extra: list[str] = field(default_factory=list)  # files not read: their reader's extra is missing
    extra_hint: str | None = None  # what to install for them (one line)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "database": self.database,
            "table": self.table,
            "files": self.files,
            "read": self.read,
            "chunks": self.chunks,
            "added": self.added,
            "updated": self.updated,
            "deleted": self.deleted,
            "version": self.version,
            "committed": self.committed,
            "seconds": round(self.seconds, 3),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "embeddingModel": self.model,
            "embedded": self.embedded,
            "truncatedForEmbedding": self.truncated,
            "withoutVectors": self.without_vectors,
            "notes": [{"path": p, "note": n} for p, n in self.notes],
            "site": self.site,
            "code": self.code,
            "textSeconds": None if self.text_seconds is None else round(self.text_seconds, 3),
            "vectorsHint": self.vectors_hint,
            "chunkSizeNote": self.chunk_size_note,
            "textReadAgain": self.text_read_again,
            "fullTextIndexesBuilt": list(self.indexes_built),
            "languages": list(self.languages),
            "needExtra": {"paths": list(self.need_extra), "hint": self.extra_hint} if self.need_extra else None,
        }
