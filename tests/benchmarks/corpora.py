"""Known-item search on every tuning corpus at once: the PostgreSQL manual (DocBook HTML), the Django
docs (Sphinx HTML), the FastAPI docs (MkDocs Markdown), the Redux docs (Docusaurus Markdown and
MDX), two Chinese and two Japanese Debian manuals (DocBook and Sphinx HTML), so that no ranking
change is judged on one manual only.

Run from the repository root (the Debian packages first: ``apt-get install postgresql-doc-15
python-django-doc debian-faq-zh-cn maint-guide-zh-cn debian-reference-ja developers-reference-ja``;
the Redux docs are the ``docs/`` folder of a checkout of github.com/reduxjs/redux, at 3084fc33 for
the figures in README.md, in ``/tmp/corpora/redux/docs`` or ``$LANCELOT_BENCH_REDUX_DOCS``):
    python tests/benchmarks/corpora.py [--label NAME] [--only pg,fastapi,...] [known_items.py options]
    python tests/benchmarks/corpora.py --table NAME [NAME ...]

Each corpus is one ``known_items.py --src SRC --questions FILE --output results/corpora/<corpus>-
<label>.json`` run (options after ours go to it: ``--embed-model local:DIR`` for auto = hybrid,
``--code-at REV``, ``--rebuild``); then a Markdown table per label: MRR@10 on tune, heldout and all
questions, success@10, MRR@10 of the natural-language and the keyword questions (the ``kind`` of
each question), and which search types answered. ``--table`` prints the table of labels run before.
The held-out corpora of DEVELOPERS.md (python3-doc, git-doc, gimp-help-ja, debian-reference-zh-cn)
are not here, and must not be.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "known_items"
RESULTS = HERE / "results" / "corpora"
FASTAPI_REPO = Path(os.environ.get("LANCELOT_BENCH_FASTAPI_REPO", "/tmp/corpora/fastapi"))
# Folders made from the sources below (one language each); outside the repository, whose .gitignore
# `lancelot index` would apply to them.
PREPARED = Path(os.environ.get("LANCELOT_BENCH_CORPORA", "/tmp/corpora")) / "prepared"


def fastapi_language(language: str) -> str:
    """The FastAPI docs in ``language`` (``docs/<language>/docs`` of a checkout of
    github.com/fastapi/fastapi, at c3f316b7e for the figures in README.md); English from ../shared."""
    if language == "en":
        return str(REPO.parent / "shared" / "data" / "fastapi-docs" / "docs" / "en" / "docs")
    return str(FASTAPI_REPO / "docs" / language / "docs")


def language_files(folder: str, language: str) -> str:
    """A folder of the ``*.<language>.html`` files of ``folder`` (the Debian Reference packages of every
    language share /usr/share/debian-reference): one language per table, whichever are installed."""
    target = PREPARED / f"{Path(folder).name}-{language}"
    if not target.is_dir() and Path(folder).is_dir():
        target.mkdir(parents=True)
        for page in Path(folder).glob(f"*.{language}.html"):
            shutil.copy2(page, target / page.name)
    return str(target)


# name: (documentation folder, question file). Packages: postgresql-doc-15 python-django-doc
# debian-faq debian-faq-zh-cn debian-faq-ko maint-guide-zh-cn maint-guide-fr debian-reference-ja
# debian-reference-de debian-reference-es developers-reference-ja.
CORPORA: dict[str, tuple[Any, str]] = {
    "pg": ("/usr/share/doc/postgresql-doc-15/html", "postgresql15.jsonl"),
    "django": ("/usr/share/doc/python-django-doc/html", "django32.jsonl"),
    "redux": (os.environ.get("LANCELOT_BENCH_REDUX_DOCS", "/tmp/corpora/redux/docs"), "redux.jsonl"),
    "fastapi": (lambda: fastapi_language("en"), "fastapi.jsonl"),
    "zhfaq": ("/usr/share/doc/debian/FAQ/zh-cn", "debian-faq-zh-cn.jsonl"),
    "mgzh": ("/usr/share/doc/maint-guide-zh-cn/html", "maint-guide-zh-cn.jsonl"),
    "jaref": (lambda: language_files("/usr/share/debian-reference", "ja"), "debian-reference-ja.jsonl"),
    "drja": ("/usr/share/developers-reference/ja", "developers-reference-ja.jsonl"),
    "fastapi-de": (lambda: fastapi_language("de"), "fastapi-de.jsonl"),
    "deref": (lambda: language_files("/usr/share/debian-reference", "de"), "debian-reference-de.jsonl"),
    "fastapi-fr": (lambda: fastapi_language("fr"), "fastapi-fr.jsonl"),
    "mgfr": ("/usr/share/doc/maint-guide-fr/html", "maint-guide-fr.jsonl"),
    "fastapi-es": (lambda: fastapi_language("es"), "fastapi-es.jsonl"),
    "esref": (lambda: language_files("/usr/share/debian-reference", "es"), "debian-reference-es.jsonl"),
    "fastapi-ko": (lambda: fastapi_language("ko"), "fastapi-ko.jsonl"),
    "kofaq": ("/usr/share/doc/debian/FAQ/ko", "debian-faq-ko.jsonl"),
}


def source_folder(corpus: str) -> str:
    where = CORPORA[corpus][0]
    return where() if callable(where) else where


def mrr(rows: list[dict[str, Any]]) -> float:
    return sum(1 / r["rank"] for r in rows if r["rank"]) / len(rows) if rows else float("nan")


def row(corpus: str, label: str) -> str | None:
    path = RESULTS / f"{corpus}-{label}.json"
    if not path.exists():
        return None
    rows = json.loads(path.read_text())["questions"]
    kinds = {q["id"]: q.get("kind") for q in map(json.loads, (QUESTIONS / CORPORA[corpus][1]).read_text().splitlines())}
    part = {name: [r for r in rows if r["split"] == name] for name in ("tune", "heldout")}
    natural = [r for r in rows if kinds.get(r["id"]) == "natural"]
    keyword = [r for r in rows if kinds.get(r["id"]) == "keyword"]
    types: dict[str, int] = {}
    for r in rows:
        types[r.get("searchType") or "?"] = types.get(r.get("searchType") or "?", 0) + 1
    success = sum(r["rank"] is not None for r in rows) / len(rows)
    cells = [
        corpus,
        label,
        *(f"{mrr(rows_):.4f}" for rows_ in (part["tune"], part["heldout"], rows)),
        f"{success:.3f}",
        *(f"{mrr(rows_):.4f}" if rows_ else "—" for rows_ in (natural, keyword)),
        ", ".join(f"{k} {v}" for k, v in sorted(types.items())),
    ]
    return "| " + " | ".join(cells) + " |"


def table(labels: list[str]) -> str:
    lines = [
        "| corpus | run | MRR@10 tune | heldout | all | success@10 | natural | keyword | search types |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [line for corpus in CORPORA for label in labels if (line := row(corpus, label))]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="run", help="name of this run in the results (default run)")
    parser.add_argument("--only", help="comma-separated corpora (default all): " + ",".join(CORPORA))
    parser.add_argument("--table", nargs="+", metavar="LABEL", help="print the table of earlier runs and stop")
    opts, passthrough = parser.parse_known_args()
    if opts.table:
        print(table(opts.table))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    for corpus in opts.only.split(",") if opts.only else CORPORA:
        src, questions = source_folder(corpus), CORPORA[corpus][1]
        if not Path(src).is_dir() or not (QUESTIONS / questions).exists():
            print(f"{corpus}: {src} is missing (see the docstring for the packages); skipped", file=sys.stderr)
            continue
        output = RESULTS / f"{corpus}-{opts.label}.json"
        done = subprocess.run(
            [
                sys.executable,
                str(HERE / "known_items.py"),
                "--src",
                src,
                "--questions",
                str(QUESTIONS / questions),
                "--output",
                str(output),
                *passthrough,
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
        )
        if done.returncode:
            raise SystemExit(f"{corpus}: known_items.py exited {done.returncode}")
        print(row(corpus, opts.label), file=sys.stderr, flush=True)
    print(table([opts.label]))


if __name__ == "__main__":
    main()
