"""One `lancelot index` run: its steps in order, each of which takes the `IndexJob` whole.

The job is indexer/job.py, the plan of what to read indexer/plan.py, the run the ledger answers
(and the ledger a run leaves) indexer/from_ledger.py.

The order of the steps is what keeps a table safe (the contract is `index_folder`'s docstring in
indexer/__init__.py): the writer lock is taken and the table opened; the embedder is chosen from
the model the table's vectors were made with, which the writer reports; the folder is walked
and every new or changed file read, before anything is written; then the text goes in one
commit, with Ctrl-C and SIGTERM held until it ends (indexer/signals.py); then the missing
vectors, committed in steps (indexer/embedding.py).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import ledger
from lancelot_cli.indexer.embedding import Embed, Embedding, Filled, fill_vectors
from lancelot_cli.indexer.from_ledger import answer_from_ledger, ledger_after, nothing_to_do, read_states
from lancelot_cli.indexer.html import common_suffix, quick_title, strip_suffix
from lancelot_cli.indexer.job import IndexJob
from lancelot_cli.indexer.plan import Plan, plan_run
from lancelot_cli.indexer.reading import MissingModule, read_all
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.rows import mark_row_languages, rows_for
from lancelot_cli.indexer.saved_options import (
    DEFAULT_OPTIONS,
    chunk_size,
    no_embed,
)
from lancelot_cli.indexer.scanning import HTML
from lancelot_cli.indexer.signals import (
    Interrupted,
    StopSignals,
    Terminated,
    deferred_signals,
    owns_signals,
    signal_name,
    stop_signals_raise,
)
from lancelot_cli.indexer.sources import NothingToIndex, SourceError, nothing_readable
from lancelot_cli.location import Location
from lancelot_cli.storage import disk
from lancelot_cli.storage.analyzer import LANGUAGE_OF_COLUMN, text_languages
from lancelot_cli.storage.schema import (
    HASH,
    PATH,
    TEXT,
    VECTOR,
    is_local,
)

if TYPE_CHECKING:
    from lancelot_cli.storage.write.table import TableWriter

Rows = list[dict[str, Any]]


# -- the steps ------------------------------------------------------------------------------------


def index_job(job: IndexJob) -> IndexReport:
    """Make the job's table match the documents of its folder (what that means: `index_folder`)."""
    with stop_signals_raise(owns_signals()) as stops:
        shown = Location.parse(job.database).display  # the report names the database as it was given
        job = checked(job)
        fresh = is_local(job.database) and not Path(job.database).exists()
        try:
            report = _run(job, stops, shown)
        except OSError as exc:  # a full disk or a read-only folder, said as such (storage/disk.py)
            said = disk.problem(exc, job.database)
            if said is None:
                raise
            raise IndexingError(said) from exc
        finally:
            if fresh:
                _remove_if_unused(Path(job.database), job.table)
        if stops.signum is not None:  # it landed where Python swallowed it (StopSignals): said now
            what = f"the table was written (version {report.version})" if report.committed else "nothing was changed"
            raise Interrupted(f"{signal_name(stops.signum)} as the run ended; {what}", stops.signum, report)
        return report


def _remove_if_unused(folder: Path, table: str) -> None:
    """The database folder this run made, when it holds nothing but the run's lock file (a first
    run that failed, on a full disk say, leaves no empty folder behind)."""
    try:
        left = {entry.name for entry in folder.iterdir()}
        if left <= {f".lancelot-index-{table}.lock"}:
            for name in left:
                (folder / name).unlink()
            folder.rmdir()
    except OSError:
        pass


def checked(job: IndexJob) -> IndexJob:
    """The job with its folder and database checked (the error says what to give instead)."""
    root = job.source.expanduser()
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise IndexingError(f"source folder {root} {what}; give the folder of documents to index")
    database = Location.parse(job.database)
    if database.is_local and database.folder.exists() and not database.folder.is_dir():
        raise IndexingError(f"database path {database.display} is a file; give a folder (it is created if missing)")
    return replace(job, source=root, database=database.uri)


def _run(job: IndexJob, stops: StopSignals, shown: str) -> IndexReport:
    """The steps in their order, holding the writer lock (a second run on the table refuses)."""
    from lancelot_cli.storage.write.lock import writer_lock

    started = time.perf_counter()
    report = IndexReport(source=str(job.source), database=shown, table=job.table)
    # A missing local model or API key fails the run as the embedder is chosen, before any file is
    # read. A local database that is not there yet has no table, so no stored model: there it is
    # chosen before the lock makes the folder, which a failed run must not leave behind
    # (tests/test_local_embeddings.py, the index-embed-without-key case of tests/test_cli.py).
    fresh = is_local(job.database) and not Path(job.database).exists()
    embedding = job.embedder(None) if fresh else None
    try:
        with writer_lock(job.database, job.table):
            known = None if fresh or job.options.rebuild or not is_local(job.database) else ledger.load(*_where(job))
            plan = None
            if known is not None and known.current:  # the table is as the last run left it
                embedding = _embedding(job, known.stored_model, known.options)
                plan = plan_run(job, None, report, known)
                if plan.saved.get("rowLanguages"):  # kept as saved (``row_languages``)
                    plan.chosen["rowLanguages"] = True
                if nothing_to_do(plan, known, embedding):
                    answer_from_ledger(job, plan, known, embedding, report)
                    report.text_seconds = time.perf_counter() - started
                    return report
            _write_run(job, stops, Ready(started, report, embedding, known, plan))
    finally:  # an Interrupted carries the report, with the time it took too
        report.seconds = time.perf_counter() - started
    return report


def _where(job: IndexJob) -> tuple[str, str]:
    return job.database, job.table


@dataclass
class Ready:
    """What `_run` knows before it opens the table: when it began, the report so far, the embedding
    (if chosen), the ledger (if any) and the plan (when the ledger let it be made without the table)."""

    started: float
    report: IndexReport
    embedding: Embedding | None
    known: ledger.Ledger | None
    plan: Plan | None


def _write_run(job: IndexJob, stops: StopSignals, ready: Ready) -> None:
    """The steps that need the table: open it, read what changed, commit, embed, keep the ledger."""
    from lancelot_cli.storage.write.table import TableWriter

    report, known = ready.report, ready.known
    trusted = known is not None and known.current
    writer = TableWriter(
        job.database, job.table, job.storage_options, replace_damaged=job.options.rebuild, checked=trusted
    )
    report.indexes_built = list(writer.indexes_built)
    embedding = ready.embedding or _embedding(job, writer.stored_model, writer.index_options())
    report.vectors_hint = embedding.hint
    plan = ready.plan or plan_run(job, writer, report, known)
    rows, read = read_changed(job, plan, report)
    skipped = list(report.skipped)  # the files skipped when read, this run or as before
    if not rows and not writer.exists:
        raise NothingToIndex(nothing_readable(job.source, report.skipped, report.extra_hint))
    report.skipped[:0] = plan.found.skipped  # links not followed, folders that cannot be read
    apart = row_languages(job, writer, plan)
    choose_languages(job, writer, plan, rows, report, apart)
    cap_front_matter(writer, rows, job.options.rebuild, report)
    if apart:
        mark_row_languages(rows, text_languages(report.languages, rows_apart=True))
        if job.options.rebuild:
            writer.drop_row_text_columns({key for row in rows for key in row if key in LANGUAGE_OF_COLUMN})
    column = attach_vectors(writer, rows, embedding, report)
    states = read_states(rows)  # taken now: the commit may empty ``rows`` (Text.rows)
    commit_text(job, writer, Text(rows, plan.deleted | read, column), plan, report, stops)
    report.text_seconds = time.perf_counter() - ready.started
    complete = None
    if embedding.embed is not None and embedding.model:
        embed_missing(job, writer, embedding.embed, embedding.model, report, stops)
        complete = embedding.model
    elif known is not None and not report.without_vectors and writer.stored_model == known.complete_model:
        complete = known.complete_model  # no row came without a vector
    if is_local(job.database):
        ledger.save(*_where(job), ledger_after(job, writer, plan, states, skipped, complete))


def _embedding(job: IndexJob, stored_model: str | None, saved: dict[str, Any]) -> Embedding:
    """What the run embeds with: nothing when ``--no-embed`` says so, now or saved with the table
    (then without the hint on how to get vectors: the choice was made); else the job's choice."""
    return Embedding() if no_embed(job.options, saved) else job.embedder(stored_model)


LANGUAGE_SAMPLE = 1000  # documents (chunks, for a table of an earlier Lancelot) the languages are read from
CHUNKS_PER_DOCUMENT = 3


def choose_languages(
    job: IndexJob, writer: TableWriter, plan: Plan, rows: Rows, report: IndexReport, rows_apart: bool = False
) -> None:
    """The languages of the table's documents (indexer/languages.py), which its full-text indexes
    are built for: as saved with the table, else read off this run's chunks, and for a table of an
    earlier Lancelot off a sample of its rows too. A new table and ``--rebuild`` read them anew;
    other runs keep them, so a few changed files never rebuild the indexes."""
    from lancelot_cli.indexer.languages import detect, detect_documents

    saved = plan.saved.get("languages")
    if isinstance(saved, list) and saved and writer.exists and not job.options.rebuild:
        report.languages = [str(code) for code in saved]
        return
    chunks: dict[str, list[str]] = {}
    for row in rows:  # each document's first chunks, however long it is: documents vote, not text
        texts = chunks.setdefault(str(row.get(PATH)), [])
        if len(texts) < CHUNKS_PER_DOCUMENT:
            texts.append(str(row.get(TEXT) or ""))
    paths = list(chunks)[:: max(1, len(chunks) // LANGUAGE_SAMPLE)]
    documents = {path: chunks[path] for path in paths}
    if writer.exists and not job.options.rebuild:  # a table of an earlier Lancelot: its text counts too
        found = detect([t for texts in documents.values() for t in texts] + writer.sample_texts(LANGUAGE_SAMPLE))
    else:
        found = detect_documents(documents)
    report.languages, report.languages_found = found, True
    plan.chosen["languages"] = report.languages
    writer.use_languages(report.languages, rows_apart)


def row_languages(job: IndexJob, writer: TableWriter, plan: Plan) -> bool:
    """Whether the run gives rows their own language's column (rows.py ``mark_row_languages``): a
    new table, ``--rebuild`` and a table made so. A table of an earlier Lancelot keeps one analysis
    until ``--rebuild`` (its unchanged rows would lack the columns)."""
    if plan.saved.get("rowLanguages") or not writer.exists or job.options.rebuild:
        plan.chosen["rowLanguages"] = True
    return bool(plan.chosen.get("rowLanguages"))


def read_changed(job: IndexJob, plan: Plan, report: IndexReport) -> tuple[Rows, set[str]]:
    """The rows of the documents in ``plan.todo``, and the documents read. A file that cannot be
    read or parsed goes to ``report.skipped`` and keeps its rows; a missing Python module fails the
    run (every file of that kind would be skipped)."""
    rows: Rows = []
    read: set[str] = set()
    todo = _readable(plan.todo, report)
    html = any(Path(rel).suffix.lower() in HTML for rel in todo)
    suffix = _title_suffix(job.source, plan.found.paths) if html else None
    size = chunk_size(job.options, plan.chosen)
    with closing(read_all(job.source, todo, job.workers, job.options.max_file_size)) as results:
        for done, (rel, result) in enumerate(results, start=1):
            if isinstance(result, MissingModule):
                raise IndexingError(str(result))
            if isinstance(result, SourceError):
                report.skipped.append((rel, str(result)))
            else:
                read.add(rel)
                if suffix and result.kind == "html":
                    result = replace(result, title=strip_suffix(result.title, suffix))
                rows.extend(rows_for(result, size, plan.found.stats[rel]))
                report.notes.extend((rel, note) for note in result.notes)
            if job.progress:
                job.progress(rel, done, len(todo))
    report.read = len(todo) - len(report.skipped)
    report.skipped = sorted([*report.skipped, *plan.unread])  # (unread: skipped as last time, not read again)
    report.files = len(plan.found.paths) - len(report.skipped) - len(report.need_extra)
    return rows, read


def _readable(todo: list[str], report: IndexReport) -> list[str]:
    """The files to read: those of a kind whose reader needs the docs extra, when it is missing, are
    left as they are (rows kept) and named in ``report.need_extra``, with one install hint."""
    from lancelot_cli.indexer.formats import available, extra_hint

    suffixes = {rel: Path(rel).suffix.lower() for rel in todo}
    missing = {suffix for suffix in set(suffixes.values()) if not available(suffix)}
    unreadable = [rel for rel in todo if suffixes[rel] in missing]
    if unreadable:
        report.need_extra = unreadable
        report.extra_hint = extra_hint(missing)
    return [rel for rel in todo if suffixes[rel] not in missing]


def _title_suffix(root: Path, paths: list[str]) -> str | None:
    """The title suffix nearly every HTML page of the folder repeats ("— Django 4.2 documentation"),
    from all pages, not only the ones read this run, so that titles stay the same between runs."""
    return common_suffix(quick_title(str(root / rel)) for rel in paths if Path(rel).suffix.lower() in HTML)


def cap_front_matter(writer: TableWriter, rows: Rows, full: bool, report: IndexReport) -> None:
    """Keep the table within ``MAX_META_COLUMNS`` front-matter columns (notes name the keys dropped);
    a full run (``--rebuild``) also drops the columns no file carries any more."""
    from lancelot_cli.indexer.meta_columns import cap, meta_keys

    report.notes.extend(cap(rows, set() if full else writer.front_matter_columns()))
    if full and writer.exists:
        writer.drop_front_matter_columns({key for row in rows for key in meta_keys(row)})


def attach_vectors(
    writer: TableWriter, rows: Rows, embedding: Embedding, report: IndexReport
) -> tuple[str, int] | None:
    """Give the rows the vectors their unchanged text already has, in place. With an embedder, the
    rest are embedded after the commit (``embed_missing``), so the table is searchable meanwhile;
    without one, new chunks have none until ``--embed``. Returns the (model, dimension) the vector
    column keeps for the commit, or None (no vectors, or a new model: its first batch says)."""
    stored_model, stored_dimension = writer.vector_info()
    model = embedding.model if embedding.embed is not None else None
    kept = model or stored_model  # the model whose vectors the rows keep
    if not kept:
        return None
    # (none if the column holds another model's vectors; not read at all when no row needs one)
    reuse = writer.reusable_vectors(kept) if rows else {}
    for row in rows:
        row[VECTOR] = reuse.get(row[HASH])
    if not model:
        report.without_vectors = sum(1 for row in rows if row[VECTOR] is None)
        return None
    report.model = model
    return (model, stored_dimension) if stored_model == model and stored_dimension else None


@dataclass(frozen=True)
class Text:
    """What the text commit writes. ``column`` is the (model, dimension) of the vector column the
    commit keeps: None when there are no vectors, or when the model is new (then the first batch
    embedded makes its column, in ``embed_missing``)."""

    rows: Rows  # given up to the commit: the first write of a new table empties the list as it writes
    replaced: set[str]  # the documents read and the ones deleted: their previous rows go
    column: tuple[str, int] | None


def commit_text(
    job: IndexJob, writer: TableWriter, text: Text, plan: Plan, report: IndexReport, stops: StopSignals
) -> None:
    """The table changes here: the rows in one commit, then the run's options. A Ctrl-C or SIGTERM
    meanwhile waits for the commit (a second or so) and then ends the run as ``Interrupted``, with
    the report, so that what the message says matches what the table holds."""
    stops.raise_pending()  # one Python swallowed ends the run here, before the table changes
    with deferred_signals(redeliver=not stops.owns) as stopped:
        if job.options.rebuild or text.replaced or not writer.exists:
            model, dimension = text.column or (None, None)
            written = writer.write(
                text.rows,
                paths=None if job.options.rebuild else text.replaced,
                model=model,
                dimension=dimension,
                release=True,  # nothing reads the rows after the commit: their memory goes as they are written
                options=plan.chosen,  # a new table is made with them
            )
            report.added, report.updated, report.deleted = written.added, written.updated, written.deleted
            report.version, report.committed, report.optimized = written.version, written.committed, written.optimized
        else:
            report.version = writer.version
        # Languages read anew (a new table, --rebuild, a table of an earlier Lancelot) may want other indexes.
        rebuilt = writer.rebuild_text_indexes() if report.languages_found else []
        if rebuilt:
            report.indexes_built += [c for c in rebuilt if c not in report.indexes_built]
            report.version = writer.version
        if plan.chosen != (plan.saved or DEFAULT_OPTIONS) and writer.save_index_options(plan.chosen):
            report.version = writer.version
        writer.save_descriptions(plan.chosen.get("descriptions", {}))  # for the server's instructions
        writer.save_languages(plan.chosen.get("languages", []))
        if report.committed or not plan.found.paths:  # what the table holds changed (or may have)
            writer.save_contents()
        if not report.committed and writer.optimize():  # e.g. a run killed between its commit and optimize()
            report.version, report.optimized = writer.version, True
        report.chunks = writer.count()
    if stopped.signum is not None:  # a watch still prints the batch's line from the report
        what = f"the table was written (version {report.version})" if report.committed else "nothing was changed"
        raise Interrupted(f"{signal_name(stopped.signum)} after reading every file; {what}", stopped.signum, report)


def embed_missing(
    job: IndexJob, writer: TableWriter, embed: Embed, model: str, report: IndexReport, stops: StopSignals
) -> None:
    """Vectors for the rows that have none, committed in steps after the text. A Ctrl-C or
    SIGTERM keeps the text and every vector committed: ``Interrupted`` says how far it got."""
    filled = Filled()
    on_embed = job.on_embed

    def progress(done: int, total: int) -> None:
        # After each batch: a signal Python swallowed (StopSignals) ends the embedding here, and
        # fill_vectors commits the vectors made so far on the way out, as for any Ctrl-C.
        stops.raise_pending()
        if on_embed:
            on_embed(done, total, model)

    def commit(write: Callable[[], Any]) -> Any:
        with deferred_signals(redeliver=not stops.owns):  # the step's commit finishes, then the signal lands
            return write()

    try:
        fill_vectors(writer, embed, model, commit, progress, filled)
    except KeyboardInterrupt as exc:
        report.embedded, report.truncated = filled.embedded, filled.truncated
        report.version, report.chunks = writer.version, writer.count()
        signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
        raise Interrupted(
            f"{signal_name(signum)} while embedding: the table is searchable by text and "
            f"{filled.embedded:,} of {filled.total:,} new chunks have vectors; run the same "
            f"`lancelot index` again to embed the rest",
            signum,
            report,
        ) from None
    report.embedded, report.truncated = filled.embedded, filled.truncated
    if filled.embedded:
        report.committed = True
        if writer.optimize():  # the vector index, once there are enough vectors (storage.write.policy)
            report.optimized = True
        report.version = writer.version
