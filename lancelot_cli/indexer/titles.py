"""A document's title from its text: the first Markdown heading, cleaned of permalink marks and markup."""

from __future__ import annotations

import re

_SETEXT = re.compile(r"^(\S.*)\n(=+|-+)\s*$", re.M)
# Permalink marks that documentation generators append to headings (Sphinx "¶", MkDocs "#", "🔗").
_MARKS = "¶§🔗\u200b"
# A title is stored on every row of its document and starts each row's heading path, so a first
# heading of 256 KB made the rows of its file grow with the square of the file (5 s for one such
# file, and gigabytes at 5 MB). Real titles are far shorter: 63 characters at most in the
# benchmark corpora.
MAX_TITLE_CHARS = 1000


def clean_title(title: str, markdown: bool = False) -> str:
    """One line, without trailing permalink marks or reST/Markdown markup (roles, backticks)."""
    from lancelot_cli.indexer.html import strip_title_markup

    title = " ".join(title.split())
    return strip_title_markup(_without_permalinks(title, markdown).strip())


def bounded(title: str) -> str:
    """``title`` as a document's rows carry it: at most ``MAX_TITLE_CHARS`` characters, with "…"
    where it was cut."""
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def _without_permalinks(title: str, markdown: bool) -> str:
    """``title`` without the marks and blanks that end it. In Markdown a trailing "#" is part of
    the title unless white space precedes it ("Learning C#").

    A walk back from the end. The patterns it replaces, ``[\\s¶§#🔗\\u200b]+$`` and
    ``(?:[\\s¶§🔗\\u200b]|(?<=\\s)#)+$``, started again at every mark of a run in the middle of a
    title and read the run to its end each time (quadratic: a run of 64 KB took 11 s, 128 KB 43 s;
    of " #" in Markdown 64 s and 238 s)."""
    end = len(title)
    while end and _is_mark(title, end - 1, markdown):
        end -= 1
    return title[:end]


def _is_mark(title: str, at: int, markdown: bool) -> bool:
    char = title[at]
    if char.isspace() or char in _MARKS:  # str.isspace is what \s matched (Py_UNICODE_ISSPACE)
        return True
    return char == "#" and (not markdown or (at > 0 and title[at - 1].isspace()))


def markdown_title(text: str) -> str | None:
    """The first Markdown heading (ATX `#` or setext underline), outside front matter and code fences."""
    from lancelot_cli.mdtext import atx_heading, next_fence

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    fence: str | None = None
    previous = ""
    for line in body.split("\n"):
        if fence is None:
            atx = atx_heading(line)  # closing #s count only after a blank ("# Learning C#" keeps its "#")
            if atx:
                return clean_title(atx[1], markdown=True) or None
            if previous and _SETEXT.match(f"{previous}\n{line}"):
                return clean_title(previous, markdown=True) or None
        fence = next_fence(line, fence)
        previous = line if fence is None and line.strip() else ""
    return None
