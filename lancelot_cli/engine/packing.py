"""Pack ranked chunks into one Markdown context block that never passes a character budget
(``lancedb_query``, `lancelot query`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    title: str  # a hit's heading path ("Doc > Section") when it has one
    source: str
    text: str
    id: str | None = None  # a hit's id, for `lancelot show ID` and lancedb_document
    line: int | None = None  # the file line the chunk starts on


def _head(number: int, chunk: Chunk) -> str:
    place = f" · line {chunk.line}" if chunk.line else ""
    ident = f" · id {chunk.id}" if chunk.id else ""
    return f"## [{number}] {chunk.title}\nsource: {chunk.source}{place}{ident}\n\n"


def _section(number: int, chunk: Chunk) -> str:
    return f"{_head(number, chunk)}{chunk.text.strip()}\n"


def cut_text(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` characters (at a space when one is near the end), with a
    marker saying how much is shown: the best chunk is cut to fit, never dropped. "" if no room."""
    text = text.strip()
    if len(text) <= room:
        return text
    marker_room = len(_cut_marker(len(text), len(text)))  # the widest the marker can be
    keep = room - marker_room
    if keep <= 0:
        return ""
    shown = text[:keep]
    space = shown.rfind(" ", max(0, keep - 40))
    if space > 0:
        shown = shown[:space]
    shown = shown.rstrip()
    return shown + _cut_marker(len(shown), len(text))


def _cut_marker(shown: int, total: int) -> str:
    return f" … [cut to fit: {shown:,} of {total:,} characters]"


def _left_out_line(count: int, budget: int) -> str:
    plural = "chunk was" if count == 1 else "chunks were"
    return f"\n_{count} more {plural} left out to stay within {budget} characters._\n"


def pack(header: str, chunks: Sequence[Chunk], budget: int) -> tuple[str, int, int]:
    """Header, then one section per chunk in rank order, then a line counting what was left out.

    The best chunk is always in: cut to fit when it alone is over the budget (an answer from the
    glossary because the refund policy is long is worse than half the refund policy). A later chunk
    that would push the block past ``budget`` is left out (later, smaller ones may still fit).
    Returns (markdown, chunks included, chunks left out). The result is at most ``budget``
    characters: if even the header does not fit, it is cut.
    """
    body = header.rstrip("\n") + "\n"
    # Reserve room for the worst-case "left out" line so adding it can never break the budget.
    reserve = len(_left_out_line(len(chunks), budget)) if chunks else 0
    if len(body) + reserve > budget:
        # The header leaves no room for a chunk and the count line: cut the header, keep the count.
        tail = _left_out_line(len(chunks), budget) if chunks else ""
        if len(tail) > budget:
            tail = ""
        return body[: budget - len(tail)] + tail, 0, len(chunks)
    included = 0
    for rank, chunk in enumerate(chunks):
        section = "\n" + _section(included + 1, chunk)
        if len(body) + len(section) + reserve <= budget:
            body += section
            included += 1
        elif rank == 0:
            head = "\n" + _head(1, chunk)
            text = cut_text(chunk.text, budget - len(body) - reserve - len(head) - 1)
            if text:
                body += head + text + "\n"
                included += 1
    left_out = len(chunks) - included
    if left_out:
        tail = _left_out_line(left_out, budget)
        if len(body) + len(tail) <= budget:
            body += tail
    return body, included, left_out
