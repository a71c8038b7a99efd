"""Split text into chunks of about ``size`` characters on paragraph boundaries (pure functions)."""

from __future__ import annotations

import re

from lancelot_cli.mdtext import atx_heading, next_fence

CHUNK_CHARS = 1200
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_NON_SPACE = re.compile(r"\S")  # \s is what str.strip() removes (Py_UNICODE_ISSPACE)


def split_long(paragraph: str, size: int) -> list[str]:
    """Cut a paragraph longer than ``size`` at the last space or line break before each limit (hard cut if none).

    Walks the paragraph with indices: slicing off the rest at each cut would copy it every time,
    and time would grow with the square of its length (a 50 MB paragraph never finished).
    """
    text = paragraph.strip()
    pieces = []
    start, end = 0, len(text)
    while end - start > size:
        limit = start + size + 1
        cut = max(text.rfind(" ", start, limit), text.rfind("\n", start, limit), text.rfind("\t", start, limit))
        if cut <= start:
            cut = start + size
        pieces.append(text[start:cut].rstrip())
        following = _NON_SPACE.search(text, cut)  # the next piece starts after the white space (as lstrip)
        start = following.start() if following else end
    if start < end:
        pieces.append(text[start:])
    return pieces


def chunk_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Paragraphs packed greedily into chunks of at most ``size`` characters.

    Paragraphs are separated by blank lines and joined back with one blank line; a paragraph
    longer than ``size`` is cut at spaces. No chunk is empty and none is longer than ``size``.
    """
    if size < 1:
        raise ValueError("size must be positive")
    chunks: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n").replace("\r", "\n")):
        for piece in split_long(paragraph, size) if paragraph.strip() else []:
            if current and len(current) + 2 + len(piece) > size:
                chunks.append(current)
                current = piece
            else:
                current = f"{current}\n\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def chunk_lines(text: str, chunks: list[str]) -> list[tuple[int, int] | None]:
    """For each chunk of ``chunk_text(text)``, its first and last line in ``text`` (from 1).

    A chunk is its pieces (paragraphs, or parts of a long one) joined by one blank line, and only
    white space lies between one piece and the next in ``text``: each piece is found at or after
    the end of the one before, so the walk is linear and a repeated paragraph is never mistaken
    for an earlier copy.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found: list[tuple[int, int] | None] = []
    at, line = 0, 1  # the walk's offset in ``text`` and the line that offset is on
    for chunk in chunks:
        first = last = line
        for n, piece in enumerate(chunk.split("\n\n")):
            start = text.find(piece, at)
            if start < 0:  # not a chunk of this text: no line rather than a wrong one
                return found + [None] * (len(chunks) - len(found))
            line += text.count("\n", at, start)
            first = line if n == 0 else first
            at = start + len(piece)
            line += piece.count("\n")
            last = line
        found.append((first, last))
    return found


def heading_paths(chunks: list[str], title: str) -> list[str]:
    """For each chunk, the headings it sits under: "Doc title > Section > Subsection".

    Follows ATX headings (``#`` to ``######``) through the chunks in order; a chunk that starts
    with a heading sits under that heading. The document's title is the first element unless the
    top heading already says it.
    """
    stack: list[tuple[int, str]] = []
    paths = []
    fence: str | None = None  # a code fence can span chunks

    def heading(line: str) -> None:
        nonlocal stack, fence
        found = atx_heading(line) if fence is None else None
        fence = next_fence(line, fence)
        if found:
            level, name = found
            stack = [(lvl, seen) for lvl, seen in stack if lvl < level] + [(level, name.strip())]

    for chunk in chunks:
        lines = chunk.split("\n")
        if lines:
            heading(lines[0])  # a chunk that starts with a heading sits under it
        names = [name for _, name in stack]
        if not names or names[0] != title:
            names.insert(0, title)
        paths.append(" > ".join(names))
        for line in lines[1:]:
            if "#" in line or "`" in line or "~" in line:  # else neither a heading nor a fence line
                heading(line)
    return paths


LINES_PER_WINDOW = 60
LINE_OVERLAP = 10


def line_windows(
    text: str, lines: int = LINES_PER_WINDOW, overlap: int = LINE_OVERLAP, max_chars: int = CHUNK_CHARS * 4
) -> list[tuple[int, int, str]]:
    """Overlapping windows of source lines: (first line, last line, text), lines counted from 1.

    A window also ends early when it passes ``max_chars`` (minified files); blank windows are dropped.
    """
    all_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    windows: list[tuple[int, int, str]] = []
    start = 0
    while start < len(all_lines):
        end = start
        size = 0
        while end < len(all_lines) and end - start < lines and (size == 0 or size + len(all_lines[end]) <= max_chars):
            size += len(all_lines[end]) + 1
            end += 1
        body = "\n".join(all_lines[start:end])
        if body.strip():
            windows.append((start + 1, end, body[:max_chars]))
        if end >= len(all_lines):
            break
        start = max(end - overlap, start + 1)
    return windows
