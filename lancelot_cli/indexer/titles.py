"""A document's title from its text: the first Markdown heading, cleaned of permalink marks and markup."""

from __future__ import annotations

import re

# CommonMark: closing #s count only after white space ("# Learning C#" keeps its "#").
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.M)
_SETEXT = re.compile(r"^(\S.*)\n(=+|-+)\s*$", re.M)
# Permalink marks that documentation generators append to headings (Sphinx "¶", MkDocs "#", "🔗").
_PERMALINK = re.compile(r"[\s¶§#🔗\u200b]+$")
# In Markdown a trailing "#" is part of the title unless white space precedes it.
_PERMALINK_MD = re.compile(r"(?:[\s¶§🔗\u200b]|(?<=\s)#)+$")


def clean_title(title: str, markdown: bool = False) -> str:
    """One line, without trailing permalink marks or reST/Markdown markup (roles, backticks)."""
    from lancelot_cli.indexer.html import strip_title_markup

    title = " ".join(title.split())
    return strip_title_markup((_PERMALINK_MD if markdown else _PERMALINK).sub("", title).strip())


def markdown_title(text: str) -> str | None:
    """The first Markdown heading (ATX `#` or setext underline), outside front matter and code fences."""
    from lancelot_cli.mdtext import next_fence

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    fence: str | None = None
    previous = ""
    for line in body.split("\n"):
        if fence is None:
            atx = _HEADING.match(line)
            if atx:
                return clean_title(atx.group(1), markdown=True) or None
            if previous and _SETEXT.match(f"{previous}\n{line}"):
                return clean_title(previous, markdown=True) or None
        fence = next_fence(line, fence)
        previous = line if fence is None and line.strip() else ""
    return None
