"""`lancelot index`: folder of .md/.txt/.html -> one LanceDB table. The only writer.

The server never imports this package (tests check it). Reading HTML is the slow part (about
100 ms a page), so large folders are read by a pool of processes, one per core.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer.chunking import CHUNK_CHARS, chunk_text
from lancelot_cli.indexer.sources import HTML, Document, SourceError, read_document, walk
from lancelot_cli.storage.schema import CHUNK, HASH, ID, PATH, TEXT, TITLE, is_local, local_path

# Below this many HTML files a process pool costs more than it saves.
POOL_THRESHOLD = 16

Progress = Callable[[str, int, int], None]  # (relative path, files done, files total)


@dataclass
class IndexReport:
    """What one run did."""

    source: str
    database: str
    table: str
    files: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    deleted: int = 0
    version: int = 0
    committed: bool = False
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "database": self.database, "table": self.table, "files": self.files,
            "chunks": self.chunks, "added": self.added, "updated": self.updated, "deleted": self.deleted,
            "version": self.version, "committed": self.committed, "seconds": round(self.seconds, 3),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        }


def chunk_hash(title: str, text: str) -> str:
    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()[:16]


def rows_for(doc: Document, size: int = CHUNK_CHARS) -> list[dict[str, Any]]:
    """The table rows of one document: ``{id, path, title, chunk, text, hash}``."""
    return [
        {ID: f"{doc.path}#{n}", PATH: doc.path, TITLE: doc.title, CHUNK: n, TEXT: text, HASH: chunk_hash(doc.title, text)}
        for n, text in enumerate(chunk_text(doc.text, size))
    ]


def _read(args: tuple[str, str]) -> Document | SourceError:
    root, rel = args
    try:
        return read_document(Path(root), rel)
    except SourceError as exc:
        return exc


def _read_all(root: Path, paths: list[str], workers: int | None) -> Iterator[tuple[str, Document | SourceError]]:
    heavy = sum(1 for p in paths if Path(p).suffix.lower() in HTML)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    jobs = [(str(root), p) for p in paths]
    if workers > 1 and heavy >= POOL_THRESHOLD:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            try:
                yield from zip(paths, pool.map(_read, jobs, chunksize=4))
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    else:
        for job in jobs:
            yield job[1], _read(job)


def index_folder(
    source: Path | str,
    database: str,
    table: str = "documents",
    *,
    chunk_size: int = CHUNK_CHARS,
    workers: int | None = None,
    progress: Progress | None = None,
) -> IndexReport:
    """Make ``table`` in ``database`` match the documents under ``source``.

    Files that cannot be read or parsed are listed in ``report.skipped``; the run goes on.
    Nothing is written until every file has been read, and then in one commit, so an
    interrupted run leaves the previous table as it was.
    """
    started = time.perf_counter()
    root = Path(source).expanduser()
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise IndexingError(f"source folder {root} {what}; give the folder of documents to index")
    if is_local(database):
        db_path = Path(local_path(database)).expanduser()
        if db_path.exists() and not db_path.is_dir():
            raise IndexingError(f"database path {db_path} is a file; give a folder (it is created if missing)")
        database = str(db_path)
    report = IndexReport(source=str(root), database=database, table=table)
    paths = walk(root)
    rows: list[dict[str, Any]] = []
    for done, (rel, result) in enumerate(_read_all(root, paths, workers), start=1):
        if isinstance(result, SourceError):
            report.skipped.append((rel, str(result)))
        else:
            report.files += 1
            rows.extend(rows_for(result, chunk_size))
        if progress:
            progress(rel, done, len(paths))
    report.chunks = len(rows)
    from lancelot_cli.storage.writer import write_table

    written = write_table(database, table, rows)
    report.added, report.updated, report.deleted = written.added, written.updated, written.deleted
    report.version, report.committed = written.version, written.committed
    report.seconds = time.perf_counter() - started
    return report
