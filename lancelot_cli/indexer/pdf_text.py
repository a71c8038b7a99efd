"""The text of a PDF's pages made readable (pure functions, no PDF library): hyphenation at line ends
joined, the running headers and footers that repeat on every page dropped, and the outline's
headings (bookmarks) put in as Markdown headings on the page they point at."""

from __future__ import annotations

import re
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


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def place_headings(lines: list[str], bookmarks: list[Bookmark]) -> list[str]:
    """The page's lines with each bookmark as a Markdown heading: in place of the line that starts
    with its title (a run-in heading keeps the rest of its line as the paragraph after it), else at
    the top of the page, after the headings already placed."""
    out = list(lines)
    after = 0  # headings follow one another down the page
    for mark in bookmarks:
        heading = f"{'#' * min(mark.level + 1, 6)} {' '.join(mark.title.split())}"
        wanted = _words(mark.title)
        at = next((i for i in range(after, len(out)) if wanted and _starts_with(out[i], wanted)), None)
        if at is None:
            out.insert(after, heading)
            after += 1
            continue
        rest = _after_words(out[at], len(wanted.split()))
        out[at : at + 1] = [heading, rest] if rest else [heading]
        after = at + 1
    return out


def _starts_with(line: str, wanted: str) -> bool:
    have = _words(line)
    return have == wanted or have.startswith(wanted + " ")


def _after_words(line: str, count: int) -> str:
    """What is left of ``line`` after its first ``count`` words (as ``_words`` counts them)."""
    found = list(re.finditer(r"\w+", line))
    return line[found[count - 1].end() :].lstrip(" .:—–-") if len(found) > count else ""


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
