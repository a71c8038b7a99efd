"""A document as table rows: its chunks (sections of prose, windows of lines for code), each with
where it sits, a content hash that says when it changed, and its file's state and front matter."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from lancelot_cli.indexer.chunking import CHUNK_CHARS, chunk_lines, chunk_text, heading_paths, line_windows
from lancelot_cli.indexer.scanning import suffix_of
from lancelot_cli.indexer.sources import Document
from lancelot_cli.storage.schema import (
    CHUNK,
    FILE_HASH,
    FILE_MTIME,
    FILE_SIZE,
    HASH,
    HEADING,
    ID,
    KIND,
    LINE_END,
    LINE_START,
    PAGE,
    PATH,
    TEXT,
    TITLE,
)

# (title, text, heading path, first line, last line, page, kind) of one chunk; kind None: its document's
Piece = tuple[str, str, str | None, int | None, int | None, int | None, str | None]


def chunk_hash(title: str, text: str, kind: str | None = None) -> str:
    """A chunk's content hash; a chunk whose ``kind`` is not its document's (a Rust file's tests) has
    it in the hash too, so the row is rewritten when only its kind changed."""
    marked = f"{text}\x00{kind}" if kind else text
    return hashlib.sha256(f"{title}\x00{marked}".encode()).hexdigest()[:16]


# A document's language is read off its first chunks (as the table's languages are: languages.py).
LANGUAGE_CHUNKS = 3


def mark_row_languages(rows: list[dict[str, Any]], table_languages: Sequence[str]) -> None:
    """Give each row whose document is in a language analyzed otherwise than the table's text index
    (``analyzer.row_text_language``) its text in that language's column (``text_ko``...). The
    language is part of the row's hash, so a run that marks a row another way rewrites it, and the
    same folder gives the same rows however it was indexed (each document decides alone)."""
    from lancelot_cli.indexer.languages import document_language
    from lancelot_cli.storage.analyzer import ROW_TEXT_COLUMNS, row_text_language

    chunks: dict[str, list[str]] = {}
    for row in rows:
        texts = chunks.setdefault(str(row.get(PATH)), [])
        if len(texts) < LANGUAGE_CHUNKS:
            texts.append(str(row.get(TEXT) or ""))
    marks = {path: row_text_language(document_language(texts) or "", table_languages) for path, texts in chunks.items()}
    for row in rows:
        code = marks[str(row.get(PATH))]
        if code is not None:
            row[ROW_TEXT_COLUMNS[code]] = row[TEXT]
            row[HASH] = hashlib.sha256(f"{row[HASH]}\x00{code}".encode()).hexdigest()[:16]


def rows_for(
    doc: Document, size: int = CHUNK_CHARS, stat: tuple[int | None, int | None] = (None, None)
) -> list[dict[str, Any]]:
    """The table rows of one document: ``{id, path, title, chunk, text, hash}``, where the chunk sits
    (``heading`` path; ``line_start``/``line_end`` in the file, except for HTML and paged documents;
    ``page`` for a PDF page, a slide or a chapter), its file's state,
    and its front matter. A code chunk may have a ``kind`` of its own (indexer/code.py ``chunk_kind``)."""
    file_size, file_mtime = stat
    return [
        {
            **doc.meta,
            **({KIND: kind} if kind else {}),
            ID: f"{doc.path}#{n}",
            PATH: doc.path,
            TITLE: title,
            CHUNK: n,
            TEXT: text,
            HASH: chunk_hash(title, text, kind),
            FILE_SIZE: file_size,
            FILE_MTIME: file_mtime,
            FILE_HASH: doc.digest or None,
            HEADING: heading,
            LINE_START: first,
            LINE_END: last,
            PAGE: page,
        }
        for n, (title, text, heading, first, last, page, kind) in enumerate(_pieces(doc, size))
    ]


def _pieces(doc: Document, size: int) -> list[Piece]:
    if doc.kind == "code":  # longer than prose chunks: code reads in larger units
        return _code_pieces(doc, max(size, 200) * 4)
    if doc.parts:  # PDF pages, slides, chapters: chunked one by one, so no chunk spans two parts
        chunks = [(text, page) for page, part in doc.parts for text in chunk_text(part, size)]
        texts = [text for text, _ in chunks]
        return [
            (doc.title, text, heading, None, None, page, None)
            for (text, page), heading in zip(chunks, heading_paths(texts, doc.title), strict=True)
        ]
    texts = chunk_text(doc.text, size)
    # Markdown and text keep their lines (front matter counted, site markup blanked line for line),
    # so `path:line` opens the file where the chunk starts; HTML was rewritten and has no lines.
    lines = chunk_lines(doc.text, texts) if doc.kind in ("markdown", "text", "rst", "asciidoc") else [None] * len(texts)
    skip = doc.first_line - 1
    return [
        (doc.title, text, heading, *((span[0] + skip, span[1] + skip) if span else (None, None)), None, None)
        for text, heading, span in zip(texts, heading_paths(texts, doc.title), lines, strict=True)
    ]


def _code_pieces(doc: Document, max_chars: int) -> list[Piece]:
    """A source file's chunks: one per definition where its language is parsed here (indexer/code.py),
    titled with the qualified name and lines, those that exist only for tests of kind "test" in a
    file of code; else windows of lines."""
    from lancelot_cli.indexer.code import chunk_kind, code_chunks

    chunks = code_chunks(doc.text, suffix_of(doc.path), max_chars)
    if chunks is None:
        return [
            (f"{doc.path}:{first}-{last}", text, None, first, last, None, None)
            for first, last, text in line_windows(doc.text, max_chars=max_chars)
        ]
    pieces: list[Piece] = []
    file_kind = str(doc.meta.get(KIND) or "code")
    for chunk in chunks:
        where = f"{doc.path}:{chunk.first}-{chunk.last}"
        title = f"{chunk.name} ({where})" if chunk.name else where
        kind = chunk_kind(file_kind, chunk)
        heading = _code_heading(chunk.name, chunk.defines)
        pieces.append((title, chunk.text, heading, chunk.first, chunk.last, None, None if kind == file_kind else kind))
    return pieces


def _code_heading(name: str | None, defines: tuple[str, ...]) -> str | None:
    """The names a code chunk defines, each with its words: the heading is a boosted full-text field,
    so "username replacement view" finds ``UsernameReplacementView``, and a query naming a symbol
    ranks its definition above the files that import or call it."""
    from lancelot_cli.indexer.code import name_words

    names = [name] if name else list(defines)
    if not names:
        return None
    shown = []
    for each in names[:40]:
        words = name_words(each)
        shown.append(each if words == each.lower() else f"{each} ({words})")
    return ", ".join(shown)
