"""Chunking takes time in proportion to the text: `split_long` walks indices instead of slicing off
the rest of the paragraph at each cut (which made a 50 MB paragraph run for over ten minutes),
and gives exactly the chunks the slicing version gave (kept here as the reference)."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from lancelot_cli.indexer.chunking import chunk_text, split_long


def split_long_reference(paragraph: str, size: int) -> list[str]:
    """The slicing version (quadratic), as shipped before: the output the new one must match."""
    pieces = []
    rest = paragraph.strip()
    while len(rest) > size:
        cut = max(rest.rfind(" ", 0, size + 1), rest.rfind("\n", 0, size + 1), rest.rfind("\t", 0, size + 1))
        if cut <= 0:
            cut = size
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


# Words, every kind of white space str.strip() knows (tabs, form feeds, \x1c-\x1f, no-break and
# ideographic spaces), runs of them, and words longer than the size (hard cuts).
_SPACES = st.sampled_from([" ", "\n", "\t", "  ", " \n ", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85",
                           "\xa0", "\u2003", "\u3000", "\n\n", " \t "])
_WORDS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@st.composite
def paragraphs(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_WORDS, _SPACES), max_size=60))
    lead, tail = draw(_SPACES), draw(_SPACES)
    return lead + "".join(word + space for word, space in parts) + tail


@settings(max_examples=400, deadline=None)
@given(paragraphs(), st.integers(min_value=1, max_value=80))
def test_split_long_gives_the_chunks_of_the_slicing_version(paragraph: str, size: int) -> None:
    assert split_long(paragraph, size) == split_long_reference(paragraph, size)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.integers(min_value=1, max_value=50))
def test_split_long_matches_on_any_text(text: str, size: int) -> None:
    assert split_long(text, size) == split_long_reference(text, size)


def test_split_long_of_edge_cases() -> None:
    for text, size in [("", 5), ("   ", 5), ("abc", 3), ("abcd", 3), ("a b", 1), ("  a  b  ", 2),
                       ("x" * 10 + " " * 10 + "y", 4), ("a" * 7, 7), ("a\u3000b\u3000c", 1)]:
        assert split_long(text, size) == split_long_reference(text, size), (text, size)


def test_chunking_time_grows_linearly_with_the_paragraph() -> None:
    """An 8x longer paragraph takes about 8x the time, not 64x (the slicing version: 0.5 MB 0.03 s,
    4 MB 2 s). A ratio with a wide margin (24x), best of three, so a slow or busy machine passes;
    the absolute figures are in tests/benchmarks/big_files.py."""
    def seconds(megabytes: float) -> float:
        text = "lorem ipsum dolor sit amet " * int(megabytes * 1024 * 1024 // 27)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            chunk_text(text)
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(0.5), seconds(4)
    assert large < 24 * small, f"0.5 MB {small:.3f} s, 4 MB {large:.3f} s: not linear"
