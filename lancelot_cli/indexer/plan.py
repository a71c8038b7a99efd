"""What a run reads and replaces, decided from the walk and the recorded state before any file is read.

Each document's size and mtime are compared with what the table (or its current ledger) recorded;
files whose mtime is too close to the recording to trust are hashed (indexer/ledger.py).

A run from another folder than the table's is refused here, before anything is written, when it
would remove documents of the table (``check_source``; issue 45 item 2: indexing another folder
into the stored table silently replaced it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import ledger
from lancelot_cli.indexer.describe import read_descriptions
from lancelot_cli.indexer.job import IndexJob, normalise_extensions
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.saved_options import chosen_options, chunk_size_note, read_again, saved_source
from lancelot_cli.indexer.scanning import Scan, nothing_to_index, scan
from lancelot_cli.indexer.sources import NothingToIndex
from lancelot_cli.storage.schema import is_local

if TYPE_CHECKING:
    from lancelot_cli.storage.write.table import TableWriter


@dataclass(frozen=True)
class Plan:
    """What a run reads and replaces, decided from the walk and the table before any file is read."""

    found: Scan  # the walk: the documents, what it left out, each one's (size, mtime_ns)
    todo: list[str]  # documents to read: new, or changed since the table recorded them (all with --rebuild)
    deleted: set[str]  # documents the table has and the folder no longer does
    saved: dict[str, Any]  # the options saved with the table ({} if none)
    chosen: dict[str, Any]  # this run's options, in the form they are saved in
    state: ledger.State = field(default_factory=dict)  # what the table recorded of each file
    unread: list[tuple[str, str]] = field(default_factory=list)  # skipped as last time, unchanged: (path, why)
    hashed: int = 0  # files whose size and mtime matched but were hashed to be sure (indexer/ledger.py)
    as_of_ns: int = 0  # when the walk began


def plan_run(job: IndexJob, writer: TableWriter | None, report: IndexReport, known: ledger.Ledger | None) -> Plan:
    """Walk the folder and compare each document's size and mtime with what the table recorded
    (the ledger's copy when it is current; ``writer`` may be None then); racy files are hashed."""
    recorded = _recorded(job, writer, known)
    chosen = chosen_options(job.options, recorded.saved, recorded.exists, job.source.resolve())
    report.chunk_size_note = chunk_size_note(job.options, chosen)
    as_of_ns = time.time_ns()
    descriptions = read_descriptions(job.source)  # .lancelotdescribe: kept with the options when there is one
    if descriptions:
        chosen["descriptions"] = descriptions
    found = scan(
        job.source,
        normalise_extensions(chosen["extensions"]),
        tuple(chosen["exclude"]),
        chosen["siteDetection"],
        chosen.get("code"),
    )
    report.site = found.site_note()
    report.code = found.code_note()
    if not found.paths and not recorded.exists:  # a first run that would make an empty table: say why
        raise NothingToIndex(nothing_to_index(job.source, found))
    check_source(job, recorded, chosen["source"], found, writer)
    report.text_read_again = read_again(recorded.saved, recorded.exists) and not job.options.rebuild
    full, state = job.options.rebuild or report.text_read_again, recorded.state
    todo, again, hashed = [], [], 0
    for rel in found.paths:
        stat = found.stats[rel]
        before = recorded.unread.get(rel)
        if before and tuple(before[:2]) == stat and not ledger.racy(stat[1], recorded.at or 0):
            again.append((rel, str(before[2])))
        elif full or stat[0] is None or state.get(rel, (None, None))[:2] != stat:
            todo.append(rel)
        elif recorded.at is not None and ledger.racy(stat[1], recorded.at):
            hashed += 1
            if ledger.digest(job.source / rel) != state[rel][2]:
                todo.append(rel)
    report.hashed = hashed
    deleted = {rel for rel in state if rel not in found.stats}
    return Plan(found, todo, deleted, recorded.saved, chosen, state, again, hashed, as_of_ns)


def check_source(job: IndexJob, recorded: Recorded, source: str, found: Scan, writer: TableWriter | None) -> None:
    """Refuse a run from another folder than the one the table was indexed from when it would
    remove any of the table's documents (those the folder does not have, or leaves out), unless
    ``--replace`` (``Options.replace``) says to; the error names both folders and what would go.
    A run that removes none (the same folder moved, or reached by another path) goes on, and
    saves its folder. The check is made before any document is read or anything written.

    The table's folder is the one saved with its options (``saved_options``); for a table made
    before the folder was saved, the one `lancelot index` noted in the config dir
    (``job.noted_source``, cli/links.py; the commands pass it). Neither known (a table of
    `index_folder` before then): unknown, and the run goes on as it always did.
    """
    if not recorded.exists or job.options.replace:
        return
    before = saved_source(recorded.saved) or (str(job.noted_source) if job.noted_source else None)
    if before is None or before == source:
        return
    # --rebuild replaces the whole table, and its plan reads none of the table's state: read it here.
    files = set(writer.file_state()) if job.options.rebuild and writer is not None else set(recorded.state)
    removed = sum(1 for rel in files if rel not in found.stats)
    if not removed:
        return
    count = f"{len(files):,} document{'' if len(files) == 1 else 's'}"
    what = f"its {count}" if removed == len(files) else f"{removed:,} of its {count}"
    raise IndexingError(
        f"table {job.table!r} in {job.database} was indexed from {before}; indexing {source} into it "
        f"would remove {what}: add --replace to replace them, or use --table NAME to keep both"
    )


@dataclass(frozen=True)
class Recorded:
    """What the table (or its current ledger) recorded before this run."""

    exists: bool
    state: ledger.State
    saved: dict[str, Any]  # the index options saved with the table
    at: int | None  # a time before every state was taken (None: unknown, size and mtime decide)
    unread: dict[str, list[Any]]  # files skipped when last read, with their state then and why


def _recorded(job: IndexJob, writer: TableWriter | None, known: ledger.Ledger | None) -> Recorded:
    """From a current ledger without the table; else from the table. The states' age: the ledger's
    (even an outdated one: every state recorded since is younger); without one, every state of a
    local table is hashed once (0); object stores keep no ledger, and there size and mtime decide."""
    at = known.as_of_ns if known is not None else (0 if is_local(job.database) else None)
    if known is not None and known.current:
        unread = known.unread if known.max_file_size == job.options.max_file_size else {}
        state = {} if job.options.rebuild else known.state()
        return Recorded(True, state, known.options, at, unread)
    assert writer is not None
    state = {} if job.options.rebuild else writer.file_state()
    return Recorded(writer.exists, state, writer.index_options(), at, {})
