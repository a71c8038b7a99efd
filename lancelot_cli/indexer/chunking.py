"""Split text into chunks of about ``size`` characters on paragraph boundaries (pure functions)."""

from __future__ import annotations

import re

CHUNK_CHARS = 1200
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def split_long(paragraph: str, size: int) -> list[str]:
    """Cut a paragraph longer than ``size`` at the last space or line break before each limit (hard cut if none)."""
    pieces = []
    rest = paragraph.strip()
    while len(rest) > size:
        cut = max(rest.rfind(" ", 0, size + 1), rest.rfind("\n", 0, size + 1), rest.rfind("\t", 0, size + 1))
        if cut <= 0:
            cut = size
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
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
