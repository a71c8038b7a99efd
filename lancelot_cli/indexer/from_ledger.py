"""A run the ledger answers without opening the table, and the ledger a run leaves behind.

The ledger itself (its file, what it records) is indexer/ledger.py; here the pipeline's side: when
a run has nothing to do, its report from the ledger; after a run, the ledger of the table as left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lancelot_cli.indexer import ledger
from lancelot_cli.indexer.embedding import Embedding
from lancelot_cli.indexer.job import IndexJob
from lancelot_cli.indexer.plan import Plan
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.saved_options import DEFAULT_OPTIONS
from lancelot_cli.storage.schema import CHUNK, FILE_HASH, FILE_MTIME, FILE_SIZE, PATH

if TYPE_CHECKING:
    from lancelot_cli.storage.write.table import TableWriter

Rows = list[dict[str, Any]]


def nothing_to_do(plan: Plan, known: ledger.Ledger, embedding: Embedding) -> bool:
    """Whether the slow path would change nothing: no file to read or delete, the options as saved,
    every row with a vector of the model chosen (the ledger is current: no commit since the last
    run, which left nothing for optimize() or the full-text indexes to do)."""
    return (
        not plan.todo
        and not plan.deleted
        and plan.chosen == (plan.saved or DEFAULT_OPTIONS)
        and (not embedding.embeds or embedding.model == known.complete_model)
    )


def answer_from_ledger(
    job: IndexJob, plan: Plan, known: ledger.Ledger, embedding: Embedding, report: IndexReport
) -> None:
    """The report of a run with nothing to do, from the ledger; it is saved again only when racy
    files were verified (their check moves on to this run's start)."""
    report.from_ledger = True
    report.vectors_hint = embedding.hint
    report.files = len(plan.found.paths) - len(plan.unread)
    report.skipped = [*plan.found.skipped, *plan.unread]
    report.version, report.chunks = known.version, known.chunks
    if embedding.embeds:
        report.model = embedding.model
    if plan.hashed:
        known.as_of_ns = plan.as_of_ns
        ledger.save(job.database, job.table, known)


def read_states(rows: Rows) -> dict[str, list[Any]]:
    """path -> [size, mtime in ns, content hash] of each file the rows come from (its first chunk's)."""
    return {row[PATH]: [row[FILE_SIZE], row[FILE_MTIME], row[FILE_HASH]] for row in rows if row[CHUNK] == 0}


def ledger_after(
    job: IndexJob,
    writer: TableWriter,
    plan: Plan,
    states: dict[str, list[Any]],
    skipped: list[tuple[str, str]],
    complete: str | None,
) -> ledger.Ledger:
    """The ledger of the table as this run leaves it: the recorded state of every file with rows
    (``states``: the ones read now (``read_states``), the others as before) and of the files
    ``skipped`` when read, with why."""
    files = {rel: list(entry) for rel, entry in plan.state.items() if rel not in plan.deleted}
    files.update(states)
    stats = plan.found.stats
    unread = {rel: [*stats[rel], why] for rel, why in skipped if stats.get(rel, (None, None))[0] is not None}
    return ledger.Ledger(
        fingerprint="",
        version=writer.version,
        chunks=writer.count(),
        options=writer.index_options(),
        stored_model=writer.stored_model,
        complete_model=complete if writer.exists else None,
        max_file_size=job.options.max_file_size,
        as_of_ns=plan.as_of_ns,
        files=files,
        unread=unread,
    )
