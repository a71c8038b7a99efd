"""What one `lancelot index` run is asked to do: the `IndexJob` and its `Options`, made once.

indexer/run.py makes the job for the commands, `folder_job` for `index_folder`; the steps
(indexer/pipeline.py) take it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from lancelot_cli.indexer.embedding import ChooseEmbedding, Embed, Embedding, text_only
from lancelot_cli.indexer.sources import MAX_FILE_BYTES

Progress = Callable[[str, int, int], None]  # (relative path, files done, files total)
OnEmbed = Callable[[int, int, str], None]  # (chunks embedded, chunks to embed, the model embedding them)


@dataclass(frozen=True)
class Options:
    """How to index, besides where: the `lancelot index` flags, as the command was given them."""

    embed: bool | None = None  # None: with a local model when one is on this machine (indexer/run.py)
    chunk_size: int | None = None  # None: as saved with the table, else chunking.CHUNK_CHARS (saved_options)
    rebuild: bool = False
    # As typed: "py", ".TS", "py,ts" (normalise_extensions); None: as saved with the table, () clears.
    extensions: tuple[str, ...] | None = None
    max_file_size: int = MAX_FILE_BYTES
    exclude: tuple[str, ...] | None = None  # None: the patterns saved with the table
    site_detection: bool | None = None  # None: as saved with the table (on for a new one)
    code: bool | None = None  # source code by default: None as saved, else when the folder is a project
    replace: bool = False  # another folder's run may remove the table's documents (plan.check_source)


@dataclass(frozen=True)
class IndexJob:
    """Everything one run needs, made once (indexer/run.py for the commands, `folder_job` for
    `index_folder`) and passed whole through the steps."""

    source: Path  # the folder of documents
    database: str  # a local folder or an object-store URI
    table: str = "documents"
    options: Options = Options()
    # Asked once the writer has opened the table, with the model its vectors were made with.
    embedder: ChooseEmbedding = text_only
    storage_options: dict[str, str] | None = None  # object-store credentials and settings
    workers: int | None = None  # processes reading HTML pages (None: one per core)
    progress: Progress | None = None
    on_embed: OnEmbed | None = None
    # The folder `lancelot index` last noted for the table (cli/links.py), for a table that saved none.
    noted_source: Path | None = None


def folder_job(
    source: Path | str,
    database: str,
    table: str = "documents",
    *,
    chunk_size: int | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    embed: Embed | None = None,
    model: str | None = None,
    on_embed: Callable[[int, int], None] | None = None,
    rebuild: bool = False,
    extensions: Iterable[str] | None = None,
    max_file_size: int = MAX_FILE_BYTES,
    storage_options: dict[str, str] | None = None,
    exclude: Iterable[str] | None = None,
    site_detection: bool | None = None,
    code: bool | None = None,
    replace: bool = False,
) -> IndexJob:
    """The job `index_folder`'s keywords describe: it embeds with ``embed`` (as ``model``) or not at all.
    ``extensions``, like ``exclude``, is saved with the table (None: the saved ones; ``[]`` clears);
    ``replace`` lets a run from another folder than the table's remove its documents (plan.check_source)."""
    chosen = Embedding(embed, model)
    options = Options(
        embed=True if embed is not None else None,  # no embed: no choice saved with the table
        chunk_size=chunk_size,
        rebuild=rebuild,
        extensions=None if extensions is None else tuple(extensions),
        max_file_size=max_file_size,
        exclude=None if exclude is None else tuple(exclude),
        site_detection=site_detection,
        code=code,
        replace=replace,
    )
    return IndexJob(
        Path(source),
        database,
        table,
        options,
        embedder=lambda _stored_model: chosen,
        storage_options=storage_options,
        workers=workers,
        progress=progress,
        on_embed=(lambda done, total, _model: on_embed(done, total)) if on_embed else None,
    )


def normalise_extensions(extensions: Iterable[str]) -> frozenset[str]:
    """ "py, .TS" style lists -> {".py", ".ts"}; several values or comma-separated ones."""
    found = set()
    for value in extensions:
        for part in str(value).split(","):
            part = part.strip().lower()
            if part:
                found.add(part if part.startswith(".") else f".{part}")
    return frozenset(found)
