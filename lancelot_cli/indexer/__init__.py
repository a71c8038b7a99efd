"""`lancelot index`: folder of .md/.txt/.html (and .pdf/.docx/.pptx/.epub) -> one LanceDB table. The only writer.

The server never imports this package (tests check it). Reading HTML is the slow part (about
100 ms a page), so large folders are read by a pool of processes, one per core. The run itself is
indexer/pipeline.py (an `IndexJob`, indexer/job.py, through its steps); the commands come in through indexer/run.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lancelot_cli.indexer.embedding import Embed
from lancelot_cli.indexer.job import IndexJob, Options, Progress, folder_job, normalise_extensions
from lancelot_cli.indexer.pipeline import index_job
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.rows import chunk_hash, rows_for
from lancelot_cli.indexer.saved_options import DEFAULT_OPTIONS

__all__ = [
    "DEFAULT_OPTIONS",
    "Embed",
    "IndexJob",
    "IndexReport",
    "Options",
    "Progress",
    "chunk_hash",
    "folder_job",
    "index_folder",
    "index_job",
    "normalise_extensions",
    "rows_for",
]


def index_folder(source: Path | str, database: str, table: str = "documents", **options: Any) -> IndexReport:
    """Make ``table`` in ``database`` match the documents under ``source``; ``options`` are the
    keywords of `job.folder_job` (``chunk_size``, ``embed`` with ``model``, ``rebuild``, ...).

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
    ``chunk_size`` is saved with the table (None: the saved one, else 1,200); another size
    applies with ``rebuild`` only (``report.chunk_size_note`` says so).
    ``code``: source code in the common languages, one chunk per definition (None: as saved with the
    table, else when ``source`` is a project: ``scanning.is_project``); ``extensions`` (".py", "ts",
    ...) adds files of other extensions as code, read as windows of lines where no grammar parses them;
    files over ``max_file_size`` bytes are skipped and reported. A file that cannot be read
    because a Python module is missing fails the run (``IndexingError`` naming what to install).
    Ctrl-C and SIGTERM stop the run at once (KeyboardInterrupt, ``Interrupted`` with exit code
    143; during the commit, after it: see ``signals``), and the HTML workers with it.
    ``exclude`` (gitignore-style patterns, besides the folder's ``.lancelotignore``) and
    ``site_detection`` (keep a documentation site's rendered pages only) are saved with the
    table; None uses what the table saved.
    """
    return index_job(folder_job(source, database, table, **options))
