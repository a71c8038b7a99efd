"""The index options saved with a table, and a run's: what a flag given now changes, and what a
run without the flag keeps. They live in the field metadata of the `path` column
(`TableWriter.save_index_options`) and are saved again only when they change.

- ``exclude`` and ``siteDetection``: a run without ``--exclude`` or ``--[no-]site-detection``
  keeps the saved ones.
- ``embed: false``, after ``--no-embed``: a run without ``--embed``/``--no-embed`` stays text only
  and says nothing about vectors (the choice was made; issue 39 item 9a: the "or --no-embed to say
  no" note came back on every run). ``--embed`` (or ``--embed-model``) removes it, and plain runs
  embed with a local model when one is here again.
- ``chunkSize``: the size every chunk of the table was cut at, saved by a run that made or rebuilt
  the table. A run without ``--chunk-size`` uses it; one with another size keeps it too (a table
  whose files were cut at two sizes would rank them unevenly, and only the changed files would
  get the new one) and says in one line that ``--rebuild`` applies the new size (item 9b: it was
  taken for the changed files only, without a word). A table made before the size was saved has
  none: there a run cuts at the size given (or the default), as it always did.
- ``textVersion``: the version of the text this program reads out of the files (``TEXT_VERSION``).
  A table whose text an older version read (or that saved none) has every file read again once,
  so that a better cleaning reaches the files that did not change (issue 39 item 5: the inline
  HTML tags of the FastAPI docs stayed in existing tables until ``--rebuild``); a chunk whose text
  comes out the same is not rewritten.
- ``extensions``: the source-code extensions ``--ext`` added, normalised (".py") and sorted. A run
  without ``--ext`` indexes the same ones; ``--ext ''`` clears them (issue 45 item 3: a re-run
  without the flag removed all the code).
- ``code``: ``--code`` or ``--no-code``, once given: whether source code is indexed. A table that
  saved neither indexes code when its folder is a project (``scanning.is_project``, issue 47).
- ``source``: the folder the table was indexed from, absolute with links resolved. A run from
  another folder that would remove documents of the table is refused unless ``--replace``
  (``plan.check_source``, issue 45 item 2); one that removes none (the same folder moved, or
  reached by another path) goes on and saves its own folder.
- ``languages`` and ``descriptions``: kept by the pipeline (``choose_languages``, ``plan_run``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from lancelot_cli.indexer.chunking import CHUNK_CHARS
from lancelot_cli.indexer.job import normalise_extensions


class Options(Protocol):
    """The flags of `lancelot index` read here (``job.Options``; a protocol, so that this module
    does not import the pipeline that imports it)."""

    @property
    def embed(self) -> bool | None: ...
    @property
    def chunk_size(self) -> int | None: ...
    @property
    def rebuild(self) -> bool: ...
    @property
    def extensions(self) -> tuple[str, ...] | None: ...
    @property
    def exclude(self) -> tuple[str, ...] | None: ...
    @property
    def code(self) -> bool | None: ...
    @property
    def site_detection(self) -> bool | None: ...


# Raise it when a change to reading or cleaning changes the text of a file already indexed
# (2: inline HTML in Markdown read as its text, DocBook book-index entries left out; issue 39).
TEXT_VERSION = 2

# The index options a table has when none were saved with it.
DEFAULT_OPTIONS = {"exclude": [], "extensions": [], "siteDetection": True}


def chosen_options(options: Options, saved: dict[str, Any], exists: bool, source: Path) -> dict[str, Any]:
    """This run's options in the form they are saved in, from its flags (``options``), the ones
    ``saved`` with the table, whether the table ``exists`` already, and the folder indexed
    (``source``, resolved)."""
    if options.exclude is None:
        patterns = tuple(saved.get("exclude", ()))
    else:
        patterns = tuple(pattern for pattern in options.exclude if pattern.strip())  # --exclude '' clears
    if options.extensions is None:
        extensions = saved_extensions(saved)
    else:
        extensions = sorted(normalise_extensions(options.extensions))  # --ext '' clears
    detect = bool(saved.get("siteDetection", True)) if options.site_detection is None else options.site_detection
    chosen: dict[str, Any] = {
        "exclude": list(patterns),
        "extensions": extensions,
        "siteDetection": detect,
        "source": str(source),
    }
    code = saved.get("code") if options.code is None else options.code
    if isinstance(code, bool):  # --code / --no-code, now or saved; else decided by the folder (scanning.is_project)
        chosen["code"] = code
    if isinstance(saved.get("languages"), list):
        chosen["languages"] = saved["languages"]
    if no_embed(options, saved):
        chosen["embed"] = False
    chosen["textVersion"] = TEXT_VERSION
    size = _saved_size(saved)
    if not exists or options.rebuild:
        chosen["chunkSize"] = options.chunk_size or size or CHUNK_CHARS
    elif size:
        chosen["chunkSize"] = size
    return chosen


def saved_extensions(saved: dict[str, Any]) -> list[str]:
    """The ``--ext`` extensions saved with the table ([] for a table that saved none)."""
    found = saved.get("extensions")
    return sorted(normalise_extensions(e for e in found if isinstance(e, str))) if isinstance(found, list) else []


def saved_source(saved: dict[str, Any]) -> str | None:
    """The folder the table was indexed from, as saved with it (None for a table that saved none)."""
    found = saved.get("source")
    return found if isinstance(found, str) and found else None


def read_again(saved: dict[str, Any], exists: bool) -> bool:
    """Whether every file of an existing table is to be read again: an older version read its text."""
    return exists and saved.get("textVersion") != TEXT_VERSION


def no_embed(options: Options, saved: dict[str, Any]) -> bool:
    """Whether the run writes no vectors because ``--no-embed`` says so, now or saved with the table."""
    return options.embed is False or (options.embed is None and saved.get("embed") is False)


def chunk_size(options: Options, chosen: dict[str, Any]) -> int:
    """The size this run cuts chunks at: the table's, else the one given, else the default."""
    return int(chosen.get("chunkSize") or options.chunk_size or CHUNK_CHARS)


def chunk_size_note(options: Options, chosen: dict[str, Any]) -> str | None:
    """The line that says a ``--chunk-size`` other than the table's waits for ``--rebuild``."""
    size = chosen.get("chunkSize")
    if options.chunk_size is None or not size or options.chunk_size == size:
        return None
    return (
        f"--chunk-size {options.chunk_size} is not applied: the table's chunks are cut at {size} characters; "
        f"run again with --rebuild to cut every file at {options.chunk_size}"
    )


def _saved_size(saved: dict[str, Any]) -> int | None:
    size = saved.get("chunkSize")
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None
