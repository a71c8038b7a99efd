"""Document bombs (issue 37 item 4): small files that cost their reader far more than their size.
So far the PDF outline: its bookmarks placed on a page in linear time."""

from __future__ import annotations

from lancelot_cli.indexer.pdf_text import Bookmark, place_headings
from tests.support.growth import assert_linear

# -- the bookmarks of a page, placed in linear time ---------------------------------------------------------


def _page(n: int) -> tuple[list[str], list[Bookmark]]:
    """A page of ``n`` lines under ``n`` bookmarks: every other one names a line further down, the
    others name no line (each was searched for over the whole rest of the page)."""
    lines = [f"Section {i}" for i in range(n)]
    marks = [Bookmark(1, f"Section {i}" if i % 2 else f"Missing {i}", 0) for i in range(n)]
    return lines, marks


def test_placing_bookmarks_takes_linear_time() -> None:
    """8,000 bookmarks on a page took 98 s, four times as long per doubling."""
    assert_linear(lambda page: place_headings(*page), _page, start=256)


def test_placing_bookmarks_keeps_what_it_placed() -> None:
    """A heading in place of its line, or after the heading placed before it when no line starts
    with its title (as before: the same output as the old search on 100,000 random pages)."""
    lines, marks = _page(4)
    assert place_headings(lines, marks) == [
        "## Missing 0",
        "Section 0",
        "## Section 1",
        "## Missing 2",
        "Section 2",
        "## Section 3",
    ]
    run_in = ["Valid The valid(x) function", "Value. B = value(A)"]
    assert place_headings(run_in, [Bookmark(0, "Valid", 0), Bookmark(0, "The valid", 0), Bookmark(0, "Value", 0)]) == [
        "# Valid",
        "# The valid",
        "(x) function",
        "# Value",
        "B = value(A)",
    ]
