"""Pure helpers for text hits: the query's words, the share of them a text contains, snippets.

A query is split into words one way (``_tokens``), for the engine's ranking and the terminal's
highlighting alike."""

from __future__ import annotations

import re
from collections.abc import Callable

from lancelot_cli.mdtext import plain_headings

SNIPPET_CHARS = 300
# Lucene's English stop words: a query made only of these finds everything and means nothing.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)
_CONNECTED = re.compile(r"[A-Za-z0-9][_\-.:/#][A-Za-z0-9]|[a-z][A-Z]")
# Non-ASCII letters that re.IGNORECASE matches to ASCII ones (Kelvin sign, long s, dotted and dotless i).
_CASE_SPECIAL = frozenset("\u212a\u017f\u0130\u0131")
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>«»“”‘’"


def _tokens(query: str) -> list[str]:
    """The query's white-space separated tokens, surrounding punctuation stripped, case kept."""
    return [token for token in (raw.strip(_EDGE_PUNCT) for raw in query.split()) if token]


def query_words(query: str, split: Callable[[str], list[str]] | None = None) -> list[str]:
    """Case-folded words of the query, surrounding punctuation stripped, duplicates dropped.

    ``split`` gives the words of a token that holds a script written without spaces (Chinese,
    Japanese, Thai...), as the full-text index splits it (``storage.analyzer.split_words``);
    without it such a token stays one word."""
    seen: dict[str, None] = {}
    for token in _tokens(query):
        for word in split(token) if split is not None and not token.isascii() else [token]:
            word = word.casefold()
            if any(ch.isalnum() for ch in word):
                seen.setdefault(word, None)
    return list(seen)


def matched_share(text: str, words: list[str]) -> float:
    """Share of ``words`` found in ``text`` (case-insensitive substring): the original's text score."""
    if not words:
        return 0.0
    lowered = text.casefold()
    return sum(1 for word in words if word in lowered) / len(words)


def snippet(text: str, words: list[str], size: int = SNIPPET_CHARS) -> str:
    """About ``size`` characters of ``text`` around the window that holds the most query words.

    Cut at word boundaries, white space folded, "…" marking each cut; headings as their words,
    without ``#`` markers or setext underlines (``mdtext.plain_headings``). In a script written
    without spaces the window is the same number of characters, cut where it falls.
    """
    flat = " ".join(plain_headings(text).split())
    if len(flat) <= size:
        return flat
    positions = sorted(_occurrences(flat, words))
    start = 0
    if positions:
        # Slide a window over the match positions and keep the first one that covers most distinct
        # words: two pointers and a count per word, so a long text with many matches stays linear.
        best = (-1, 0)
        counts: dict[str, int] = {}
        end_index = 0
        for i, (pos, _) in enumerate(positions):
            while end_index < len(positions) and positions[end_index][0] < pos + size * 0.8:
                word = positions[end_index][1]
                counts[word] = counts.get(word, 0) + 1
                end_index += 1
            if len(counts) > best[0]:
                best = (len(counts), pos)
            word = positions[i][1]
            counts[word] -= 1
            if not counts[word]:
                del counts[word]
        start = max(0, best[1] - size // 4)
    end = min(len(flat), start + size)
    start = max(0, end - size)
    if start > 0:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < start + 30 else start
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > end - 30 else end
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def _occurrences(flat: str, words: list[str]) -> list[tuple[int, str]]:
    """(start, word) of each word's non-overlapping, case-insensitive occurrences in ``flat``. Plain
    ``str.find`` on lower-cased text when the words are ASCII and the text has none of the four
    letters IGNORECASE matches to ASCII ones (the same matches as the regular expression, several
    times faster; lower-casing keeps every other character's length); ``re`` otherwise."""
    if all(word.isascii() for word in words) and not _CASE_SPECIAL.intersection(flat):
        lowered = flat.lower()
        found = []
        for word in words:
            pattern = word.lower()
            at = lowered.find(pattern)
            while at >= 0:
                found.append((at, word))
                at = lowered.find(pattern, at + len(pattern))
        return found
    return [(match.start(), word) for word in words for match in re.finditer(re.escape(word), flat, re.I)]


def only_stop_words(words: list[str]) -> bool:
    return bool(words) and all(word in STOP_WORDS for word in words)


def identifier_tokens(query: str) -> list[str]:
    """Query tokens that look like identifiers: joined by _ - . : / # (MAX_SAVED, DEC-0054,
    2025-06-18, v1.2) or camelCase (createClient); case-folded."""
    return [token.casefold() for token in _tokens(query) if _CONNECTED.search(token)]
