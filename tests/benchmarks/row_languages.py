"""Known-item search on mixed-language documentation (issue 51: each row analysed in its own language).

FastAPI's translated docs fall back to the English page wherever a page has no translation; these
corpora are made the same way from a checkout of github.com/fastapi/fastapi (at c3f316b7e for the
figures in README.md, ``$LANCELOT_BENCH_FASTAPI_REPO``, default /tmp/corpora/fastapi): the English
``docs/en/docs`` with the translated page put in its place for

- ``mixed-ko``: the 53 pages the Korean questions answer and every 4th other Korean page (71 of 155
  pages Korean: the table is ``en, ko``, as the held-out Korean help site's);
- ``mixed-de``: the German questions' 41 pages and every 2nd other one (83 of 155: ``de, en``);
- ``mixed-de-minor``: the German questions' pages and every 4th other one (62 of 155: ``en, de``).

The questions are the existing fastapi-ko.jsonl and fastapi-de.jsonl (all about translated pages).
Run from the repository root:
    python tests/benchmarks/row_languages.py [--label NAME] [--only mixed-ko,...] [known_items.py options]
e.g. ``--code-at HEAD`` for the code before a change. Each corpus is one known_items.py run, written to
results/corpora/<corpus>-<label>.json; a Markdown table of MRR@10 follows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from corpora import FASTAPI_REPO, PREPARED, QUESTIONS, RESULTS, mrr  # noqa: E402 (beside this script)

# corpus: (language, every n-th other translated page taken, questions)
MIXES = {
    "mixed-ko": ("ko", 4, "fastapi-ko.jsonl"),
    "mixed-de": ("de", 2, "fastapi-de.jsonl"),
    "mixed-de-minor": ("de", 4, "fastapi-de.jsonl"),
}


def mixed_folder(corpus: str) -> Path:
    """The English docs with the corpus's translated pages in place (made once)."""
    language, every, questions = MIXES[corpus]
    target = PREPARED / f"fastapi-{corpus}"
    if target.is_dir():
        return target
    docs = FASTAPI_REPO / "docs"
    if not (docs / language / "docs").is_dir():
        raise SystemExit(f"{docs / language / 'docs'} is missing: see this script's docstring")
    answers = {a for line in (QUESTIONS / questions).read_text().splitlines() for a in json.loads(line)["answers"]}
    translated = sorted(str(p.relative_to(docs / language / "docs")) for p in (docs / language / "docs").rglob("*.md"))
    others = [page for page in translated if page not in answers]
    chosen = {page for page in translated if page in answers} | set(others[::every])
    shutil.copytree(docs / "en" / "docs", target)
    for page in chosen:
        shutil.copy2(docs / language / "docs" / page, target / page)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="run")
    parser.add_argument("--only", help="comma-separated corpora (default all): " + ",".join(MIXES))
    opts, passthrough = parser.parse_known_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = ["| corpus | run | MRR@10 tune | heldout | all |", "|---|---|---|---|---|"]
    for corpus in opts.only.split(",") if opts.only else MIXES:
        output = RESULTS / f"{corpus}-{opts.label}.json"
        command = [sys.executable, str(HERE / "known_items.py"), "--src", str(mixed_folder(corpus))]
        command += ["--questions", str(QUESTIONS / MIXES[corpus][2]), "--output", str(output), *passthrough]
        if subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL).returncode:
            raise SystemExit(f"{corpus}: known_items.py failed")
        rows = json.loads(output.read_text())["questions"]
        parts = [[r for r in rows if r["split"] == "tune"], [r for r in rows if r["split"] == "heldout"], rows]
        lines.append(f"| {corpus} | {opts.label} | " + " | ".join(f"{mrr(part):.4f}" for part in parts) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
