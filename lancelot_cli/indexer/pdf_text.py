"""The text of a PDF's pages made readable (pure functions, no PDF library): hyphenation at line ends
joined, the running headers and footers that repeat on every page dropped, and the outline's
headings (bookmarks) put in as Markdown headings on the page they point at."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass

# "exam-\nple" -> "example": a hyphen between a letter and a lowercase letter on the next line. A
# compound that happens to break at its hyphen ("well-\nknown") loses it; every extractor that joins
# hyphenation makes that trade, and a search for "wellknown"/"well known" still finds the words.
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])[-\u00ad\u2010]\n(?=[^\W\d_])")
# A page number at either end of a line ("gnuplot 5.4 41", "12 | Introduction") is folded; numbers
# inside are kept, so "Chapter 2: Setup" under every chapter's first line is not taken as running.
_END_NUMBERS = re.compile(r"^\d+\b|\b\d+$")
_PAGE_NUMBER = re.compile(
    r"^(?:page|p\.|seite|pág\.?|страница)?\s*[-–]?\s*\d+\s*(?:(?:of|/|von|de)\s*\d+)?\s*[-–]?$", re.I
)
# A running header or footer sits in the first or last lines of a page.
EDGE_LINES = 3
# ... and repeats, its page number aside, on at least this share of the pages (and on 3).
REPEATED_SHARE = 0.4


@dataclass(frozen=True)
class Bookmark:
    level: int  # 0 for the top level of the outline
    title: str
    page: int  # 0-based page index the bookmark points at


def clean_lines(raw: str) -> list[str]:
    """A page's text as lines: pdfium's \\r\\n as \\n, hyphenation at line ends joined, spaces tidied."""
    # PDFium marks a hyphen it finds at a line end, the break taken out, as U+FFFE (\x02 before).
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\ufffe", "").replace("\x02", "")
    text = _HYPHEN_BREAK.sub(_joined, text)
    lines = [" ".join(line.split()) for line in text.split("\n")]
    # A line of the page that starts with "#" (a comment in an example) is not a heading: escaped.
    return [f"\\{line}" if line.startswith("#") else line for line in lines]


def _joined(match: re.Match[str]) -> str:
    """A hyphen and line break taken out when the next line goes on in lowercase ("East-/West" stays)."""
    following = match.string[match.end()]
    return "" if following.islower() else match.group(0)


def _edge_keys(lines: list[str]) -> set[str]:
    """The keys of a page's first and last lines (page numbers folded, so they match)."""
    shown = [line for line in lines if line]
    return {_key(line) for line in shown[:EDGE_LINES] + shown[-EDGE_LINES:]}


def _key(line: str) -> str:
    if _PAGE_NUMBER.match(line):
        return "#"
    return _END_NUMBERS.sub("#", line.lower())


def running_lines(pages: list[list[str]]) -> set[str]:
    """Keys of the lines that head or foot most pages: a running title, "Page 3 of 9", a bare number."""
    with_text = [lines for lines in pages if any(lines)]
    if len(with_text) < 3:
        return set()
    counts = Counter(key for lines in with_text for key in _edge_keys(lines))
    least = max(3, REPEATED_SHARE * len(with_text))
    return {key for key, n in counts.items() if n >= least}


def drop_running(lines: list[str], running: set[str]) -> list[str]:
    """The page's lines without the running headers and footers among its first and last lines."""
    if not running:
        return lines
    shown = [i for i, line in enumerate(lines) if line]
    edges = set(shown[:EDGE_LINES] + shown[-EDGE_LINES:])
    return [line for i, line in enumerate(lines) if i not in edges or _key(line) not in running]


_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    """The words of ``text``, lowercased: what a bookmark's title and a line are compared by."""
    return [word.lower() for word in _WORD.findall(text)]


def place_headings(lines: list[str], bookmarks: list[Bookmark]) -> list[str]:
    """The page's lines with each bookmark as a Markdown heading: in place of the line that starts
    with its title (a run-in heading keeps the rest of its line as the paragraph after it), else at
    the top of the page, after the headings already placed.

    Linear in the page and the bookmarks (issue 37: 8,000 bookmarks on a page took 98 s when each
    one searched the page afresh): the lines are indexed once by their first words, and the page is
    copied out once, in order."""
    page = _Page(lines, {len(_tokens(mark.title)) for mark in bookmarks})
    out: list[str] = []
    copied = 0  # the lines before this one are in ``out`` already
    rest: tuple[int, int] | None = None  # (line, words used) of the line a heading replaced last
    for mark in bookmarks:
        heading = f"{'#' * min(mark.level + 1, 6)} {' '.join(mark.title.split())}"
        wanted = _tokens(mark.title)
        if rest is not None and wanted and page.starts(*rest, wanted):
            rest = (rest[0], rest[1] + len(wanted))  # headings follow one another down the page
            out.append(heading)
            continue
        at = page.find(wanted, copied) if wanted else None
        if at is None:
            out.append(heading)
            continue
        out.extend([*page.rest(*rest)] if rest is not None else [])
        out.extend(lines[copied:at])
        out.append(heading)
        rest, copied = (at, len(wanted)), at + 1
    out.extend([*page.rest(*rest)] if rest is not None else [])
    out.extend(lines[copied:])
    return out


class _Page:
    """A page's lines, each as its words, and where each run of first words starts a line: for the
    word counts of the bookmarks' titles only, keyed by a hash chained over the words (one pass)."""

    def __init__(self, lines: list[str], counts: set[int]) -> None:
        self.lines = lines
        self.spans = [list(_WORD.finditer(line)) for line in lines]
        self.words = [[span.group(0).lower() for span in spans] for spans in self.spans]
        self.starting: dict[tuple[int, int], list[int]] = {}
        most = max(counts, default=0)
        for index, words in enumerate(self.words):
            key = 0
            for count, word in enumerate(words[:most], start=1):
                key = hash((key, word))
                if count in counts:
                    self.starting.setdefault((count, key), []).append(index)

    def find(self, wanted: list[str], start: int) -> int | None:
        """The first line from ``start`` on whose words start with ``wanted``."""
        key = 0
        for word in wanted:
            key = hash((key, word))
        found = self.starting.get((len(wanted), key), [])
        for at in range(bisect_left(found, start), len(found)):
            if self.starts(found[at], 0, wanted):  # (a hash collision is not a match)
                return found[at]
        return None

    def starts(self, line: int, used: int, wanted: list[str]) -> bool:
        """Whether the words of ``line`` after its first ``used`` go on with ``wanted``."""
        return self.words[line][used : used + len(wanted)] == wanted

    def rest(self, line: int, used: int) -> list[str]:
        """What is left of ``line`` after its first ``used`` words (as a one-line list; [] if none)."""
        spans = self.spans[line]
        return [self.lines[line][spans[used - 1].end() :].lstrip(" .:—–-")] if len(spans) > used else []


def page_text(lines: list[str]) -> str:
    """The page's lines as Markdown: a heading is its own paragraph (chunks then start at headings)."""
    blocks: list[str] = []
    run: list[str] = []
    for line in lines:
        if line.startswith("#"):
            if run:
                blocks.append("\n".join(run))
                run = []
            blocks.append(line)
        elif line:
            run.append(line)
    if run:
        blocks.append("\n".join(run))
    return "\n\n".join(blocks)
