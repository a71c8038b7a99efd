"""Markdown lines as a reader sees them: which lines are code (fences), and headings without their
``#`` markers or setext underlines, for snippets and context blocks shown to a person or an agent."""

from __future__ import annotations

import re

_FENCE_START = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# HTML extraction sometimes opens a fence at the end of a prose line ("... the data type is ```",
# "(```").
_FENCE_TRAILING = re.compile(r"(`{3,})[ \t]*$")
_ATX_MARKER = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def next_fence(line: str, fence: str | None) -> str | None:
    """The code fence open after ``line`` ("```", "~~~~"), given the one open before it (None: none).

    A ``#`` line inside a fence is a comment of the code, not a heading.
    """
    if "`" not in line and "~" not in line:  # most lines: neither rule below can apply (a per-line cost)
        return fence
    start = _FENCE_START.match(line)
    if fence is not None:
        closes = start and start.group(1)[0] == fence[0] and len(start.group(1)) >= len(fence)
        return None if closes else fence
    if start:
        return start.group(1)
    trailing = _FENCE_TRAILING.search(line)
    return trailing.group(1) if trailing and line.count("```") % 2 == 1 else None


def plain_headings(text: str) -> str:
    """``text`` with each Markdown heading as its words alone: ``# Refund policy`` -> ``Refund
    policy``, a setext underline (``Warranty`` over ``=====``) dropped. Code fences are left as
    they are (a ``#`` line there is a comment). Text with neither marker comes back unchanged."""
    if "#" not in text and "==" not in text and "--" not in text:
        return text
    out: list[str] = []
    fence: str | None = None
    previous = ""
    for line in text.split("\n"):
        if fence is None:
            atx = _ATX_MARKER.match(line)
            if atx:
                line = atx.group(1)
            elif previous.strip() and _SETEXT_UNDERLINE.match(line) and not _FENCE_START.match(previous):
                previous = ""
                continue
        fence = next_fence(line, fence)
        out.append(line)
        previous = line if fence is None else ""
    return "\n".join(out)
