"""Chunking does work in proportion to the text: `split_long` walks indices instead of slicing off
the rest of the paragraph at each cut (which made a 50 MB paragraph run for over ten minutes),
and gives exactly the chunks the slicing version gave (kept here as the reference)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from lancelot_cli.indexer.chunking import CHUNK_CHARS, split_long


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
_SPACES = st.sampled_from(
    [
        " ",
        "\n",
        "\t",
        "  ",
        " \n ",
        "\r",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1f",
        "\x85",
        "\xa0",
        "\u2003",
        "\u3000",
        "\n\n",
        " \t ",
    ]
)
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
    for text, size in [
        ("", 5),
        ("   ", 5),
        ("abc", 3),
        ("abcd", 3),
        ("a b", 1),
        ("  a  b  ", 2),
        ("x" * 10 + " " * 10 + "y", 4),
        ("a" * 7, 7),
        ("a\u3000b\u3000c", 1),
    ]:
        assert split_long(text, size) == split_long_reference(text, size), (text, size)


class Counted(str):
    """A string that counts the characters its searches and slices go over (``touched``): the work
    ``split_long`` does on its paragraph, counted instead of timed. Its strips and slices are
    ``Counted`` too, so the slicing version's copies of the rest of the paragraph are counted."""

    touched = 0

    def strip(self, chars: str | None = None) -> Counted:
        return Counted(str.strip(self, chars))

    def lstrip(self, chars: str | None = None) -> Counted:
        return Counted(str.lstrip(self, chars))

    def rstrip(self, chars: str | None = None) -> Counted:
        return Counted(str.rstrip(self, chars))

    def rfind(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        first, last, _ = slice(start, end).indices(len(self))
        Counted.touched += max(last - first, 0)
        return str.rfind(self, sub, first, last)

    def __getitem__(self, key: slice | int) -> Counted:  # type: ignore[override]
        piece = Counted(str.__getitem__(self, key))
        Counted.touched += len(piece)
        return piece


def touched_per_character(split: Callable[[str, int], list[str]], megabytes: float) -> float:
    text = "lorem ipsum dolor sit amet " * int(megabytes * 1024 * 1024 // 27)
    Counted.touched = 0
    pieces = split(Counted(text), CHUNK_CHARS)
    assert pieces == split_long(text, CHUNK_CHARS)  # the counting string changes nothing
    return Counted.touched / len(text)


def test_chunking_work_grows_linearly_with_the_paragraph() -> None:
    """The characters `split_long` looks at per character of the paragraph stay the same (a few:
    three searches back from each limit and the piece) from 0.5 MB to 4 MB; the slicing version
    copies the rest at every cut, so its share grows with the length (hundreds at 0.5 MB).
    Counted, not timed, so a busy machine cannot fail it; the times are in tests/benchmarks/big_files.py."""
    small, large = touched_per_character(split_long, 0.5), touched_per_character(split_long, 4)
    # below 1, split_long no longer works through the str methods counted here: count anew
    assert 1 <= small <= 5 and 1 <= large <= 5, (small, large)
    assert abs(large - small) < 0.01, (small, large)
    assert touched_per_character(split_long_reference, 0.5) > 100  # the check can fail: quadratic work is seen
