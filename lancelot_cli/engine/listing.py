"""What is indexed: the documents of a table (`lancelot ls`), and the sources closest by name to
one that is not there (the "did you mean" of `show` and ``lancedb_document``)."""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from lancelot_cli.engine.ranking import source_of
from lancelot_cli.errors import ColumnNotFoundError
from lancelot_cli.models import DocumentEntry, DocumentList
from lancelot_cli.storage.read.database import ReadOnlyTable
from lancelot_cli.storage.read.filters import build_filter
from lancelot_cli.storage.schema import CHUNK, FILE_SIZE, TITLE

SUGGESTIONS = 3  # closest sources named when one is not found


@dataclass
class _Seen:
    chunks: int = 0
    size: int | None = None
    title: str | None = None
    first: int | None = None  # the chunk number the title was read from (the lowest seen)


def documents(tbl: ReadOnlyTable, path_prefix: str | None = None) -> DocumentList:
    """Every document of ``tbl`` (under ``path_prefix``) with its chunk count, file size and title,
    sorted by path. Reads the bookkeeping columns only, never the text. A table without a source
    column (one another tool wrote: a ``text`` column and no path) has no documents to list: an
    error saying so, as `show` gives, rather than one nameless document."""
    sources = tbl.facts.source_columns
    if tbl.facts.source_column is None:
        raise ColumnNotFoundError(
            f"table {tbl.name!r} has no source column ({', '.join(sources)}), so its rows belong to no "
            f"document to list; search them instead",
            hint="search_rows",
        )
    wanted = [c for c in (*sources, TITLE, CHUNK, FILE_SIZE) if c in tbl.columns]
    found: dict[str, _Seen] = {}
    for row in tbl.rows(wanted, build_filter(tbl.facts, path_prefix, None)):
        seen = found.setdefault(source_of(row, sources), _Seen())
        seen.chunks += 1
        if row.get(FILE_SIZE) is not None:
            seen.size = int(row[FILE_SIZE])
        chunk = row.get(CHUNK)
        earlier = seen.title is None or (chunk is not None and (seen.first is None or chunk < seen.first))
        if row.get(TITLE) and earlier:
            seen.title, seen.first = str(row[TITLE]), chunk
    entries = tuple(
        DocumentEntry(source, seen.chunks, seen.size, seen.title or posixpath.basename(source))
        for source, seen in sorted(found.items())
    )
    return DocumentList(table=tbl.name, path_prefix=path_prefix, documents=entries)


def closest(wanted: str, sources: Iterable[str], limit: int = SUGGESTIONS) -> list[str]:
    """The sources most like ``wanted`` by name: the same file name in another folder first
    (``cors.md`` -> ``tutorial/cors.md``), then paths ending with it, then near spellings."""
    names = sorted(set(sources))
    wanted = wanted.strip().lstrip("./")
    base = posixpath.basename(wanted)
    same_name = [s for s in names if posixpath.basename(s) == base]
    ending = [s for s in names if s.endswith(wanted) and s not in same_name]
    by_base: dict[str, list[str]] = {}
    for s in names:
        by_base.setdefault(posixpath.basename(s), []).append(s)
    near: list[str] = []
    if not same_name:  # near spellings only when no file has the very name
        near_names = difflib.get_close_matches(base, list(by_base), n=limit, cutoff=0.75)
        near = [s for name in near_names for s in by_base[name]]
        near += difflib.get_close_matches(wanted, names, n=limit, cutoff=0.75)
    picked: list[str] = []
    for source in (*same_name, *ending, *near):
        if source not in picked:
            picked.append(source)
    return picked[:limit]
