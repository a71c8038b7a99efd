"""Which languages a table's documents are written in (issue 38), read off the chunks' text.

Two passes over a sample of the text, both linear:

1. scripts: Hangul is Korean; kana (with or without Han) Japanese; Han alone Chinese; Cyrillic
   Russian; Latin letters are words of a Latin-script language;
2. the Latin words are shared among English, German, French, Spanish, Portuguese, Italian and
   Dutch by their most common short words (articles, prepositions, pronouns): a page of code and
   identifiers with no such word counts as English, the language of most code.

Each script's amount becomes a number of words (a Hangul word is about 3 syllables, a Chinese or
Japanese one about 2 characters, a Latin one about 6 letters), and every language with at least
``MIN_SHARE`` of them is kept, most first. A Korean manual whose code samples are in English is
``["ko", "en"]``: the server's instructions tell an agent to phrase its searches in Korean. The
table's first language chooses its text index's analysis (storage/analyzer.py ``fts_options``);
each document's own (``document_language``) gives its rows a column in their language's analysis
when that differs (``analyzer.row_text_language``: Korean n-grams on the Korean rows only).

No library: the candidates are few and the texts long, where counting function words is reliable
(on the tuning corpora: every one of 16 detected as its language, tests/test_languages.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from lancelot_cli.storage.function_words import LANGUAGE_OF as _LANGUAGE_OF

SAMPLE_CHARS = 200_000  # of text looked at, spread over the whole table (2M gave the same answers, 6x slower)
MIN_SHARE = 0.1
MAX_LANGUAGES = 3

_SCRIPTS = re.compile(
    r"(?P<hangul>[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+)"
    r"|(?P<kana>[\u3040-\u30ff\uff66-\uff9f]+)"
    r"|(?P<han>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    r"|(?P<cyrillic>[\u0400-\u04ff]+)"
    r"|(?P<latin>[A-Za-z\u00c0-\u024f]+)"
)
_CHARS_PER_WORD = {"hangul": 3.0, "kana": 2.0, "han": 2.0, "cyrillic": 6.0, "latin": 6.0}


def detect(texts: Iterable[str]) -> list[str]:
    """The languages of ``texts`` (ISO 639-1 codes), most first; [] when they hold no letters."""
    letters: Counter[str] = Counter()
    votes: Counter[str] = Counter()
    for text in _sample(texts):
        for match in _SCRIPTS.finditer(text):
            script = match.lastgroup or ""
            run = match.group()
            letters[script] += len(run)
            if script == "latin":
                code = _LANGUAGE_OF.get(run.lower())
                if code is not None:
                    votes[code] += 1
    words: dict[str, float] = {}  # language -> about how many words of it
    east = letters["kana"] + letters["han"]
    # Japanese writes Han with kana; a text of Han alone is Chinese.
    shares = [
        ("ko", letters["hangul"] / _CHARS_PER_WORD["hangul"]),
        ("ja" if letters["kana"] >= 0.1 * east else "zh", east / _CHARS_PER_WORD["han"]),
        ("ru", letters["cyrillic"] / _CHARS_PER_WORD["cyrillic"]),
    ]
    latin = letters["latin"] / _CHARS_PER_WORD["latin"]
    total = sum(votes.values())
    shares += [(code, latin * count / total) for code, count in votes.items()] if total else [("en", latin)]
    for code, amount in shares:
        words[code] = words.get(code, 0.0) + amount
    everything = sum(words.values())
    kept = [code for code, amount in words.items() if amount and amount >= MIN_SHARE * everything]
    return sorted(kept, key=lambda code: -words[code])[:MAX_LANGUAGES]


def detect_documents(documents: Mapping[str, list[str]]) -> list[str]:
    """The languages of a table from its documents (path -> some of its chunks' text): each document
    votes once, for its own first language, and the languages most documents are in come first;
    those the whole text holds besides (English code samples in a Korean manual) follow.

    By documents, not by amount of text (issue 51): one 120 KB Korean file among ten English pages
    made a fresh table Korean, its English pages cut into n-grams with no stemming, while the same
    folder indexed a page at a time stayed English."""
    votes: Counter[str] = Counter()
    for texts in documents.values():
        found = detect(texts)
        if found:
            votes[found[0]] += 1
    total = sum(votes.values())
    ranked = [code for code, count in votes.most_common() if count >= MIN_SHARE * total]
    others = [code for code in detect(t for texts in documents.values() for t in texts) if code not in ranked]
    return (ranked + others)[:MAX_LANGUAGES]


def document_language(texts: Iterable[str]) -> str | None:
    """The language of one document's rows (``texts``: its first chunks): its first detected
    language, but Korean whenever it holds a share of Hangul (a Korean page whose code samples
    outweigh its prose is still read by Korean readers, in Korean). None with no letters."""
    found = detect(texts)
    return "ko" if "ko" in found else (found[0] if found else None)


def _sample(texts: Iterable[str]) -> Iterable[str]:
    """``texts`` up to ``SAMPLE_CHARS`` in all (the caller spreads what it passes over the table)."""
    used = 0
    for text in texts:
        if used >= SAMPLE_CHARS:
            return
        yield text[: SAMPLE_CHARS - used]
        used += len(text)
