"""Markdown lines as a reader sees them: which lines are code (fences), and headings without their
``#`` markers or setext underlines, for snippets and context blocks shown to a person or an agent.

Every pass here runs on every line of every document, hostile ones too, so each is linear in the
line: anchored patterns that cannot backtrack far, or plain string operations where a pattern
would try every split of a run of blanks or backticks (issue 37: one 4 KB heading line took 52 s).
"""

from __future__ import annotations

import re

_FENCE_START = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# An ATX heading's opening: up to three spaces, one to six #, and every blank after them.
ATX_OPEN = re.compile(r" {0,3}(#{1,6})[ \t]+")
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
    return _trailing_fence(line) if line.count("```") % 2 == 1 else None


def _trailing_fence(line: str) -> str | None:
    """The run of three or more backticks that ends ``line`` (blanks may follow), or None: HTML
    extraction sometimes opens a fence at the end of a prose line ("... the data type is ```").

    String operations rather than a search for ``(`{3,})[ \t]*$``, which started again at every
    backtick of a long run in the middle of a line and read to its end each time (quadratic: 64 KB
    of backticks took 28 s, 128 KB 113 s)."""
    end = line.rstrip(" \t")
    run = len(end) - len(end.rstrip("`"))
    return "`" * run if run >= 3 else None


def atx_heading(line: str, closed: bool = True) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line, or None: ``## Install ##`` -> (2, "Install").

    The text loses its trailing blanks and, when ``closed``, a closing run of # that follows a
    blank (CommonMark: "# Learning C#" keeps its "#"). A line of marks and blanks only ("#   ")
    gives its last blank, and "# " nothing, as ``^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$``
    did (its lazy group needed one character). String operations replace that pattern: it tried
    every split of a run of blanks inside the line (quadratic: 64 KB took 27 s, 128 KB 101 s).
    """
    opening = ATX_OPEN.match(line)
    if opening is None:
        return None
    level = len(opening.group(1))
    text = heading_text(line[opening.end() :], closed)
    if text:
        return level, text
    blanks = opening.end() - opening.end(1)
    return (level, line[-1]) if blanks >= 2 else None


def heading_text(rest: str, closed: bool = True) -> str:
    """``rest``, what follows an ATX opening (``ATX_OPEN``), without its trailing blanks and, when
    ``closed``, without a closing run of # after a blank."""
    text = rest.rstrip(" \t")
    if closed:
        bare = text.rstrip("#")
        # A blank before the #s, and text before the blank (rest starts with a non-blank).
        if bare != text and bare.endswith((" ", "\t")):
            return bare.rstrip(" \t")
    return text


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
            opening = ATX_OPEN.match(line)
            if opening:
                line = heading_text(line[opening.end() :])
            elif previous.strip() and _SETEXT_UNDERLINE.match(line) and not _FENCE_START.match(previous):
                previous = ""
                continue
        fence = next_fence(line, fence)
        out.append(line)
        previous = line if fence is None else ""
    return "\n".join(out)
