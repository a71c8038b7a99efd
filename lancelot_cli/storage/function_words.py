"""The short words that tell Latin-script languages apart: the indexer reads a document's language
off them (indexer/languages.py), a search a query's (which language's own analysis fits it:
storage/analyzer.py ``query_languages``)."""

from __future__ import annotations

import re
from collections import Counter

# Frequent short words, as they are written (lower case). A word listed for two languages ("que",
# "de", "la") says nothing and is not counted: only the words of one language vote. Words that are
# also English ("as", "do", "no", "van", "com" of .com) or German ("um", "da") are left out of the
# others' lists.
FUNCTION_WORDS = {
    "en": "the and of to is that for with are this be you can it which from by an not or have will",
    "de": "der die das und ist nicht mit den von zu ein eine auf für sich wird werden auch oder sie dem des im wenn",
    "fr": "le les et des est une pour que dans qui pas sur avec sont vous du au ou peut ce cette la il de",
    "es": "el los las que y en un una por con para es del se como puede más o al su lo este de la",
    "pt": "o os que e em uma para não são você pode na dos das ao de também",
    "it": "il gli di che e un una per con del della sono è può nel alla questo dei la",
    "nl": "de het een en is dat op te zijn niet met voor je kan worden wordt deze",
}
LANGUAGE_OF: dict[str, str] = {}
_SHARED: set[str] = set()
for _code, _words in FUNCTION_WORDS.items():
    for _word in _words.split():
        if _word in LANGUAGE_OF and LANGUAGE_OF[_word] != _code:
            _SHARED.add(_word)
        LANGUAGE_OF[_word] = _code
for _word in _SHARED:
    del LANGUAGE_OF[_word]

# Words of questions, which a query has where a page has articles ("how do I", "wie kann ich").
QUESTION_WORDS = {
    "en": "how what why when where do does i my",
    "de": "wie was warum wann wo ich mein meine kann man",
    "fr": "comment pourquoi quand je mon ma mes",
    "es": "cómo qué cuándo dónde mi mis puedo",
}
_QUERY_LANGUAGE_OF = {**LANGUAGE_OF, **{w: code for code, words in QUESTION_WORDS.items() for w in words.split()}}
_WORDS = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def query_votes(query: str) -> Counter[str]:
    """How many of the query's words are function or question words of each language."""
    return Counter(code for word in _WORDS.findall(query) if (code := _QUERY_LANGUAGE_OF.get(word.lower())))
