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

import bisect
import html as html_lib
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

# Anchors that generators add next to headings and definitions: Sphinx and MkDocs ("headerlink"),
# Docusaurus ("hash-link"), anchor.js, Sphinx's viewcode "[source]" links (any element), DocBook's
# "#" links (by their title). Told apart in one walk of the page: the XPath union that said the same
# scanned the page six times, each element's class normalised at every scan.
PERMALINK_CLASSES = frozenset({"headerlink", "hash-link", "anchorjs-link", "viewcode-back"})
PERMALINK_TITLES = ("Permalink", "Link to this")


_XPATH_BLANKS = re.compile(r"[ \t\r\n]+")


def class_words(el: Any) -> list[str]:
    """The words of ``el``'s ``class`` attribute, split at XPath's blanks ([] when it has none)."""
    value = el.get("class")
    return _XPATH_BLANKS.split(value) if value else []


def permalinks(tree: Any) -> list[Any]:
    """The permalink anchors of ``tree``'s whole document (as XPath's "//" searched it, also when lxml
    handed back one element of a fragment), in document order, nested ones too."""
    from lxml import etree

    found = []
    for el in tree.getroottree().getroot().iter(etree.Element):
        words = class_words(el)
        if "viewcode-link" in words or (
            el.tag == "a"
            and (not PERMALINK_CLASSES.isdisjoint(words) or el.get("title", "").startswith(PERMALINK_TITLES))
        ):
            found.append(el)
    return found


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")
# CommonMark: a backslash before ASCII punctuation escapes it. trafilatura escapes some text twice
# ("MEDIA\\\_ROOT"), so a run of backslashes before punctuation goes as a whole.
_ESCAPE = re.compile(r"\\+([!-/:-@\[-`{-~])")
# A table's rule row (|---|:--:|) holds nothing else; a "-" is checked apart (see _table_rule).
_RULE_CHARACTERS = re.compile(r"[\s|:\-]*")
_EMPTY_CELLS = re.compile(r"\|(?:[ \t]*\|)+")


# lxml refuses a str that declares its encoding (every DocBook page: '<?xml ... encoding="UTF-8"?>').
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# One without its "?>": libxml2 reads it to the first ">" and is quadratic in the blanks on the
# way (libxml2 2.14: 64 KB of them took 3.5 s, 128 KB 13 s), so it gets there at once.
_OPEN_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*")


def parse(html: str) -> tuple[str, Any, bool]:
    """(the page without its XML declaration, its lxml tree or None when lxml rejects it, True when
    it nests elements deeper than the parser keeps)."""
    from lxml import html as lxml_html

    html, declared = _XML_DECLARATION.subn("", html, count=1)
    if not declared:
        html = _OPEN_XML_DECLARATION.sub("<?xml", html, count=1)
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
    for node in permalinks(tree):
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
    return {
        _heading_key(node.text_content())
        for node in tree.getroottree().getroot().iter("h1", "h2", "h3", "h4", "h5", "h6")
    }


def _heading_key(text: str) -> str:
    return " ".join(strip_title_markup(text).replace("¶", " ").split()).strip(" #").casefold()


def clean_markdown(text: str, headings: set[str] | None = None) -> str:
    """trafilatura's Markdown without "¶" marks, backslash escapes or empty table cells; fenced code
    and code spans are left as they are (a backslash there is the text's own).

    With ``headings`` (the page's own, from ``heading_texts``), a "# ..." line that is none of
    them is a comment of code that extraction flattened into prose: it is indented so that it
    reads as code, not as a heading (so is an escaped "\\# ..." line).
    """
    from lancelot_cli.mdtext import atx_heading, next_fence

    out = []
    fence: str | None = None
    for line in text.split("\n"):
        inside, fence = fence is not None, next_fence(line, fence)
        if inside or _FENCE.match(line):
            out.append(line)
            continue
        if line.lstrip().startswith("|"):
            if _table_rule(line):
                continue  # the |---|---| rule row carries no text
            line = _EMPTY_CELLS.sub("|", line).strip()
            if line.strip("| \t") == "":
                continue
        cleaned = _outside_code(line)
        atx = atx_heading(cleaned, closed=False)
        # "\# comment" was escaped as text: unescaped, it must not become a heading either.
        unescaped = atx and atx_heading(line, closed=False) is None
        if atx and (unescaped or (headings is not None and _heading_key(atx[1]) not in headings)):
            cleaned = f"    {cleaned.lstrip()}"
        out.append(cleaned)
    return "\n".join(out)


def _table_rule(line: str) -> bool:
    """Whether ``line`` is a table's rule row: blanks, "|", ":" and at least one "-". (The pattern
    ``^\\s*\\|?[\\s|:\\-]*-[\\s|:\\-]*$`` tried every "-" of a long rule followed by other text,
    each to the line's end: quadratic, 18.5 -> 77.6 s for 64 -> 128 KB.)"""
    return "-" in line and _RULE_CHARACTERS.fullmatch(line) is not None


def _outside_code(line: str) -> str:
    if "`" not in line:  # no code span (most lines): the whole line is prose
        return _prose(line)
    parts = []
    last = 0
    for start, end in _code_spans(line):
        parts.append(_prose(line[last:start]))
        parts.append(line[start:end])
        last = end
    parts.append(_prose(line[last:]))
    return "".join(parts)


def _code_spans(line: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each code span of ``line``, as ``re.finditer`` with ``(`+)(?:.+?)\\1`` (DOTALL)
    found them, from the line's runs of backticks rather than by that pattern.

    At the first backtick not yet in a span (a run of k from there), the pattern tried k, k - 1,
    ... 1 backticks as the opening, each read to the next run as long: quadratic on a long run
    before long text (64 KB took 212 s, 128 KB over 5 minutes). The length it settles on is the
    longest that occurs again at least one character after the opening: inside the run itself
    (2j + 1 <= k) or in a later run at least that long; the span ends at the first such place.
    """
    runs = [(run.start(), run.end()) for run in _BACKTICKS.finditer(line)]
    longest_after = [0] * (len(runs) + 1)  # the longest run from index i on
    for i in range(len(runs) - 1, -1, -1):
        longest_after[i] = max(runs[i][1] - runs[i][0], longest_after[i + 1])
    at, i = 0, 0
    while i < len(runs):
        if runs[i][1] <= at:
            i += 1
            continue
        start = max(runs[i][0], at)
        k = runs[i][1] - start
        length = max(min(k, longest_after[i + 1]), (k - 1) // 2)
        if length == 0:  # one or two backticks and none after: no span here or later
            return
        if 2 * length + 1 <= k:
            at = start + 2 * length + 1  # the run holds the opening, a backtick and the closing
        else:
            j = i + 1
            while runs[j][1] - runs[j][0] < length:
                j += 1
            at = runs[j][0] + length
        yield start, at


def _prose(text: str) -> str:
    text = _without_pilcrows(text) if "¶" in text else text
    return _ESCAPE.sub(r"\1", text) if "\\" in text else text


def _without_pilcrows(text: str) -> str:
    """``text`` without "¶" marks and the blanks before each, as ``re.sub(r"[ \\t]*¶", "", text)``
    did, which started again at every blank of a long run (quadratic: 2.2 -> 8.4 s for 64 -> 128 KB)."""
    pieces = text.split("¶")
    return "".join([piece.rstrip(" \t") for piece in pieces[:-1]] + pieces[-1:])


# reST roles (":mod:`os`", ":py:func:`~x.y`") and Markdown/reST inline code and emphasis in titles.
# A run of role names without the code after it is matched too, and left as it is: otherwise each
# of its colons started the run again (quadratic: 15 -> 63 s for 64 -> 128 KB of ":a"). The loop
# is possessive, which changes nothing:
# a name never ends where a backtick could follow.
_ROLE = re.compile(r":(?:[\w.+-]++:)++(?:`~?([^`]*)`)?")
_TICKS = re.compile(r"`+([^`]*?)`+")
# Emphasis (**bold**, *italic*, __bold__): where one may open, and where each delimiter may close it.
_EMPHASIS_OPEN = re.compile(r"(?<!\w)(?:\*|__)")
_NOT_BLANK = re.compile(r"\S")
_NEWLINE = re.compile(r"\n")
_EMPHASIS_CLOSE = {
    delimiter: re.compile(rf"(?<=\S)(?={re.escape(delimiter)}(?!\w))") for delimiter in ("**", "*", "__")
}


def strip_title_markup(title: str) -> str:
    """ "The :mod:`os` module" -> "The os module"; "``json`` -- JSON" -> "json -- JSON"."""
    title = _ROLE.sub(_role_text, title)
    title = _TICKS.sub(r"\1", title)
    return _without_emphasis(title) if "*" in title or "__" in title else title


def _role_text(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) is not None else match.group(0)


def _without_emphasis(title: str) -> str:
    """``title`` with each emphasis replaced by its text, as ``re.sub`` with
    ``(?<!\\w)(\\*\\*|\\*|__)(?=\\S)(.+?)(?<=\\S)\\1(?!\\w)`` did: at each place one may open,
    "**", "*" then "__" is tried, each closed by the first place after at least one character, on
    the same line, where it may close. Those places are found once, beforehand; the pattern looked
    for them again from every opening (quadratic: 64 KB of "(*a" took 11 s, 128 KB 45 s)."""
    closes = {delimiter: [m.start() for m in pattern.finditer(title)] for delimiter, pattern in _EMPHASIS_CLOSE.items()}
    newlines = [m.start() for m in _NEWLINE.finditer(title)]  # an emphasis never spans two lines
    out, done, at = [], 0, 0
    while (opening := _EMPHASIS_OPEN.search(title, at)) is not None:
        start = opening.start()
        for delimiter in ("**", "*", "__"):
            end = _emphasis_end(title, start, delimiter, closes[delimiter], newlines)
            if end is not None:
                out += [title[done:start], title[start + len(delimiter) : end]]
                done = at = end + len(delimiter)
                break
        else:
            at = start + 1
    return "".join([*out, title[done:]])


def _emphasis_end(title: str, start: int, delimiter: str, closes: list[int], newlines: list[int]) -> int | None:
    """Where the emphasis that ``delimiter`` opens at ``start`` closes, or None."""
    inside = start + len(delimiter)
    if not title.startswith(delimiter, start) or not _NOT_BLANK.match(title, inside):
        return None
    at = bisect.bisect_left(closes, inside + 1)
    line_end = bisect.bisect_left(newlines, inside)
    if at == len(closes) or (line_end < len(newlines) and newlines[line_end] < closes[at]):
        return None
    return closes[at]


# What separates a page's own title from the site's name in <title>: "Page — Django 4.2 documentation".
_SEPARATOR = re.compile(r"\s+(?:[—–|·»:-]|::|&#8212;)\s+")
MIN_PAGES = 5
SHARE = 0.6
# A site's name is short; a title of 16 KB of " - " would otherwise add every one of its thousands
# of endings, each kilobytes long, to the count (quadratic in the title, per page).
MAX_SUFFIX = 256


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
            if len(title) - match.start() <= MAX_SUFFIX:
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


_TITLE_OPEN = re.compile(rb"<title", re.I)
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.I | re.S)


def quick_title(path: str) -> str:
    """The <title> of an HTML file from its first 16 KB (no parsing): enough to find the common suffix."""
    try:
        with open(path, "rb") as f:
            head = f.read(16384)
    except OSError:
        return ""
    # Only the first "<title" is tried: if the pattern fails there (no ">", or no "</title" after
    # it), it fails at every later one too, and searching for it read on from each (quadratic).
    opening = _TITLE_OPEN.search(head)
    found = _TITLE.match(head, opening.start()) if opening else None
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
