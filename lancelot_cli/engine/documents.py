"""Whole documents and windows of chunks read from the table (never from files), and the overview
of a collection (README/index/overview documents, then each document's opening chunk)."""

from __future__ import annotations

import os
import re
from typing import Any, NoReturn

from lancelot_cli.codewords import without_name_words
from lancelot_cli.engine.listing import closest
from lancelot_cli.engine.packing import Chunk, cut_text
from lancelot_cli.engine.ranking import source_of
from lancelot_cli.errors import ColumnNotFoundError, DocumentNotFoundError
from lancelot_cli.limits import BUDGET_PARAMETER
from lancelot_cli.models import Document
from lancelot_cli.storage.read.database import ReadOnlyTable
from lancelot_cli.storage.read.filters import RowFilter, equal_to
from lancelot_cli.storage.schema import CHUNK, CODE_KINDS, ID, KIND, LINE_START, PAGE, TITLE

OVERVIEW_NAMES = re.compile(r"^(readme|index|overview|intro|introduction|getting[-_ ]started|summary|about)$", re.I)

Row = dict[str, Any]


def source_column(tbl: ReadOnlyTable) -> str:
    """The table's source column, or an error naming the ones looked for."""
    column = tbl.facts.source_column
    if column is None:
        raise ColumnNotFoundError(f"table {tbl.name!r} has no source column ({', '.join(tbl.facts.source_columns)})")
    return column


def document_rows(tbl: ReadOnlyTable, source_col: str, columns: list[str], source: str) -> list[Row]:
    """A document's rows in chunk order; when there is no such document, an error that names the
    closest sources by name (hint ``find_source``)."""
    rows = tbl.rows(columns, equal_to(source_col, source))
    if not rows:
        near = _did_you_mean(tbl, source_col, source)
        raise DocumentNotFoundError(
            f"no document {source!r} in table {tbl.name!r}{near}", hint=None if near.endswith("?") else "find_source"
        )
    if CHUNK in columns:
        rows.sort(key=lambda row: row.get(CHUNK) or 0)
    return rows


def document(
    tbl: ReadOnlyTable,
    text_col: str,
    source: str | None,
    chunk_id: str | None,
    before: int,
    after: int,
    budget: int,
    page: int | None = None,
) -> Document:
    """The whole document, or ``before`` and ``after`` chunks around ``chunk_id``, or the chunks
    of one ``page`` of a PDF, cut to ``budget``."""
    tbl.require_column(text_col, "text")
    source_col = source_column(tbl)
    columns = [c for c in (ID, source_col, TITLE, CHUNK, PAGE, text_col, LINE_START, KIND) if c in tbl.columns]
    if chunk_id:
        if ID not in tbl.columns:
            raise ColumnNotFoundError(f"table {tbl.name!r} has no id column; ask by source instead")
        hit = tbl.rows(columns, equal_to(ID, chunk_id))
        if not hit:
            _no_chunk(tbl, source_col, chunk_id)
        source = str(hit[0][source_col])
    rows = document_rows(tbl, source_col, columns, str(source))
    texts = [without_name_words(str(row.get(text_col) or "")) for row in rows]  # the file's lines, exactly
    if is_code(rows):  # a source file reads as its lines, numbered as in the file (issue 47 #5)
        # fenced: a terminal draws the lines as they are, not as Markdown paragraphs
        texts = [f"```\n{numbered(text, row.get(LINE_START))}\n```" for text, row in zip(texts, rows, strict=True)]
        rows = [{**row, TITLE: source} for row in rows]  # its title is the file, not its first definition
    first, last = 0, len(rows) - 1
    if page is not None:
        first, last = _page_span(rows, page, str(source), tbl.name)
    if chunk_id:
        at = next(i for i, row in enumerate(rows) if row.get(ID) == chunk_id)
        first, last = max(0, at - before), min(len(rows) - 1, at + after)
        # The chunk asked for is always shown: drop the ones before it that would crowd it out.
        while (
            first < at
            and len(_header(rows, first, last, source))
            + _length(texts[first : at + 1])
            + len(_cut_line(last - at, at + 1, str(source)))
            > budget
        ):
            first += 1
    title = str(rows[0].get(TITLE) or os.path.basename(str(source)))
    header = _header(rows, first, last, source)
    body, included = _join_within(header, texts[first : last + 1], budget, first, str(source))
    return Document(
        source=str(source),
        title=title,
        table=tbl.name,
        chunks=len(rows),
        first=first,
        last=first + included - 1 if included else None,
        included=included,
        cut=last - first + 1 - included,
        budget=budget,
        context=body,
    )


def _did_you_mean(tbl: ReadOnlyTable, source_col: str, source: str, suffix: str = "") -> str:
    """ "; did you mean 'a/x.md' or 'b/x.md'?" for the sources closest to ``source`` (each followed
    by ``suffix``), else how sources are written. Scans the source column: only on this error's path."""
    names = {str(row[source_col]) for row in tbl.rows([source_col]) if row.get(source_col)}
    near = closest(source, names)
    if not near:
        return "; sources are paths as search hits show them"
    return "; did you mean " + " or ".join(repr(name + suffix) for name in near) + "?"


def _no_chunk(tbl: ReadOnlyTable, source_col: str, chunk_id: str) -> NoReturn:
    """The error for an id no chunk has: the document's valid range when the document exists."""
    source, _, number = chunk_id.rpartition("#")
    rows = (
        tbl.rows([c for c in (source_col, CHUNK) if c in tbl.columns], equal_to(source_col, source)) if source else []
    )
    if not rows:
        near = _did_you_mean(tbl, source_col, source, f"#{number}") if source else ""
        raise DocumentNotFoundError(
            f"no chunk with id {chunk_id!r} in table {tbl.name!r}{near}",
            hint=None if near.endswith("?") else "find_ids",
        )
    numbers = sorted(int(row[CHUNK]) for row in rows if row.get(CHUNK) is not None) or [0, len(rows) - 1]
    span = f"#{numbers[0]}" if numbers[0] == numbers[-1] else f"#{numbers[0]}–#{numbers[-1]}"
    raise DocumentNotFoundError(
        f"no chunk #{number} in {source!r} (table {tbl.name!r}): its chunks are {span}, "
        f"so ask for {source}#{numbers[0]} to {source}#{numbers[-1]}"
    )


def is_code(rows: list[Row]) -> bool:
    """Whether the rows are a source file's chunks, each knowing the line it starts on."""
    return bool(rows) and all(row.get(KIND) in CODE_KINDS and row.get(LINE_START) for row in rows)


def numbered(text: str, first: int | None) -> str:
    """``text`` with each line led by its number in the file (``first`` for the first), as ``cat -n``."""
    if not first:
        return text
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{n:>{width}}  {line}" if line else f"{n:>{width}}" for n, line in enumerate(lines, first))


def _header(rows: list[Row], first: int, last: int, source: str | None) -> str:
    """Title, source and which chunks are shown, numbered from 0 like the ids (``path#0``)."""
    title = str(rows[0].get(TITLE) or os.path.basename(str(source)))
    count = len(rows)
    span = (
        f"all {count} chunk{'s' if count != 1 else ''}"
        if (first, last) == (0, count - 1)
        else f"chunk #{first} of {count}"
        if first == last
        else f"chunks #{first}–#{last} of {count}"
    )
    pages = sorted({row[PAGE] for row in rows[first : last + 1] if row.get(PAGE) is not None})
    where = "" if not pages else f" · page {pages[0]}" if len(pages) == 1 else f" · pages {pages[0]}–{pages[-1]}"
    return f"# {title}\nsource: {source} · {span}{where}\n"


def _page_span(rows: list[Row], page: int, source: str, table: str) -> tuple[int, int]:
    """The first and last chunk (positions in ``rows``) on ``page``; an error naming the pages there are."""
    on_page = [i for i, row in enumerate(rows) if row.get(PAGE) == page]
    if on_page:
        return on_page[0], on_page[-1]
    pages = sorted({row[PAGE] for row in rows if row.get(PAGE) is not None})
    have = f"its indexed pages run from {pages[0]} to {pages[-1]}" if pages else "it has no page numbers (not a PDF)"
    raise DocumentNotFoundError(f"no page {page} of {source!r} in table {table!r}: {have}")


def _length(texts: list[str]) -> int:
    return sum(len(text.strip()) + 2 for text in texts)


def overview(tbl: ReadOnlyTable, text_col: str, limit: int, narrow: RowFilter | None = None) -> list[Chunk]:
    """README/index/overview documents first, then the opening chunk of each document, shallow
    paths first. Picks from a scan without the text column, then reads the texts it picked."""
    tbl.require_column(text_col, "text")
    sources = tbl.facts.source_columns
    wanted = [c for c in (ID, *sources, TITLE, CHUNK) if c in tbl.columns]
    if ID not in wanted:  # no way to fetch the picked rows again: read the text in the same scan
        wanted.append(text_col)
    firsts: dict[str, int] = {}
    ranked = []
    for position, row in enumerate(tbl.rows(wanted, narrow)):
        source = source_of(row, sources)
        chunk_no = row.get(CHUNK)
        first = firsts.setdefault(source, position) == position if chunk_no is None else chunk_no == 0
        stem = os.path.splitext(os.path.basename(source))[0]
        if OVERVIEW_NAMES.match(stem):
            priority = 0
        elif first:
            priority = 1
        else:
            continue
        ranked.append(((priority, source.count("/"), source, chunk_no or 0), row, source))
    ranked.sort(key=lambda item: item[0])
    picked = ranked[:limit]
    if ID in wanted and picked:
        ids = tuple(row[ID] for _, row, _ in picked)
        texts = {r[ID]: r[text_col] for r in tbl.rows([ID, text_col], equal_to(ID, *ids))}
        for _, row, _ in picked:
            row[text_col] = texts.get(row[ID])
    return [
        Chunk(
            str(row.get(TITLE) or os.path.basename(source) or "(untitled)"),
            source,
            without_name_words(str(row.get(text_col) or "")),
        )
        for _, row, source in picked
    ]


MIN_CUT = 200  # characters of room worth filling with the start of a chunk that does not fit whole


def _join_within(header: str, texts: list[str], budget: int, first: int, source: str) -> tuple[str, int]:
    """Header plus whole chunk texts in order while they fit; a last line says what was cut and
    which id to go on from. The chunk that does not fit is cut to fit rather than left out when it
    is the first (so an answer is never empty) or when at least ``MIN_CUT`` characters of room are
    left (a page whose first chunk is only a heading showed that heading alone: issue 39); "next"
    always moves past what was shown."""
    body = header
    included = 0
    for n, text in enumerate(texts):
        rest = len(texts) - n - 1
        tail = _cut_line(rest, first + n + 1, source) if rest else ""
        piece = "\n" + text.strip() + "\n"
        if len(body) + len(piece) + len(tail) > budget:
            room = budget - len(body) - len(tail) - 2
            if n == 0 or room >= MIN_CUT:
                shown = cut_text(text, room)
                if shown:
                    body += "\n" + shown + "\n"
                    included += 1
            break
        body += piece
        included += 1
    if included < len(texts):
        tail = _cut_line(len(texts) - included, first + included, source)
        if len(body) + len(tail) > budget:
            body = body[: max(0, budget - len(tail))]
        body += tail
    return body[:budget], included


def _cut_line(count: int, next_chunk: int, source: str) -> str:
    # Part of the document's text (pinned by the golden test); BUDGET_PARAMETER is the tool's word
    # (`lancelot show` puts its own option in its place: cli/read.py).
    # Short: at the smallest budget it shares 200 characters with the header and the first chunk.
    return (
        f"\n_{count} more chunk{'s' if count != 1 else ''} cut to fit the budget; next: {source}#{next_chunk} "
        f"(or a larger {BUDGET_PARAMETER})._\n"
    )
