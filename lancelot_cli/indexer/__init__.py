"""`lancelot index`: folder of .md/.txt/.html -> one LanceDB table. The only writer.

The server never imports this package (tests check it). Reading HTML is the slow part (about
100 ms a page), so large folders are read by a pool of processes, one per core.
"""

from __future__ import annotations

import signal
import time
from contextlib import closing
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer.chunking import CHUNK_CHARS
from lancelot_cli.indexer.embedding import Embed, Filled, fill_vectors
from lancelot_cli.indexer.html import common_suffix, quick_title, strip_suffix
from lancelot_cli.indexer.reading import MissingModule, read_all
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.rows import chunk_hash, rows_for
from lancelot_cli.indexer.signals import (
    Interrupted, Terminated, deferred_signals, owns_signals, signal_name, sigterm_raises,
)
from lancelot_cli.indexer.scanning import HTML, nothing_to_index, scan
from lancelot_cli.indexer.sources import MAX_FILE_BYTES, NothingToIndex, SourceError, nothing_readable
from lancelot_cli.storage.schema import HASH, VECTOR, is_local, local_path

# The index options a table has when none were saved with it.
DEFAULT_OPTIONS = {"exclude": [], "siteDetection": True}

Progress = Callable[[str, int, int], None]  # (relative path, files done, files total)

__all__ = ["DEFAULT_OPTIONS", "Embed", "IndexReport", "Progress", "chunk_hash", "index_folder", "normalise_extensions",
           "rows_for"]


def normalise_extensions(extensions: Iterable[str]) -> frozenset[str]:
    """"py, .TS" style lists -> {".py", ".ts"}; several values or comma-separated ones."""
    found = set()
    for value in extensions:
        for part in str(value).split(","):
            part = part.strip().lower()
            if part:
                found.add(part if part.startswith(".") else f".{part}")
    return frozenset(found)


def _title_suffix(root: Path, paths: list[str]) -> str | None:
    """The title suffix nearly every HTML page of the folder repeats ("— Django 4.2 documentation"),
    from all pages, not only the ones read this run, so that titles stay the same between runs."""
    return common_suffix(quick_title(str(root / rel)) for rel in paths if Path(rel).suffix.lower() in HTML)


def index_folder(
    source: Path | str,
    database: str,
    table: str = "documents",
    *,
    chunk_size: int = CHUNK_CHARS,
    workers: int | None = None,
    progress: Progress | None = None,
    embed: Embed | None = None,
    model: str | None = None,
    on_embed: Callable[[int, int], None] | None = None,
    rebuild: bool = False,
    extensions: Iterable[str] = (),
    max_file_size: int = MAX_FILE_BYTES,
    storage_options: dict[str, str] | None = None,
    exclude: Iterable[str] | None = None,
    site_detection: bool | None = None,
) -> IndexReport:
    """Make ``table`` in ``database`` match the documents under ``source``.

    Only files whose size or modification time differ from what the table recorded are read
    (all of them with ``rebuild``, or when ``--embed`` must fill in or replace vectors); rows of
    deleted files are removed; a renamed file is a removal plus an addition whose vectors are
    reused by content hash. Files that cannot be read or parsed are listed in ``report.skipped``
    and keep their previous rows; the run goes on. Nothing is written until every changed file
    has been read, and then in one commit, so an interrupted or failed run leaves the previous
    table as it was. With ``embed``, that commit holds the text (and the vectors unchanged chunks
    had); the missing vectors follow, committed in steps (``embedding.fill_vectors``), and a
    run stopped there keeps a working text table and the vectors made so far (the next run
    embeds the rest). One writer at a time: a second run on the same table refuses.
    Changing ``chunk_size`` applies to files read from then on: pass ``rebuild`` to re-chunk all.
    ``extensions`` (".py", "ts", ...) adds source files, indexed as overlapping windows of lines;
    files over ``max_file_size`` bytes are skipped and reported. A file that cannot be read
    because a Python module is missing fails the run (``IndexingError`` naming what to install).
    Ctrl-C and SIGTERM stop the run at once (KeyboardInterrupt, ``Interrupted`` with exit code
    143; during the commit, after it: see ``signals``), and the HTML workers with it.
    ``exclude`` (gitignore-style patterns, besides the folder's ``.lancelotignore``) and
    ``site_detection`` (keep a documentation site's rendered pages only) are saved with the
    table; None uses what the table saved.
    """
    owns = owns_signals()
    with sigterm_raises(owns):
        return _index(source, database, table, chunk_size, workers, progress, embed, model, on_embed, rebuild,
                      extensions, max_file_size, storage_options, owns, exclude, site_detection)


def _cap_front_matter(writer: Any, rows: list[dict[str, Any]], full: bool, report: IndexReport) -> None:
    """Keep the table within ``MAX_META_COLUMNS`` front-matter columns (notes name the keys dropped);
    a full run (``--rebuild``) also drops the columns no file carries any more."""
    from lancelot_cli.indexer.meta_columns import cap, meta_keys

    report.notes.extend(cap(rows, set() if full else writer.front_matter_columns()))
    if full and writer.exists:
        writer.drop_front_matter_columns({key for row in rows for key in meta_keys(row)})


def _index(source: Path | str, database: str, table: str, chunk_size: int, workers: int | None,
           progress: Progress | None, embed: Embed | None, model: str | None,
           on_embed: Callable[[int, int], None] | None, rebuild: bool, extensions: Iterable[str],
           max_file_size: int, storage_options: dict[str, str] | None, owns: bool,
           exclude: Iterable[str] | None = None, site_detection: bool | None = None) -> IndexReport:
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
    from lancelot_cli.storage.lock import writer_lock
    from lancelot_cli.storage.writer import TableWriter

    report = IndexReport(source=str(root), database=database, table=table)
    with writer_lock(database, table):
        writer = TableWriter(database, table, storage_options)
        report.indexes_built = list(writer.indexes_built)
        stored_model, stored_dimension = writer.vector_info()
        embedding = embed is not None and bool(model)
        full = rebuild
        state = {} if full else writer.file_state()
        saved = writer.index_options()
        patterns = tuple(saved.get("exclude", ())) if exclude is None else tuple(p for p in exclude if p.strip())
        detect = bool(saved.get("siteDetection", True)) if site_detection is None else site_detection
        found = scan(root, normalise_extensions(extensions), patterns, detect)
        report.site = found.site_note()
        paths = found.paths
        if not paths and not writer.exists:  # a first run that would make an empty table: say why
            raise NothingToIndex(nothing_to_index(root, found))
        stats = found.stats  # (size, mtime_ns) of each path, taken during the walk
        todo = [rel for rel in paths if full or stats[rel][0] is None or state.get(rel, (None, None))[:2] != stats[rel]]
        scope = {rel for rel in state if rel not in stats}  # deleted files
        rows: list[dict[str, Any]] = []
        suffix = _title_suffix(root, paths) if any(Path(p).suffix.lower() in HTML for p in todo) else None
        with closing(read_all(root, todo, workers, max_file_size)) as results:
            for done, (rel, result) in enumerate(results, start=1):
                if isinstance(result, MissingModule):
                    raise IndexingError(str(result))
                if isinstance(result, SourceError):
                    report.skipped.append((rel, str(result)))
                else:
                    scope.add(rel)
                    if suffix and result.kind == "html":
                        result = replace(result, title=strip_suffix(result.title, suffix))
                    rows.extend(rows_for(result, chunk_size, stats[rel]))
                    report.notes.extend((rel, note) for note in result.notes)
                if progress:
                    progress(rel, done, len(todo))
        report.read = len(todo) - len(report.skipped)
        report.files = len(paths) - len(report.skipped)
        if not rows and not writer.exists:
            raise NothingToIndex(nothing_readable(root, report.skipped))
        report.skipped[:0] = found.skipped  # links not followed, folders that cannot be read
        _cap_front_matter(writer, rows, full, report)
        dimension = None
        if embedding:
            # Text first: rows go in with the vectors their unchanged text already had; the rest
            # are embedded after the commit (``fill_vectors``), so the table is searchable meanwhile.
            reuse = writer.reusable_vectors(model)  # type: ignore[arg-type]  (none if the model differs)
            for row in rows:
                row[VECTOR] = reuse.get(row[HASH])
            dimension = stored_dimension if stored_model == model else None  # else the first batch says
            report.model = model
        elif stored_model:
            # Vectors made earlier stay with unchanged chunks; new chunks have none until --embed.
            reuse = writer.reusable_vectors(stored_model)
            for row in rows:
                row[VECTOR] = reuse.get(row[HASH])
            report.without_vectors = sum(1 for row in rows if row[VECTOR] is None)
        # From here on the table changes: a Ctrl-C or SIGTERM waits for the commit (a second or so)
        # and then ends the run, so what the message says matches what the table holds.
        with deferred_signals(redeliver=not owns) as stopped:
            if full or scope or not writer.exists:
                written = writer.write(rows, paths=None if full else scope, model=model if dimension else None,
                                       dimension=dimension)
                report.added, report.updated, report.deleted = written.added, written.updated, written.deleted
                report.version, report.committed = written.version, written.committed
                report.optimized = written.optimized
            else:
                report.version = writer.version
            chosen = {"exclude": list(patterns), "siteDetection": detect}
            if chosen != (saved or DEFAULT_OPTIONS) and writer.save_index_options(chosen):
                report.version = writer.version
            if not report.committed and writer.optimize():  # e.g. a run killed between its commit and optimize()
                report.version, report.optimized = writer.version, True
            report.chunks = writer.count()
        if stopped.signum is not None:  # the report goes with it: a watch still prints the batch's line
            report.seconds = time.perf_counter() - started
            what = f"the table was written (version {report.version})" if report.committed else "nothing was changed"
            raise Interrupted(f"{signal_name(stopped.signum)} after reading every file; {what}", stopped.signum,
                              report)
        report.text_seconds = time.perf_counter() - started
        if embedding:
            _embed_missing(writer, embed, model, on_embed, owns, report, started)  # type: ignore[arg-type]
    report.seconds = time.perf_counter() - started
    return report


def _embed_missing(writer: Any, embed: Embed, model: str, on_embed: Callable[[int, int], None] | None,
                   owns: bool, report: IndexReport, started: float) -> None:
    """Vectors for the rows that have none, committed in steps after the text. A Ctrl-C or
    SIGTERM keeps the text and every vector committed: ``Interrupted`` says how far it got."""
    filled = Filled()

    def commit(write: Callable[[], Any]) -> Any:
        with deferred_signals(redeliver=not owns):  # the step's commit finishes, then the signal lands
            return write()

    try:
        fill_vectors(writer, embed, model, commit, on_embed, filled)
    except KeyboardInterrupt as exc:
        report.embedded, report.truncated = filled.embedded, filled.truncated
        report.version, report.chunks = writer.version, writer.count()
        report.seconds = time.perf_counter() - started
        signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
        raise Interrupted(f"{signal_name(signum)} while embedding: the table is searchable by text and "
                          f"{filled.embedded:,} of {filled.total:,} new chunks have vectors; run the same "
                          f"`lancelot index` again to embed the rest", signum, report) from None
    report.embedded, report.truncated = filled.embedded, filled.truncated
    if filled.embedded:
        report.committed = True
        if writer.optimize():  # the vector index, once there are enough vectors (storage.policy)
            report.optimized = True
        report.version = writer.version
