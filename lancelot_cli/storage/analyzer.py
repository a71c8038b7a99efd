"""How text becomes full-text terms: one analyzer for the index and for the query's words.

The base tokenizer is ``icu/split``: Unicode word boundaries (ICU), so an unspaced run of
Chinese or Japanese splits into words (``向量搜索`` -> ``向量`` ``搜索``, ``ベクトル検索`` ->
``ベクトル`` ``検索``), and, like LanceDB's ``simple`` tokenizer, it splits at punctuation, so
English and identifiers give the terms they gave before (``MAX_SAVED`` -> ``max`` ``save``,
``auth/tokens.md`` -> ``auth`` ``token`` ``md``). Plain ``icu`` keeps ``foo_bar``, ``v1.2`` and
``tokens.md`` whole, so a search for ``tokens`` would no longer find that path.

Stop words: the ICU tokenizers default to a list of many languages that drops content words
(``安全`` security, ``使用`` use, ``问题`` problem, ``care``, ``end``, ``per``), so the list is
given: the English one LanceDB's ``simple`` tokenizer uses, so English terms do not change.
Chinese and Japanese particles stay in the index (dropping them scored a little lower on the
tuning manuals: BM25 already gives them next to no weight); they are dropped from the query's
words, which decide the ``matched`` share, highlighting and whether a hit shows a query word.

Measured for issue 28 (`corpora.py`, 2026-12-01; in the git history of tests/benchmarks/README.md): on
known-item questions over four Chinese and Japanese manuals, MRR@10 0.40-0.68 -> 0.82-0.95 (tune
splits); PostgreSQL, Django and FastAPI identical; plain ``icu`` cost PostgreSQL 0.031 and
``ngram`` splits English too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lancedb.index import FTS
    from lancedb.query import MatchQuery

# LanceDB's English stop words (NLTK's list, as `simple` drops them; read off lancedb.tokenize).
ENGLISH_STOP_WORDS = (
    "a about above after again against ain all am an and any are aren as at be because been before being below "
    "between both but by can couldn d did didn do does doesn doing don down during each few for from further had "
    "hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it its "
    "itself just ll m ma me mightn more most mustn my myself needn no nor not now o of off on once only or other "
    "our ours ourselves out over own re s same shan she should shouldn so some such t than that the their theirs "
    "them themselves then there these they this those through to too under until up ve very was wasn we were "
    "weren what when where which while who whom why will with won wouldn y you your yours yourself yourselves"
).split()
# Particles, copulas and question words of Chinese and Japanese, as ICU splits them: grammar, not
# topic. Left out of a query's words (not of the index).
CJK_STOP_WORDS = (
    "的 了 是 在 和 与 及 或 吗 呢 吧 啊 么 什么 怎么 怎样 如何 为什么 哪 哪里 哪些 哪个 这 那 这个 那个 这些 那些 "
    "我 你 您 他 她 它 我们 你们 他们 一个 就 都 也 还 把 被 对 从 给 让 "
    "の を に は が で と も や か へ な て た だ です ます でし まし する し さ れ れる られる せる ある いる あり い "
    "こと もの よう これ それ この その あの どう どの どこ なに 何 ため から まで より など について として "
    "において によって ね よ ば れば う ん"
).split()
FTS_OPTIONS: dict[str, Any] = {
    "with_position": True,
    "base_tokenizer": "icu/split",
    "remove_stop_words": True,
    "stem": True,
    "custom_stop_words": list(ENGLISH_STOP_WORDS),
}

# How an index analyzes words, as ``lancedb.tokenize`` takes it: sorted (option, value) pairs, hashable.
Analysis = tuple[tuple[str, Any], ...]
_TOKENIZE_OPTIONS = frozenset(
    {
        "base_tokenizer",
        "language",
        "max_token_length",
        "lower_case",
        "stem",
        "remove_stop_words",
        "custom_stop_words",
        "ascii_folding",
        "ngram_min_length",
        "ngram_max_length",
        "prefix_only",
    }
)
_DETAIL_NAMES = {"min_ngram_length": "ngram_min_length", "max_ngram_length": "ngram_max_length"}


def _frozen(options: Mapping[str, Any]) -> Analysis:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))


DEFAULT: Analysis = _frozen({k: v for k, v in FTS_OPTIONS.items() if k in _TOKENIZE_OPTIONS})


def analysis_of(details: Mapping[str, Any]) -> Analysis:
    """How a full-text index analyzes words, from the options LanceDB recorded for it
    (``index_details``): the query's terms are then made the same way. ``DEFAULT`` when it
    recorded none (an older LanceDB)."""
    options = {_DETAIL_NAMES.get(key, key): value for key, value in details.items()}
    options = {key: value for key, value in options.items() if key in _TOKENIZE_OPTIONS}
    return _frozen(options) if options.get("base_tokenizer") else DEFAULT


# Scripts written without spaces between words (Han, kana, Hangul syllables, Thai, Lao, Khmer, Myanmar).
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]"
)
_CJK_STOP = frozenset(CJK_STOP_WORDS)


# What changes from ``FTS_OPTIONS`` for a table whose documents are mostly in a language (its
# first detected one: indexer/languages.py), chosen on the tune splits of the tuning corpora
# (tests/benchmarks/analyzers.py; tests/benchmarks/README.md, "Languages"). Chinese, Japanese and
# every language not listed keep ``FTS_OPTIONS``.
BY_LANGUAGE: dict[str, dict[str, Any]] = {
    # The language's own stemmer and stop words (Snowball's, as LanceDB has them) instead of
    # English ones: MRR@10 on the tune splits, query only, German 0.826 -> 0.878 (two manuals;
    # trigrams 0.875, a trigram index beside the stemmed one 0.89), French 0.869 -> 0.887 (trigrams
    # 0.859), Spanish 0.946 -> 0.927 (trigrams 0.983, on 32 questions); over the three languages
    # stemming 0.898, trigrams 0.906, English's 0.880. The held-out halves put all three within
    # 0.03 of one another: stemming keeps stop words out, the index small and `strength` a share
    # of words, so it is the one kept.
    "de": {"language": "German", "custom_stop_words": None},
    "fr": {"language": "French", "custom_stop_words": None},
    "es": {"language": "Spanish", "custom_stop_words": None},
    # Korean glues particles to nouns (파일을, 파일에서) and ICU splits only at spaces: overlapping
    # 2- and 3-character grams match a noun whatever follows it (in a table made since issue 51,
    # only the Korean rows' own column is cut so: ``ROWS_ONLY``). Tune splits, query only: 0.748 ->
    # 0.860 (FastAPI's Korean docs and the Debian FAQ; 2-2 grams 0.829, 3-3 0.845).
    "ko": {
        "base_tokenizer": "ngram",
        "ngram_min_length": 2,
        "ngram_max_length": 3,
        "stem": False,
        "remove_stop_words": False,
        "custom_stop_words": None,
    },
}


def fts_options(languages: Sequence[str] = ()) -> dict[str, Any]:
    """The full-text index options of a table whose documents are in ``languages``, most first."""
    return {**FTS_OPTIONS, **BY_LANGUAGE.get(languages[0] if languages else "en", {})}


# Each row in its own language (issue 51): the ``text`` index keeps the table's analysis (that of
# its first language), and a row whose document is in another language with another analysis
# also has its text in that language's column (``text_ko``: Korean n-grams on the Korean rows
# only), null on every other row, with a full-text index of its own. A search runs the query
# through the analyses that fit its script and fuses them (storage/read/table.py).
ROW_LANGUAGES = ("en", *BY_LANGUAGE)
ROW_TEXT_COLUMNS = {code: f"text_{code}" for code in ROW_LANGUAGES}
LANGUAGE_OF_COLUMN = {column: code for code, column in ROW_TEXT_COLUMNS.items()}
_HANGUL = re.compile("[\uac00-\ud7af]")


# Analyses given only to the rows that need them once rows have their own columns: Korean n-grams
# index 6x slower and 3x bigger than English (issue 51), and cut a table's English pages into
# pieces with no stemming.
ROWS_ONLY = frozenset({"ko"})


def text_languages(languages: Sequence[str], rows_apart: bool) -> list[str]:
    """The table's languages as its text index's analysis reads them (``fts_options``): without
    ``ROWS_ONLY`` ones when rows have their own columns (``rowLanguages``)."""
    return [code for code in languages if code not in ROWS_ONLY] if rows_apart else list(languages)


def row_text_language(document: str, table: Sequence[str]) -> str | None:
    """The language whose column a row of a document in ``document`` (its first detected language)
    also writes its text to, in a table whose languages are ``table`` (``text_languages``): None when the text index's
    analysis is already the document's (or the language has no analysis of its own)."""
    if document not in ROW_TEXT_COLUMNS:
        return None
    return None if fts_options([document]) == fts_options(table) else document


def query_languages(query: str) -> tuple[str, ...]:
    """The row languages a query is searched in besides the text index: Korean when it holds
    Hangul; a Latin-script language when most of its function and question words are that
    language's (``wie kann ich``; a query of names and identifiers has none). Each side index
    weighs words by how rare they are among its own rows, so a German question run in the index
    of a table's English rows made the German words of a half-translated page look rare: its
    first hit on 12 of 40 questions (tests/benchmarks/README.md, "Each row in its own language")."""
    from lancelot_cli.storage.function_words import query_votes

    found: list[str] = []
    votes = query_votes(query).most_common(2)
    if votes and (len(votes) == 1 or votes[0][1] > votes[1][1]) and votes[0][0] in ROW_TEXT_COLUMNS:
        found.append(votes[0][0])
    if _HANGUL.search(query):
        found.append("ko")
    return tuple(found)


def fts_config(options: Mapping[str, Any] | None = None) -> FTS:
    """The full-text index of every searched column, with ``options`` (``fts_options``; by default
    English's). Positions are kept for "quoted phrase" queries; English stemming stays (SciFact
    tuning found other options within 0.004 nDCG@10, and keeping English stop words hurt questions
    such as "how do refunds work?")."""
    from lancedb.index import FTS

    return FTS(**(FTS_OPTIONS if options is None else options))


def same_analysis(details: Mapping[str, Any], options: Mapping[str, Any]) -> bool:
    """Whether an index whose recorded details are ``details`` was built with ``options`` (an option
    the details do not record is taken as equal: an older LanceDB records fewer)."""
    recorded = {_DETAIL_NAMES.get(key, key): value for key, value in details.items()}
    return all(recorded[key] == value for key, value in options.items() if key in recorded)


def match_query(words: str, column: str, **options: Any) -> MatchQuery:
    """The full-text query for ``words`` in ``column``: LanceDB's MatchQuery, with ``options`` (e.g.
    ``boost``) and LanceDB's defaults for the rest."""
    from lancedb.query import MatchQuery

    # `**options` also tells mypy that the fields not given have defaults: lancedb declares them as
    # `pydantic.Field(default, kw_only=True)`, a positional default that mypy does not read as one.
    return MatchQuery(words, column, **options)


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a script that is written without spaces between words."""
    return _UNSPACED.search(text) is not None


def split_words(token: str) -> list[str]:
    """The words of one white-space token of a query that holds an unspaced script, as the index
    splits it, but neither stemmed nor folded (they are matched against the text as substrings);
    particles and question words dropped: ``用rsync备份的方法`` -> ``用`` ``rsync`` ``备份`` ``方法``.
    A token with no such script is returned whole."""
    return list(_split(unicodedata.normalize("NFC", token))) if has_unspaced(token) else [token]


@lru_cache(maxsize=1024)
def _split(token: str) -> tuple[str, ...]:
    import lancedb

    pieces = lancedb.tokenize(
        token,
        base_tokenizer="icu/split",
        lower_case=False,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
        max_token_length=None,
    )
    return tuple(piece.text for piece in pieces if piece.text not in _CJK_STOP)


def query_terms(query: str, analysis: Analysis = DEFAULT) -> frozenset[str]:
    """The terms of ``query`` as the index analyzes text (stemmed, folded, stop words dropped), CJK
    particles left out: what ``holds_term`` looks for."""
    return _terms(query, analysis) - _CJK_STOP


def share_of_terms(text: str, terms: frozenset[str], analysis: Analysis = DEFAULT) -> float:
    """Share of ``terms`` (``query_terms``) that ``text``, analyzed as the index does, holds; 0 for no terms."""
    return len(terms & _terms(text, analysis)) / len(terms) if terms else 0.0


def text_terms(text: str, analysis: Analysis = DEFAULT) -> frozenset[str]:
    """The terms of ``text`` as the index analyzes it: analyzed once, compared with several
    queries' ``query_terms``."""
    return _terms(text, analysis)


def holds_term(text: str, terms: frozenset[str], analysis: Analysis = DEFAULT) -> bool:
    """Whether ``text``, analyzed as the index does, holds one of ``terms``: what a substring test
    misses (``policies`` in a text that says ``policy``)."""
    return bool(terms) and not terms.isdisjoint(_terms(text, analysis))


def _terms(text: str, analysis: Analysis) -> frozenset[str]:
    import lancedb

    return frozenset(token.text for token in lancedb.tokenize(text, **dict(analysis)))
