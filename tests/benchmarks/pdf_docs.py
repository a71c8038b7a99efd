"""PDF, Word, PowerPoint and EPUB files (issue 23): reading speed and peak memory on real text, and
known-item search with page-level answers on a real PDF manual.

Run from the repository root (the docs extra and the test extra installed):
    python tests/benchmarks/pdf_docs.py [--pdf /usr/share/doc/gnuplot/gnuplot.pdf] [--repeat 2]
        [--questions tests/benchmarks/known_items/gnuplot-pdf.jsonl] [--skip-speed] [--skip-search]

1. Speed and memory, each case in its own child process (peak RSS is per case, the reader pool's
   workers counted apart), paired runs A B A B (--repeat), min and median:
   - ``read``: ``read_document`` of the PDF alone (pages per second);
   Peak RSS is the process's VmHWM; the workers' figure is ru_maxrss of the children, which Linux
   carries across exec, so it is an upper bound (it starts at the size of the process that spawned
   them);
   - ``index w=1`` / ``index w=2``: ``index_folder`` of a folder holding 16 copies of the PDF, text
     only, one reader or two (the pool spreads files over processes, not the pages of one file),
     and the same text as 16 Markdown files (what writing the table costs, whatever the format);
   - ``docx``/``pptx``/``epub``: the same text (every page of the PDF) made into a Word document
     (python-docx: a heading and paragraphs per page), a deck (a slide per page) and a book (a
     chapter per page), each read with ``read_document``.
2. Known items: the PDF alone indexed (text only), then every question as ``Engine.search`` (limit
   10, what ``lancelot search`` and ``lancedb_search`` run). A hit answers when it is the PDF and its
   ``page`` is one of the question's pages. MRR@10, success@1/@3/@10; and the same with a page
   either side counted ("±1"). The questions were written from the PDF's outline and text before
   any search was run (tests/benchmarks/known_items/README.md).

Prints Markdown tables, the load (``/proc/loadavg``) before and after, and writes
results/pdf_docs.json (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "pdf_docs.json"
PDF = Path("/usr/share/doc/gnuplot/gnuplot.pdf")
QUESTIONS = HERE / "known_items" / "gnuplot-pdf.jsonl"
COPIES = 16  # files: as many as reading.POOL_THRESHOLD, so two readers make a pool
BIG = 64 * 1024 * 1024  # --max-file-size for the cases: real PDFs pass the 5 MB default

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.sources import read_document
folder, name, mode = Path({folder!r}), {name!r}, {mode!r}
started = time.perf_counter()
if mode == "read":
    doc = read_document(folder, name, {big})
    units, chunks = len(doc.parts) or 1, 0
else:
    report = index_folder(folder, {db!r}, workers={workers}, max_file_size={big})
    units, chunks = report.files, report.chunks
seconds = time.perf_counter() - started
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would start at the parent's size
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({{"seconds": seconds, "chunks": chunks, "peak_mb": peak / 1024,
    "workers_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
"""


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def child(folder: Path, name: str, mode: str, db: str = "", workers: int = 1) -> dict[str, Any]:
    code = CHILD.format(repo=str(REPO), folder=str(folder), name=name, mode=mode, db=db, workers=workers, big=BIG)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"case {mode} {name} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def page_texts(pdf: Path) -> list[str]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        pages = [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()
    # XML takes no control characters: PDFium's hyphen mark (U+FFFE) and form feeds go
    return ["".join(c for c in text.replace("\r\n", "\n") if c in "\n\t" or (" " <= c < "\ufffe")) for text in pages]


def same_text_as(pages: list[str], folder: Path) -> None:
    """The PDF's text as a .docx, a .pptx and an .epub, one page a section, slide or chapter."""
    import docx
    from pptx import Presentation
    from pptx.util import Inches

    from tests.support.document_files import CONTAINER, _chapter

    document = docx.Document()
    for n, text in enumerate(pages, start=1):
        document.add_heading(f"Page {n}", 1)
        for paragraph in text.split("\n"):
            document.add_paragraph(paragraph)
    document.save(folder / "same.docx")
    deck = Presentation()
    for n, text in enumerate(pages, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = f"Page {n}"
        box = slide.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(5))
        box.text_frame.text = text.replace("\x0b", " ")
    deck.save(folder / "same.pptx")
    import html
    import zipfile

    with zipfile.ZipFile(folder / "same.epub", "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("META-INF/container.xml", CONTAINER)
        items = "".join(
            f'<item id="c{n}" href="c{n}.xhtml" media-type="application/xhtml+xml"/>' for n in range(len(pages))
        )
        spine = "".join(f'<itemref idref="c{n}"/>' for n in range(len(pages)))
        book.writestr(
            "OEBPS/content.opf",
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>'
            f"<manifest>{items}</manifest><spine>{spine}</spine></package>",
        )
        for n, text in enumerate(pages):
            body = "".join(f"<p>{html.escape(line)}</p>" for line in text.split("\n"))
            book.writestr(f"OEBPS/c{n}.xhtml", _chapter(f"<h1>Page {n + 1}</h1>{body}"))


def speed(pdf: Path, repeat: int, work: Path) -> list[dict[str, Any]]:
    pages = page_texts(pdf)
    one = work / "one"
    one.mkdir()
    shutil.copy(pdf, one / pdf.name)
    many = work / "many"
    many.mkdir()
    as_markdown = work / "many-md"  # the same text as Markdown: what the table and its index cost
    as_markdown.mkdir()
    for n in range(COPIES):
        shutil.copy(pdf, many / f"copy{n}.pdf")
        (as_markdown / f"copy{n}.md").write_text("\n\n".join(pages))
    same_text_as(pages, one)
    cases = [
        ("pdf read", one, pdf.name, "read", 1, len(pages)),
        ("pdf index w=1", many, "", "index", 1, COPIES * len(pages)),
        ("pdf index w=2", many, "", "index", 2, COPIES * len(pages)),
        ("same text as .md, index w=1", as_markdown, "", "index", 1, COPIES * len(pages)),
        ("docx read", one, "same.docx", "read", 1, len(pages)),
        ("pptx read", one, "same.pptx", "read", 1, len(pages)),
        ("epub read", one, "same.epub", "read", 1, len(pages)),
    ]
    runs: dict[str, list[dict[str, Any]]] = {case[0]: [] for case in cases}
    for round_ in range(repeat):  # A B A B: every case once per round
        for label, folder, name, mode, workers, _ in cases:
            db = str(work / f"db-{label.replace(' ', '_').replace('=', '')}-{round_}")
            runs[label].append(child(folder, name, mode, db, workers))
    rows = []
    for label, folder, name, _, workers, units in cases:
        seconds = [r["seconds"] for r in runs[label]]
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file() and (not name or p.name == name))
        rows.append(
            {
                "case": label,
                "pages": units,
                "mb": round(size / 1e6, 2),
                "min_s": round(min(seconds), 2),
                "median_s": round(statistics.median(seconds), 2),
                "pages_per_s": round(units / min(seconds), 1),
                "peak_mb": round(max(r["peak_mb"] for r in runs[label]), 1),
                "workers_peak_mb": round(max(r["workers_peak_mb"] for r in runs[label]), 1) if workers > 1 else None,
            }
        )
    return rows


def known_items(pdf: Path, questions: Path, work: Path) -> dict[str, Any]:
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load as load_settings

    folder = work / "search"
    folder.mkdir()
    shutil.copy(pdf, folder / pdf.name)
    db = str(work / "search-db")
    index_folder(folder, db, max_file_size=BIG)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_"))}
    engine = Engine(load_settings(environ={**environ, "LANCEDB_PATH": db}))
    scores: dict[str, list[float]] = {"exact": [], "±1": []}
    per_question = []
    for line in questions.read_text().splitlines():
        item = json.loads(line)
        hits = engine.search(item["query"], limit=10).hits
        got = [hit.metadata.get("page") if hit.source == pdf.name else None for hit in hits]
        wanted = set(item["pages"])
        near = wanted | {p + 1 for p in wanted} | {p - 1 for p in wanted}
        exact = next((rank for rank, page in enumerate(got, start=1) if page in wanted), None)
        close = next((rank for rank, page in enumerate(got, start=1) if page in near), None)
        scores["exact"].append(1 / exact if exact else 0.0)
        scores["±1"].append(1 / close if close else 0.0)
        per_question.append({"id": item["id"], "pages": item["pages"], "got": got[:5], "rank": exact, "rank±1": close})
    ranks = {name: [q["rank" if name == "exact" else "rank±1"] for q in per_question] for name in scores}
    summary = {
        name: {
            "mrr@10": round(statistics.mean(scores[name]), 3),
            **{
                f"success@{k}": round(sum(1 for r in ranks[name] if r and r <= k) / len(ranks[name]), 3)
                for k in (1, 3, 10)
            },
        }
        for name in scores
    }
    return {"questions": len(per_question), "summary": summary, "per_question": per_question}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", type=Path, default=PDF)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    result: dict[str, Any] = {"pdf": str(args.pdf), "load_before": load(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="pdf-docs-") as tmp:
        if not args.skip_speed:
            result["speed"] = speed(args.pdf, args.repeat, Path(tmp))
            print(f"\nReading speed and peak memory ({args.pdf.name}; load before {result['load_before']})\n")
            print("| case | pages | MB | min s | median s | pages/s | peak RSS MB | workers' peak MB |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|")
            for row in result["speed"]:
                print(
                    f"| {row['case']} | {row['pages']} | {row['mb']} | {row['min_s']} | {row['median_s']} | "
                    f"{row['pages_per_s']} | {row['peak_mb']} | {row['workers_peak_mb'] or ''} |"
                )
        if not args.skip_search:
            result["known_items"] = found = known_items(args.pdf, args.questions, Path(tmp))
            print(f"\nKnown items ({found['questions']} questions, page-level answers)\n")
            print("| pages counted | MRR@10 | success@1 | success@3 | success@10 |")
            print("|---|---:|---:|---:|---:|")
            for name, s in found["summary"].items():
                print(f"| {name} | {s['mrr@10']} | {s['success@1']} | {s['success@3']} | {s['success@10']} |")
            for q in found["per_question"]:
                print(f"  {q['id']}: answer {q['pages']}, rank {q['rank']}, rank±1 {q['rank±1']}, top pages {q['got']}")
    result["load_after"] = load()
    print(f"\nload after: {result['load_after']}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
