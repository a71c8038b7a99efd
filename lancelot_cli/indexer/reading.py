"""Reading the changed files of a run, in a pool of processes when there are many HTML pages or
PDF, Word, PowerPoint and EPUB files."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from pathlib import Path

from lancelot_cli.indexer.formats import PACKAGED
from lancelot_cli.indexer.scanning import HTML
from lancelot_cli.indexer.sources import MAX_FILE_BYTES, Document, SourceError, read_document

# Below this many HTML pages (or PDF, Word, PowerPoint and EPUB files) a process pool costs more
# than it saves, unless the documents among them are large: POOL_BYTES of them in all. PDFium reads
# about 2 MB of PDF a second on one core (tests/benchmarks/pdf_docs.py) and starting the workers
# takes about a second; the 16 MB were not tuned on an idle machine (none was to be had).
POOL_THRESHOLD = 16
POOL_BYTES = 16 * 1024 * 1024


class MissingModule(SourceError):
    """A file could not be read because a Python module is missing: the install is broken, so
    the run fails (every file of that kind would be skipped) instead of skipping the file."""


def _read(args: tuple[str, str, int]) -> Document | SourceError:
    root, rel, max_bytes = args
    try:
        return read_document(Path(root), rel, max_bytes)
    except SourceError as exc:
        missing = _import_error(exc)
        return MissingModule(_install_hint(rel, missing)) if missing else exc


def _import_error(exc: BaseException) -> ImportError | None:
    """The ImportError behind ``exc`` (its cause or context, however deep), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ImportError):
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


def _crashed(job: tuple[str, str, int], code: int | None) -> SourceError:
    how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return SourceError(f"the process reading it died ({how}); the file may crash its parser")


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
    heavy = [p for p in paths if Path(p).suffix.lower() in HTML or Path(p).suffix.lower() in PACKAGED]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    jobs = [(str(root), p, max_bytes) for p in paths]
    if workers > 1 and (len(heavy) >= POOL_THRESHOLD or _packaged_bytes(root, heavy) >= POOL_BYTES):
        from lancelot_cli.indexer.pool import imap

        results = imap(_read, jobs, workers, _crashed)
        try:
            # Not strict: zip stops at the last path without resuming imap, which is then closed
            # (workers killed) rather than run to its end (workers stopped politely), as before.
            yield from zip(paths, results, strict=False)
        finally:
            results.close()  # an early stop (Ctrl-C, an error) kills the workers now
    else:
        for job in jobs:
            yield job[1], _read(job)
