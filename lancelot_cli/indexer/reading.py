"""Reading the changed files of a run, in a pool of processes when there are many HTML pages or
PDF, Word, PowerPoint and EPUB files.

PDF, Word, PowerPoint and EPUB files are read in a worker process even when there is one, under
the bounds of indexer/bounds.py: a document bomb that makes its parser abort, swell or stall costs
that worker, never the run (issue 37 item 4)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lancelot_cli.indexer import bounds
from lancelot_cli.indexer.formats import PACKAGED
from lancelot_cli.indexer.scanning import HTML
from lancelot_cli.indexer.sources import MAX_FILE_BYTES, Document, SourceError, read_document

if TYPE_CHECKING:
    from lancelot_cli.indexer.pool import Ended

Job = tuple[str, str, int]  # (the folder, the file's path in it, --max-file-size)
E = TypeVar("E", bound=BaseException)

# Below this many HTML pages (or PDF, Word, PowerPoint and EPUB files) a process pool costs more
# than it saves, unless the documents among them are large: POOL_BYTES of them in all. PDFium reads
# about 2 MB of PDF a second on one core (tests/benchmarks/pdf_docs.py) and starting the workers
# takes about a second; the 16 MB were not tuned on an idle machine (none was to be had).
POOL_THRESHOLD = 16
POOL_BYTES = 16 * 1024 * 1024
# Files of these kinds are read in a worker process even when there is only one: their parsers are
# where document bombs go off (a PDF that makes PDFium abort, a Word file that swells to gigabytes).
ISOLATED = PACKAGED


class MissingModule(SourceError):
    """A file could not be read because a Python module is missing: the install is broken, so
    the run fails (every file of that kind would be skipped) instead of skipping the file."""


def _read(args: Job) -> Document | SourceError:
    root, rel, max_bytes = args
    try:
        return read_document(Path(root), rel, max_bytes)
    except SourceError as exc:
        missing = _behind(exc, ImportError)
        return MissingModule(_install_hint(rel, missing)) if missing else exc


def _read_bounded(args: Job) -> Document | SourceError:
    """``_read`` in a worker process, its memory bounded (``bounds.address_space``): a file that
    needs more is skipped with that reason, and the worker, its memory given back, reads on."""
    size = _size(args)
    try:
        with bounds.address_space(bounds.memory_for(size)):
            result = _read(args)
    except MemoryError:  # caught once the limit is back: what the read held is freed after this block
        result = SourceError(bounds.too_much_memory(size))
    if isinstance(result, SourceError) and _behind(result, MemoryError):
        # a new error: the reader's error holds the MemoryError, whose traceback holds what it allocated
        return SourceError(bounds.too_much_memory(size))
    return result


def _behind(exc: BaseException, kind: type[E]) -> E | None:
    """The exception of ``kind`` behind ``exc`` (its cause or context, however deep), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _install_hint(rel: str, exc: ImportError) -> str:
    detail = " ".join(str(exc).split())
    # lxml.html.clean says which package it moved to; otherwise the missing module's top name.
    package = "lxml_html_clean" if "lxml_html_clean" in detail else (exc.name or "").split(".")[0]
    what = f"the Python package {package} is missing" if package else "a Python module is missing"
    return (
        f"cannot read {rel}: {what} ({detail}); install it in Lancelot's environment"
        + (f" (`pip install {package}`)" if package else "")
        + " or reinstall lancelot-cli, then run again"
    )


def _crashed(job: Job, ended: Ended) -> SourceError:
    """Why a file whose worker ended in the middle of it is skipped."""
    if ended.seconds is not None:
        return SourceError(bounds.too_slow(ended.seconds, ended.cpu))
    code = ended.code
    how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    # PDFium aborts when an allocation fails: past the memory bound, or a parser bug; both are told.
    return SourceError(
        f"the process reading it died ({how}): it needed more than {bounds.memory_words(_size(job))} of "
        "memory, the most one file may use, or the file crashes its parser"
    )


def _size(job: Job) -> int:
    """The size of the job's file (0 for one gone meanwhile: its reader says so)."""
    root, rel, _ = job
    try:
        return (Path(root) / rel).stat().st_size
    except OSError:
        return 0


def _packaged_bytes(root: Path, paths: list[str]) -> int:
    """The size of the PDF, Word, PowerPoint and EPUB files among ``paths`` (0 for one gone meanwhile)."""
    total = 0
    for rel in paths:
        if Path(rel).suffix.lower() in PACKAGED:
            with contextlib.suppress(OSError):
                total += (root / rel).stat().st_size
    return total


def read_all(
    root: Path, paths: list[str], workers: int | None, max_bytes: int = MAX_FILE_BYTES
) -> Generator[tuple[str, Document | SourceError], None, None]:
    """Each path with its document or why it was skipped, in the order of ``paths``. PDF, Word,
    PowerPoint and EPUB files go to worker processes always; the other files too when there are
    many HTML pages or documents (a pool then pays for itself); the rest are read here."""
    heavy = [p for p in paths if Path(p).suffix.lower() in HTML or Path(p).suffix.lower() in PACKAGED]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    jobs = [(str(root), p, max_bytes) for p in paths]
    everything = workers > 1 and (len(heavy) >= POOL_THRESHOLD or _packaged_bytes(root, heavy) >= POOL_BYTES)
    away = [i for i, job in enumerate(jobs) if everything or Path(job[1]).suffix.lower() in ISOLATED]
    if not away:
        for job in jobs:
            yield job[1], _read(job)
        return
    from lancelot_cli.indexer.pool import imap

    sent = [jobs[i] for i in away]
    results = imap(_read_bounded, sent, max(1, workers), _crashed, _deadlines(sent))
    try:
        yield from _merged(jobs, set(away), results)
    finally:
        results.close()  # an early stop (Ctrl-C, an error) kills the workers now


def _merged(
    jobs: list[Job], away: set[int], results: Iterator[Document | SourceError]
) -> Iterator[tuple[str, Document | SourceError]]:
    """Each job's result in order: the workers' for the jobs sent ``away`` (their indexes), read
    here for the others. The workers' results are taken one by one, so an early stop leaves the
    rest unasked (the caller then kills the workers rather than wait for them)."""
    for i, job in enumerate(jobs):
        yield job[1], next(results) if i in away else _read(job)


def _deadlines(jobs: list[Job]) -> Callable[[Job], float]:
    """The seconds of CPU time each job may take (``bounds.seconds_for`` its file's size, taken once)."""
    seconds = {job[1]: bounds.seconds_for(_size(job)) for job in jobs}
    return lambda job: seconds[job[1]]
