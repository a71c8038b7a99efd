"""The words of code's compound names, written after a code chunk's text for the index (issue 47).

The full-text index keeps ``calculateInflationRate`` as one term (``years_since_genesis`` is three:
the underscore splits it), so a camelCase body (Go, Java, JavaScript, Rust's and Python's type
names) could be found only by its comments: "where is the inflation rate calculated" ranked the
design notes that say it in prose above the function that computes ``inflationRate``. The indexer
(indexer/code.py) ends each code chunk's text with one line of the words of those names that the
chunk does not already hold as words, once each, between marks of punctuation only (they add no
term); a hit shows the text without it (engine/ranking.py): the line is for the full-text index and
the vectors alone.

Shared by the indexer and the engine, which may not import each other (pyproject's import contracts).
"""

from __future__ import annotations

import re
from functools import lru_cache

OPEN = "\n\n\u27ea "  # ⟪
CLOSE = " \u27eb"  # ⟫
SEPARATOR = " \u00b7 "  # ·
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Where camel_words cuts a name: a capital after a small letter or digit, or the last capital of a run
# before a small letter (``HTTPServer``).
_CASE_CHANGE = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")


def camel_words(part: str) -> list[str]:
    """``HTTPResponseCode`` -> ``HTTP Response Code``; ``parseJSON2`` -> ``parse JSON2`` (one pass)."""
    words: list[str] = []
    current = ""
    for i, ch in enumerate(part):
        if not ch.isalnum():
            if current:
                words.append(current)
            current = ""
            continue
        if current and ch.isupper():
            before = part[i - 1]
            after = part[i + 1] if i + 1 < len(part) else ""
            if before.islower() or before.isdigit() or (before.isupper() and after.islower()):
                words.append(current)
                current = ""
        current += ch
    if current:
        words.append(current)
    return words


def compound_name_words(text: str) -> list[str]:
    """The words of the names in ``text`` that the index keeps as one term: those with a change of
    case inside (``inflationRate``, ``HTTPServer``), lower case, each once in order of first use.
    snake_case and plain words are left out (the index splits them already), and so is a name
    whose every word the text also holds on its own (``inflationRate`` in a text with ``inflation``
    and ``rate`` as words): it would add no term."""
    found: dict[str, None] = {}
    identifiers = list(dict.fromkeys(_IDENTIFIER.findall(text)))
    plain = {word.lower() for identifier in identifiers for word in identifier.split("_") if word}
    for identifier in identifiers:
        if _CASE_CHANGE.search(identifier) is None:
            continue  # snake_case or one word (the cheap test: most names of a file are)
        words = _words_of(identifier)
        if not plain.issuperset(words):
            found.setdefault(" ".join(words))
    return list(found)


@lru_cache(maxsize=8192)
def _words_of(identifier: str) -> tuple[str, ...]:
    return tuple(word.lower() for piece in identifier.split("_") for word in camel_words(piece))


def with_name_words(text: str) -> str:
    """``text`` followed by the line of its compound names' words (``text`` itself when it has none)."""
    words = compound_name_words(text)
    return text + OPEN + SEPARATOR.join(words) + CLOSE if words else text


def without_name_words(text: str) -> str:
    """A code chunk's text as its file has it: the line ``with_name_words`` added left out."""
    if not text.endswith(CLOSE):
        return text
    cut = text.rfind(OPEN)
    return text[:cut] if cut >= 0 else text
