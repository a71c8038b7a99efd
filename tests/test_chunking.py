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
    """A 4 MB paragraph against one of 1 MB: about 4x the time, not 16x. Fails on the slicing
    version (4 MB took ~1.5 s there, 1 MB ~0.1 s). A ratio, not a time, so a slow machine passes."""
    def seconds(megabytes: int) -> float:
        text = ("lorem ipsum dolor sit amet " * (megabytes * 1024 * 1024 // 27))
        started = time.perf_counter()
        chunk_text(text)
        return time.perf_counter() - started

    seconds(1)  # warm up
    small = min(seconds(1) for _ in range(2))
    large = min(seconds(4) for _ in range(2))
    assert large < 8 * small, f"1 MB {small:.2f} s, 4 MB {large:.2f} s: not linear"
