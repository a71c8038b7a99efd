"""Parse an HTML page, and clean what extraction leaves behind: permalink anchors, Markdown escapes,
table residue, the title suffix a whole site repeats, and reST/Markdown markup in titles.

trafilatura turns a page's main content into Markdown. On generated documentation that Markdown
carries the generators' permalink anchors ("¶" after every heading, Sphinx's "[source]" links,
"#" anchors), backslash escapes of every Markdown character in prose ("\\*\\*options",
"\\>>>", "item\\_geometry"), empty table cells ("| |") and code blocks flattened into prose
(whose "# comment" lines then read as headings). The anchors are dropped and code blocks marked
as code in the parsed page before extraction; the rest is undone on the Markdown, outside code.
"""

from __future__ import annotations

import html as html_lib
import re
import sys
from collections import Counter
from collections.abc import Iterable
from typing import Any

# Anchors that generators add next to headings and definitions: Sphinx and MkDocs ("headerlink"),
# Docusaurus ("hash-link"), anchor.js, Sphinx's viewcode "[source]" links, DocBook's "#" links.
PERMALINKS = (
    '//a[contains(concat(" ", normalize-space(@class), " "), " headerlink ")]'
    '|//a[contains(concat(" ", normalize-space(@class), " "), " hash-link ")]'
    '|//a[contains(concat(" ", normalize-space(@class), " "), " anchorjs-link ")]'
    '|//a[starts-with(@title, "Permalink") or starts-with(@title, "Link to this")]'
    '|//*[contains(concat(" ", normalize-space(@class), " "), " viewcode-link ")]'
    '|//a[contains(concat(" ", normalize-space(@class), " "), " viewcode-back ")]'
)

_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.S)
# CommonMark: a backslash before ASCII punctuation escapes it. trafilatura escapes some text twice
# ("MEDIA\\\_ROOT"), so a run of backslashes before punctuation goes as a whole.
_ESCAPE = re.compile(r"\\+([!-/:-@\[-`{-~])")
_PILCROW = re.compile(r"[ \t]*¶")
_TABLE_RULE = re.compile(r"^\s*\|?[\s|:\-]*-[\s|:\-]*$")
_EMPTY_CELLS = re.compile(r"\|(?:[ \t]*\|)+")


# lxml refuses a str that declares its encoding (every DocBook page: '<?xml ... encoding="UTF-8"?>').
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


def parse(html: str) -> tuple[str, Any, bool]:
    """(the page without its XML declaration, its lxml tree or None when lxml rejects it, True when
    it nests elements deeper than the parser keeps)."""
    from lxml import html as lxml_html

    html = _XML_DECLARATION.sub("", html, count=1)
    try:
        parser = lxml_html.HTMLParser()
        tree = lxml_html.fromstring(html, parser=parser)
    except Exception:  # noqa: BLE001 - lxml rejects some broken pages outright; trafilatura may still cope
        return html, None, False
    return html, tree, any("Excessive depth" in error.message for error in parser.error_log)


def prepare(tree: Any) -> None:
    """Ready a parsed page for trafilatura: permalink anchors (and their "¶"/"#" text) removed, and
    every <pre> given a <code> inside, without which trafilatura flattens the block into one prose
    line ("\\# comment self.x()") instead of a fenced block that keeps its lines."""
    for node in tree.xpath(PERMALINKS):
        node.drop_tree()
    for pre in tree.iter("pre"):
        if pre.find(".//code") is None:
            code = pre.makeelement("code", {})
            code.text, pre.text = pre.text, None
            for child in list(pre):
                code.append(child)
            pre.append(code)


def heading_texts(tree: Any) -> set[str]:
    """The page's headings (<h1> to <h6>), normalised as ``clean_markdown`` compares them."""
    return {_heading_key(node.text_content()) for node in tree.xpath("//h1|//h2|//h3|//h4|//h5|//h6")}


def _heading_key(text: str) -> str:
    return " ".join(strip_title_markup(text).replace("¶", " ").split()).strip(" #").casefold()


def clean_markdown(text: str, headings: set[str] | None = None) -> str:
    """trafilatura's Markdown without "¶" marks, backslash escapes or empty table cells; fenced code
    and code spans are left as they are (a backslash there is the text's own).

    With ``headings`` (the page's own, from ``heading_texts``), a "# ..." line that is none of
    them is a comment of code that extraction flattened into prose: it is indented so that it
    reads as code, not as a heading (so is an escaped "\\# ..." line).
    """
    from lancelot_cli.mdtext import next_fence

    out = []
    fence: str | None = None
    for line in text.split("\n"):
        inside, fence = fence is not None, next_fence(line, fence)
        if inside or _FENCE.match(line):
            out.append(line)
            continue
        if line.lstrip().startswith("|"):
            if _TABLE_RULE.match(line):
                continue  # the |---|---| rule row carries no text
            line = _EMPTY_CELLS.sub("|", line).strip()
            if line.strip("| \t") == "":
                continue
        cleaned = _outside_code(line)
        atx = _ATX.match(cleaned)
        # "\# comment" was escaped as text: unescaped, it must not become a heading either.
        if atx and (not _ATX.match(line) or (headings is not None and _heading_key(atx.group(1)) not in headings)):
            cleaned = f"    {cleaned.lstrip()}"
        out.append(cleaned)
    return "\n".join(out)


def _outside_code(line: str) -> str:
    parts = []
    last = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(_prose(line[last : span.start()]))
        parts.append(span.group(0))
        last = span.end()
    parts.append(_prose(line[last:]))
    return "".join(parts)


def _prose(text: str) -> str:
    return _ESCAPE.sub(r"\1", _PILCROW.sub("", text))


# reST roles (":mod:`os`", ":py:func:`~x.y`") and Markdown/reST inline code and emphasis in titles.
_ROLE = re.compile(r":(?:[\w.+-]+:)+`~?([^`]*)`")
_TICKS = re.compile(r"`+([^`]*?)`+")
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|\*|__)(?=\S)(.+?)(?<=\S)\1(?!\w)")


def strip_title_markup(title: str) -> str:
    """ "The :mod:`os` module" -> "The os module"; "``json`` -- JSON" -> "json -- JSON"."""
    title = _ROLE.sub(r"\1", title)
    title = _TICKS.sub(r"\1", title)
    return _EMPHASIS.sub(r"\2", title)


# What separates a page's own title from the site's name in <title>: "Page — Django 4.2 documentation".
_SEPARATOR = re.compile(r"\s+(?:[—–|·»:-]|::|&#8212;)\s+")
MIN_PAGES = 5
SHARE = 0.6


def common_suffix(titles: Iterable[str]) -> str | None:
    """The separator and site name ("  — Django 4.2 documentation") that at least 60 % of the titles
    (of at least five pages) end with, or None. Found per run, never hard-coded."""
    titles = [t for t in titles if t]
    if len(titles) < MIN_PAGES:
        return None
    ends: Counter[str] = Counter()
    for title in titles:
        seen = set()
        for match in _SEPARATOR.finditer(title):
            seen.add(title[match.start() :])
        ends.update(seen)
    if not ends:
        return None
    # The longest ending shared widely enough: "- A - B" is preferred to "- B" when both qualify.
    common = [end for end, n in ends.items() if n >= SHARE * len(titles)]
    return max(common, key=len) if common else None


def strip_suffix(title: str, suffix: str | None) -> str:
    if suffix and title.endswith(suffix) and title[: -len(suffix)].strip():
        return title[: -len(suffix)].strip()
    return title


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.I | re.S)


def quick_title(path: str) -> str:
    """The <title> of an HTML file from its first 16 KB (no parsing): enough to find the common suffix."""
    try:
        with open(path, "rb") as f:
            head = f.read(16384)
    except OSError:
        return ""
    found = _TITLE.search(head)
    if not found:
        return ""
    return " ".join(html_lib.unescape(found.group(1).decode("utf-8", "replace")).split())


_PAGES_PER_RESET = 64
_pages = 0
_libc: Any = None


def release_memory() -> None:
    """After a page: give freed heap back to the system (glibc keeps it otherwise, and a reader
    process stays at the size of the largest page it read, ~110 MB on the Django docs instead of
    ~75 MB), and every 64 pages empty trafilatura's caches (they only grow in a long run)."""
    global _pages, _libc
    _pages += 1
    if _pages % _PAGES_PER_RESET == 0 and "trafilatura" in sys.modules:  # not imported: nothing cached
        from trafilatura.meta import reset_caches

        reset_caches()
    if _libc is None:
        import ctypes
        import ctypes.util

        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _ = _libc.malloc_trim  # glibc only: the attribute lookup fails elsewhere
        except (OSError, AttributeError):
            _libc = False
    if _libc:
        _libc.malloc_trim(0)
