"""PDF, Word, PowerPoint and EPUB files (issue 23): their text, headings and page numbers as rows,
hits that say the page, `lancelot show SOURCE --page N`, and the same guarantees as HTML (a file that
cannot be read is skipped with its reason and the rest indexed; --max-file-size; re-runs read only
what changed). Fixtures are built at test time (tests/support/document_files.py); real LanceDB, the
real CLI in-process (typer's CliRunner), the engine as the server builds it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.indexer import index_folder, reading
from lancelot_cli.indexer.pdf_text import Bookmark, clean_lines, drop_running, place_headings, running_lines
from lancelot_cli.indexer.rows import rows_for
from lancelot_cli.indexer.sources import SourceError, read_document
from lancelot_cli.install_hint import install_command
from tests.support.document_files import (
    RUNNING_HEADER,
    TOPICS,
    book_epub,
    manual_pdf,
    report_docx,
    roadmap_pptx,
    scanned_pdf,
    write_all,
)
from tests.support.engines import engine_for, wired


@pytest.fixture(autouse=True)
def read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents read in this process: these tests are about what the readers make of a file, not
    where they run (a run reads PDF, Word, PowerPoint and EPUB files in a worker process, under
    bounds: reading.ISOLATED; tests/test_document_bombs.py runs them there), and a spawned worker
    would make each of them a slow test."""
    monkeypatch.setattr(reading, "ISOLATED", frozenset())


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), prog_name="lancelot")


def rows_of(folder: Path, name: str) -> list[dict[str, Any]]:
    return rows_for(read_document(folder, name))


def put(folder: Path, name: str, raw: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(raw)
    return folder


# -- PDF ---------------------------------------------------------------------------------------------


def test_a_pdf_is_chunked_by_page_with_its_outline_as_headings(tmp_path: Path) -> None:
    rows = rows_of(put(tmp_path, "manual.pdf", manual_pdf()), "manual.pdf")
    assert [row["page"] for row in rows] == [1, 2, 3, 4]  # one short page, one chunk: never two pages in one
    for row, (number, topic) in zip(rows, TOPICS.items(), strict=True):
        assert topic in row["text"]
        assert row["text"].startswith(f"# Chapter {number}: Sprocket {topic}")  # the bookmark, as a heading
        assert row["heading"] == f"Widget Manual > Chapter {number}: Sprocket {topic}"
        assert row["title"] == "Widget Manual"  # the document's metadata title
        assert "extraordinary gearbox" in row["text"]  # the hyphenation at the line end joined
        assert RUNNING_HEADER not in row["text"] and f"Page {number}" not in row["text"]  # header and footer gone
        assert row["line_start"] is None


def test_a_pdf_without_an_outline_keeps_its_text_and_takes_the_file_name_without_a_title(tmp_path: Path) -> None:
    from fpdf import FPDF

    rows = rows_of(put(tmp_path, "plain.pdf", manual_pdf(outline=False)), "plain.pdf")
    assert [row["page"] for row in rows] == [1, 2, 3, 4]
    assert "Chapter 2: Sprocket lubrication\nThis page explains the lubrication" in rows[1]["text"]
    assert not any(line.startswith("#") for row in rows for line in row["text"].split("\n"))
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.cell(0, 10, "# not a heading: a comment line of an example")
    doc = read_document(put(tmp_path, "untitled.pdf", bytes(pdf.output())), "untitled.pdf")
    assert doc.title == "untitled.pdf"
    assert rows_for(doc)[0]["heading"] == "untitled.pdf"  # the "#" line was escaped, not taken as a heading


def test_scanned_pages_are_named_in_a_note_and_a_scanned_only_pdf_is_skipped(tmp_path: Path) -> None:
    src = put(tmp_path / "src", "manual.pdf", manual_pdf(scanned_page=True))
    put(src, "scan.pdf", scanned_pdf())
    report = index_folder(src, str(tmp_path / "db"))
    assert report.notes == [("manual.pdf", "page 5 not indexed: no text layer; OCR is not done")]
    assert report.skipped == [("scan.pdf", "no text on any of its 2 page(s): no text layer; OCR is not done")]
    assert report.files == 1 and report.chunks == 4


def test_an_encrypted_or_broken_pdf_is_skipped_with_its_reason_and_the_rest_indexed(tmp_path: Path) -> None:
    from fpdf import FPDF

    src = put(tmp_path / "src", "locked.pdf", manual_pdf(password="s3cret"))
    restricted = FPDF()  # an owner password only (printing, copying restricted): opens without one
    restricted.add_page()
    restricted.set_font("helvetica", size=11)
    restricted.cell(0, 10, "permissions restricted but readable")
    restricted.set_encryption(owner_password="owner")
    put(src, "restricted.pdf", bytes(restricted.output()))
    put(src, "broken.pdf", manual_pdf()[:300])
    put(src, "fake.docx", b"not a zip at all")
    (src / "notes.md").write_text("# Notes\n\nThe sprocket needs lubrication weekly.\n")
    done = cli("index", str(src), str(tmp_path / "db"), "--json", "--no-embed")
    assert done.exit_code == 0, done.output
    reasons = {item["path"]: item["reason"] for item in json.loads(done.stdout)["skipped"]}
    assert reasons["locked.pdf"].startswith("encrypted: it needs a password to open")
    assert reasons["broken.pdf"].startswith("cannot parse PDF:")
    assert reasons["fake.docx"].startswith("not a Word document (.docx)")
    assert all("\n" not in reason for reason in reasons.values())
    assert "restricted.pdf" not in reasons and json.loads(done.stdout)["files"] == 2


def test_hits_documents_and_show_say_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = put(tmp_path / "src", "manual.pdf", manual_pdf())
    (src / "other.md").write_text("# Other\n\nNothing about sprockets here, only kayaks.\n")
    db = tmp_path / "db"
    index_folder(src, str(db))
    hits = wired(engine_for(db, monkeypatch)).search("lubrication")["hits"]
    assert hits[0]["source"] == "manual.pdf" and hits[0]["metadata"]["page"] == 2
    assert "page" not in next(h for h in wired(engine_for(db, monkeypatch)).search("kayaks")["hits"])["metadata"]
    done = cli("search", "lubrication", "--db", str(db))
    assert done.exit_code == 0 and "manual.pdf · page 2" in done.stdout
    done = cli("query", "lubrication", "--db", str(db))
    assert done.exit_code == 0 and "source: manual.pdf · page 2" in done.stdout
    done = cli("show", "manual.pdf", "--page", "3", "--db", str(db))
    assert done.exit_code == 0, done.output
    assert "source: manual.pdf · chunk #2 of 4 · page 3" in done.stdout
    assert "alignment" in done.stdout and "lubrication" not in done.stdout
    whole = cli("show", "manual.pdf", "--db", str(db))
    assert "· pages 1–4" in whole.stdout
    missing = cli("show", "manual.pdf", "--page", "9", "--db", str(db))
    assert missing.exit_code != 0 and "its indexed pages run from 1 to 4" in missing.stderr
    assert "Traceback" not in missing.output
    assert "no page numbers (not a PDF)" in cli("show", "other.md", "--page", "1", "--db", str(db)).stderr


@pytest.mark.anyio
async def test_lancedb_document_reads_one_page(tmp_path: Path) -> None:
    from mcp import Client

    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load
    from tests.support.calls import text_of

    src = put(tmp_path / "src", "manual.pdf", manual_pdf())
    db = tmp_path / "db"
    index_folder(src, str(db))
    async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
        result = await client.call_tool("lancedb_document", {"source": "manual.pdf", "page": 4})
    text = text_of(result)
    assert "· page 4" in text and "replacement" in text and "alignment" not in text


# -- the page column's bookkeeping --------------------------------------------------------------------


def test_a_table_from_before_the_page_column_gets_it(tmp_path: Path) -> None:
    import lancedb

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nsome text\n")
    db = tmp_path / "db"
    index_folder(src, str(db))
    lancedb.connect(db).open_table("documents").drop_columns(["page"])  # as an earlier version wrote it
    put(src, "manual.pdf", manual_pdf())
    report = index_folder(src, str(db))
    assert report.added == 4
    rows = lancedb.connect(db).open_table("documents").to_arrow().to_pylist()
    assert sorted(row["page"] or 0 for row in rows) == [0, 1, 2, 3, 4]


def test_rerunning_reads_only_what_changed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    write_all(src)
    db = tmp_path / "db"
    first = index_folder(src, str(db))
    assert first.read == 4 and not first.skipped
    again = index_folder(src, str(db))
    assert again.read == 0 and not again.committed
    os.utime(src / "manual.pdf", ns=(1, 1))  # touched, same content: read again, nothing rewritten
    touched = index_folder(src, str(db))
    assert touched.read == 1 and (touched.added, touched.updated, touched.deleted) == (0, 0, 0)
    (src / "manual.pdf").write_bytes(manual_pdf(scanned_page=False))
    changed = index_folder(src, str(db))
    assert changed.read == 1 and changed.notes == []


def test_max_file_size_bounds_documents_too(tmp_path: Path) -> None:
    src = put(tmp_path / "src", "manual.pdf", manual_pdf())
    (src / "a.md").write_text("# A\n\nsome text\n")
    report = index_folder(src, str(tmp_path / "db"), max_file_size=1000)
    assert report.skipped == [("manual.pdf", "larger than 1,000 bytes (--max-file-size to change)")]


def test_without_the_docs_extra_one_line_names_the_install_and_the_rest_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    write_all(src)
    put(src, "second.pdf", manual_pdf(outline=False))
    (src / "notes.md").write_text("# Notes\n\nSprockets need lubrication.\n")
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # what an install without the extra has: no module
    monkeypatch.setitem(sys.modules, "mammoth", None)
    done = cli("index", str(src), str(tmp_path / "db"), "--no-embed")
    assert done.exit_code == 0, done.output
    lines = [line for line in done.stderr.splitlines() if "docs extra" in line]
    assert len(lines) == 1
    assert lines[0].startswith("not read 3 file(s) (manual.pdf, report.docx, second.pdf)")
    assert lines[0].endswith(f"reading .docx and .pdf files needs the docs extra: {install_command('docs')}")
    assert "Indexed 3 file(s)" in done.stderr  # the deck, the book and the notes
    only = put(tmp_path / "only", "manual.pdf", manual_pdf())
    alone = cli("index", str(only), str(tmp_path / "db2"), "--no-embed")
    assert alone.exit_code != 0 and "needs the docs extra" in alone.stderr and "Traceback" not in alone.output
    monkeypatch.delitem(sys.modules, "pypdfium2")
    monkeypatch.delitem(sys.modules, "mammoth")
    later = index_folder(src, str(tmp_path / "db"))  # installed now: the files left out are read
    assert later.read == 3 and later.need_extra == []


# -- Word, PowerPoint, EPUB ---------------------------------------------------------------------------


def test_a_word_document_keeps_headings_lists_and_tables_and_not_comments_or_deletions(tmp_path: Path) -> None:
    doc = read_document(put(tmp_path, "report.docx", report_docx()), "report.docx")
    assert doc.title == "Quarterly report" and doc.kind == "docx"
    assert "# Revenue\n\nRevenue grew by twelve percent" in doc.text
    assert "- first bullet about sprockets\n- second bullet about gearboxes" in doc.text
    assert "## Costs" in doc.text and "| Region | Sales |\n| North | 40 |" in doc.text
    assert "INSERTEDWORDS" in doc.text  # tracked changes read as accepted
    assert "DELETEDWORDS" not in doc.text and "REVIEWERREMARK" not in doc.text
    headings = {row["heading"] for row in rows_for(doc, size=80)}
    assert "Quarterly report > Revenue > Costs" in headings


def test_a_deck_is_one_chunk_per_slide_with_its_title_and_notes(tmp_path: Path) -> None:
    rows = rows_of(put(tmp_path, "roadmap.pptx", roadmap_pptx()), "roadmap.pptx")
    assert [row["heading"] for row in rows] == [
        "Roadmap 2027 > Slide 1: Roadmap 2027",
        "Roadmap 2027 > Slide 2: Costs",
        "Roadmap 2027 > Slide 3",
    ]
    assert rows[0]["text"] == (
        "# Slide 1: Roadmap 2027\n\nShip the gearbox\n\nHire two engineers\n\nNotes: Mention the budget freeze"
    )
    assert "| Item | Cost |\n| Lubricant | 12 |" in rows[1]["text"] and "Notes:" not in rows[1]["text"]
    assert rows[2]["text"] == "# Slide 3\n\nQuestions welcome"
    assert all(row["page"] is None for row in rows)


@pytest.mark.parametrize("epub3", [True, False], ids=["epub3-nav", "epub2-ncx"])
def test_a_book_is_read_in_spine_order_with_titles_from_its_contents(tmp_path: Path, epub3: bool) -> None:
    rows = rows_of(put(tmp_path, "book.epub", book_epub(epub3=epub3)), "book.epub")
    assert [row["heading"].split(" > ")[1] for row in rows] == ["Beginnings", "The Long Road", "Harbour"]
    assert rows[0]["title"] == "The Sprocket Book"
    assert rows[0]["text"] == "# Beginnings\n\nA cold morning in the workshop.\n\n## The bench\n\nTools lay everywhere."
    assert rows[1]["text"].count("The Long Road") == 1  # its own first heading says the title: not repeated
    assert rows[2]["text"] == "# Harbour\n\nBoats rocked in the harbour."


def entities_epub(*, epub3: bool) -> bytes:
    """A one-chapter book whose contents (with the DOCTYPE EPUB tools write, whose DTD is not loaded)
    and chapter say "<", "é" and a no-break space by entities, and "&lt;" by "&amp;lt;"."""
    import io
    import zipfile

    from tests.support.document_files import CONTAINER

    said = "Caf&eacute;&nbsp;&lt;T&gt; &amp;lt;"
    if epub3:
        toc = ("nav", "nav.xhtml", "application/xhtml+xml", ' properties="nav"')
        doc = (
            '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
            '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd"><html xmlns="http://www.w3.org/1999/xhtml" '
            'xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol><li>'
            f'<a href="c.xhtml"><span>{said}</span></a></li></ol></nav></body></html>'
        )
    else:
        toc = ("ncx", "toc.ncx", "application/x-dtbncx+xml", "")
        doc = (
            '<?xml version="1.0"?><!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
            '"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd"><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" '
            f'version="2005-1"><navMap><navPoint id="p"><navLabel><text>{said}</text></navLabel>'
            '<content src="c.xhtml"/></navPoint></navMap></ncx>'
        )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", CONTAINER)
        book.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Less &lt; More &amp;lt;</dc:title>'
            f'</metadata><manifest><item id="{toc[0]}" href="{toc[1]}" media-type="{toc[2]}"{toc[3]}/>'
            '<item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>'
            f'<spine toc="{toc[0]}"><itemref idref="c"/></spine></package>',
        )
        book.writestr(f"OEBPS/{toc[1]}", doc)
        book.writestr(
            "OEBPS/c.xhtml",
            '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
            "<p>if a &lt; b, the vector&lt;int&gt; holds &amp;lt; as text</p>"
            "<pre>x &lt; y &amp;amp;</pre></body></html>",
        )
    return out.getvalue()


@pytest.mark.parametrize("epub3", [True, False], ids=["epub3-nav", "epub2-ncx"])
def test_a_books_entities_are_decoded_once(tmp_path: Path, epub3: bool) -> None:
    """Issue 45 item 10: entities of a book's contents were left escaped ("Caf&eacute;") or dropped;
    each is decoded once, so "&amp;lt;" is the text "&lt;"."""
    rows = rows_of(put(tmp_path, "book.epub", entities_epub(epub3=epub3)), "book.epub")
    assert rows[0]["title"] == "Less < More &lt;"
    assert rows[0]["text"] == (
        "# Café <T> &lt;\n\nif a < b, the vector<int> holds &lt; as text\n\n```\nx < y &amp;\n```"
    )


def test_a_damaged_deck_or_book_is_skipped_with_a_reason(tmp_path: Path) -> None:
    import zipfile

    put(tmp_path, "empty.pptx", b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: no presentation
    with zipfile.ZipFile(tmp_path / "bad.epub", "w") as book:
        book.writestr("META-INF/container.xml", "<container><oops")
    for name, start in (("empty.pptx", "ppt/presentation.xml is missing"), ("bad.epub", "META-INF/container.xml")):
        with pytest.raises(SourceError) as caught:
            read_document(tmp_path, name)
        assert str(caught.value).startswith(start)


@pytest.mark.slow  # the reader pool spawns processes
def test_documents_read_in_worker_processes_as_in_the_run_itself(tmp_path: Path) -> None:
    src = tmp_path / "src"
    write_all(src)
    put(src, "locked.pdf", manual_pdf(password="x"))
    for n in range(12):  # 17 documents in all: past the pool's threshold (reading.POOL_THRESHOLD)
        put(src / "more", f"{n}.pdf", manual_pdf(outline=n % 2 == 0))
    pooled = index_folder(src, str(tmp_path / "pooled"), workers=2)
    alone = index_folder(src, str(tmp_path / "alone"), workers=1)
    assert (pooled.chunks, pooled.skipped, pooled.notes) == (alone.chunks, alone.skipped, alone.notes)
    assert pooled.skipped[0][1].startswith("encrypted")


# -- the PDF text's clean-up, as pure functions ------------------------------------------------------------


def test_running_headers_and_page_numbers_go_and_numbered_titles_stay() -> None:
    pages = [
        [f"Guide {n}", f"Chapter {n}: Part {n}", "body text that differs " * n, f"Page {n} of 9", str(n)]
        for n in range(1, 7)
    ]
    running = running_lines(pages)
    kept = drop_running(pages[2], running)
    assert kept == ["Chapter 3: Part 3", "body text that differs " * 3]
    assert running_lines(pages[:2]) == set()  # two pages are too few to tell


def test_hyphenation_is_joined_only_between_letters() -> None:
    assert clean_lines("an extraordi-\r\nnary day\r\nbig\ufffebang\r\nnumber 12-\r\n13\r\nEast-\r\nWest") == [
        "an extraordinary day",
        "bigbang",
        "number 12-",
        "13",
        "East-",
        "West",
    ]


def test_a_run_in_heading_keeps_the_rest_of_its_line() -> None:
    lines = ["Valid The valid(x) function may be used", "in expressions.", "Value", "B = value(A)"]
    marks = [Bookmark(3, "Valid", 40), Bookmark(3, "Value", 40), Bookmark(3, "Missing", 40)]
    assert place_headings(lines, marks) == [
        "#### Valid",
        "The valid(x) function may be used",
        "in expressions.",
        "#### Value",
        "#### Missing",
        "B = value(A)",
    ]


def test_watch_picks_up_a_new_pdf(tmp_path: Path) -> None:
    import threading
    import time

    import lancedb

    from lancelot_cli.indexer import watch

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nsome text\n")
    db = str(tmp_path / "db")
    stop = threading.Event()
    errors: list[str] = []
    batches: list[Any] = []
    thread = threading.Thread(
        target=watch.watch_folder,
        args=(src, db),
        daemon=True,
        kwargs={"on_batch": batches.append, "on_error": errors.append, "stop": stop},
    )
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not batches:
            time.sleep(0.05)
        put(src, "manual.pdf", manual_pdf())
        pages: list[int] = []
        while time.monotonic() < deadline and not pages:
            time.sleep(0.1)
            rows = lancedb.connect(db).open_table("documents").to_arrow().to_pylist()
            pages = sorted(row["page"] for row in rows if row["path"] == "manual.pdf")
    finally:
        stop.set()
        thread.join(timeout=15)
    assert not thread.is_alive() and errors == []
    assert pages == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("algorithm", "skipped"),
    [("http://www.w3.org/2001/04/xmlenc#aes128-cbc", True), ("http://www.idpf.org/2008/embedding", False)],
    ids=["drm", "font-obfuscation"],
)
def test_a_book_with_encrypted_chapters_is_skipped_and_obfuscated_fonts_are_not_drm(
    tmp_path: Path, algorithm: str, skipped: bool
) -> None:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(book_epub())) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))
        target.writestr(
            "META-INF/encryption.xml",
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            f'<enc:EncryptionMethod Algorithm="{algorithm}"/></enc:EncryptedData></encryption>',
        )
    put(tmp_path, "book.epub", out.getvalue())
    if skipped:
        with pytest.raises(SourceError, match=r"encrypted \(DRM\)"):
            read_document(tmp_path, "book.epub")
    else:
        assert len(rows_of(tmp_path, "book.epub")) == 3
