"""Which full-text analysis for which language (issue 38): the same chunks, indexed each way, searched
with the same questions.

For each corpus this takes the rows of the table ``known_items.py`` cached for it (so the chunks are
exactly Lancelot's), writes them into a scratch database once per analysis, builds the four
full-text indexes (text, title, heading path, file path) with that analysis, and runs the corpus's
questions through the engine (which makes a query's terms with the options the index recorded):
query-only and, where the question file has them, with its phrasings (``queries``). MRR@10 of the
answer pages, per split, as known_items.py scores it.

Run from the repository root, after corpora.py built the corpora's databases:
    python tests/benchmarks/analyzers.py --only fastapi-de,deref [--analyses en,de,trigram,...]
        [--split tune|heldout|all]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from corpora import CORPORA, QUESTIONS, source_folder  # noqa: E402
from known_items import K, load_questions, norm  # noqa: E402
from phrasings import cached_db  # noqa: E402

from lancelot_cli.storage.analyzer import ENGLISH_STOP_WORDS  # noqa: E402

BASE = {"with_position": True, "base_tokenizer": "icu/split", "remove_stop_words": True, "stem": True}
LANGUAGE_NAMES = {"de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese", "it": "Italian"}
ANALYSES: dict[str, dict[str, Any]] = {
    "en": {**BASE, "custom_stop_words": list(ENGLISH_STOP_WORDS)},  # today's, for every table
    **{code: {**BASE, "language": name} for code, name in LANGUAGE_NAMES.items()},
    "nostem": {**BASE, "stem": False, "remove_stop_words": False},
    "ngram23": {"with_position": True, "base_tokenizer": "ngram", "ngram_min_length": 2, "ngram_max_length": 3,
                "stem": False, "remove_stop_words": False},
    "ngram22": {"with_position": True, "base_tokenizer": "ngram", "ngram_min_length": 2, "ngram_max_length": 2,
                "stem": False, "remove_stop_words": False},
    "trigram": {"with_position": True, "base_tokenizer": "ngram", "ngram_min_length": 3, "ngram_max_length": 3,
                "stem": False, "remove_stop_words": False},
}  # fmt: skip


def build(rows: Any, folder: Path, options: dict[str, Any]) -> Path:
    """A database of ``rows`` with the four full-text indexes built with ``options``."""
    import lancedb
    from lancedb.index import FTS

    from lancelot_cli.storage.schema import FIELD_INDEX_NAMES, FTS_INDEX_NAME, TEXT

    db = lancedb.connect(str(folder))
    table = db.create_table("documents", data=rows)
    for column, name in ((TEXT, FTS_INDEX_NAME), *FIELD_INDEX_NAMES.items()):
        table.create_index(column, config=FTS(**options), name=name)
    return folder


def scores(db: Path, questions: list[dict[str, Any]], phrased: bool) -> list[float]:
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "OPENAI_", "EMBEDDING_"))}
    engine = Engine(load(environ={**environ, "LANCEDB_PATH": str(db)}))
    out = []
    for question in questions:
        found = engine.search(
            question["query"], limit=K, search_type="text", queries=question.get("queries") if phrased else None
        )
        wanted = {norm(a) for a in question["answers"]}
        out.append(next((1 / n for n, hit in enumerate(found.hits, 1) if norm(hit.source) in wanted), 0.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", required=True, help="comma-separated corpora of corpora.py")
    parser.add_argument("--analyses", default=",".join(ANALYSES), help="comma-separated: " + ",".join(ANALYSES))
    parser.add_argument("--split", default="tune", choices=("tune", "heldout", "all"))
    opts = parser.parse_args()
    import lancedb

    print(f"MRR@10, {opts.split} split, text search: query only / with phrasings\n")
    analyses = opts.analyses.split(",")
    print("| corpus | " + " | ".join(analyses) + " |")
    print("|---" * (len(analyses) + 1) + "|")
    for corpus in opts.only.split(","):
        questions = [
            q for q in load_questions(QUESTIONS / CORPORA[corpus][1]) if opts.split == "all" or q["split"] == opts.split
        ]
        cached = cached_db(source_folder(corpus), "")
        if cached is None:
            print(f"{corpus}: no database cached by known_items.py; run corpora.py first", file=sys.stderr)
            continue
        rows = lancedb.connect(str(cached)).open_table("documents").to_arrow()
        cells = []
        for name in analyses:
            scratch = Path(tempfile.mkdtemp(prefix=f"analyzers-{corpus}-{name}-"))
            try:
                db = build(rows, scratch / "db", ANALYSES[name])
                alone = statistics.fmean(scores(db, questions, False))
                phrased = statistics.fmean(scores(db, questions, True)) if questions[0].get("queries") else None
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            cells.append(f"{alone:.3f} / {phrased:.3f}" if phrased is not None else f"{alone:.3f}")
            print(f"{corpus} {name}: {cells[-1]}", file=sys.stderr, flush=True)
        print(f"| {corpus} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
