"""A PDF's text, page by page, through pypdfium2 (the ``docs`` extra): PDFium, the PDF engine of
Chromium, under BSD-3/Apache-2.0; about 9 MB installed, no other dependency.

Each page with text becomes one part of the document (chunks never span pages, so each has its page
number); the outline's bookmarks become Markdown headings (``pdf_text.place_headings``). A page with
images and no text (a scan) is listed in a note, not indexed as empty: OCR is not done. A PDF that
needs a password to open is skipped with that reason. The text is bounded as it is read
(``bounds.TextBudget``); what PDFium itself may spend is bounded by the worker process it runs in
(indexer/reading.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lancelot_cli.indexer.bounds import TextBudget
from lancelot_cli.indexer.pdf_text import (
    Bookmark,
    clean_lines,
    drop_running,
    page_text,
    place_headings,
    running_lines,
)

NO_TEXT_LAYER = "no text layer; OCR is not done"


class PdfError(Exception):
    """The PDF cannot be read; the message says why."""


@dataclass(frozen=True)
class PdfText:
    title: str | None  # from the document's metadata
    pages: list[tuple[int, str]]  # (page number from 1, Markdown text) of each page with text
    scanned: list[int]  # numbers of the pages with images but no text


def read_pdf(raw: bytes) -> PdfText:
    """The text of the PDF in ``raw``. Raises ``PdfError`` with a reason."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise PdfError(
                "encrypted: it needs a password to open, and Lancelot does not take PDF passwords; "
                "save a copy without the password to index it"
            ) from None
        raise PdfError(f"cannot parse PDF: {exc}") from None
    try:
        raw_pages, scanned = _page_lines(pdf)
        bookmarks = _bookmarks(pdf, len(raw_pages))
        title = (pdf.get_metadata_dict().get("Title") or "").strip() or None
    finally:
        pdf.close()
    running = running_lines(raw_pages)
    pages = []
    for index, lines in enumerate(raw_pages):
        text = page_text(place_headings(drop_running(lines, running), bookmarks.get(index, [])))
        if text.strip():
            pages.append((index + 1, text))
    return PdfText(title, pages, scanned)


def _page_lines(pdf: Any) -> tuple[list[list[str]], list[int]]:
    """Each page's lines (empty for a page with no text), and the numbers of the scanned pages."""
    import pypdfium2.raw as pdfium_c

    pages: list[list[str]] = []
    scanned: list[int] = []
    budget = TextBudget()
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                text = budget.take(textpage.get_text_range())
            finally:
                textpage.close()
            if not text.strip():
                images = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2)
                if next(iter(images), None) is not None:  # a blank page is not worth a word
                    scanned.append(index + 1)
                text = ""
        finally:
            page.close()
        pages.append(clean_lines(text) if text else [])
    return pages, scanned


def _bookmarks(pdf: Any, count: int) -> dict[int, list[Bookmark]]:
    """The outline's entries by the page they point at (0-based), in outline order."""
    found: dict[int, list[Bookmark]] = {}
    for item in pdf.get_toc():
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        title = (item.get_title() or "").strip()
        if index is None or not 0 <= index < count or not title:
            continue
        found.setdefault(index, []).append(Bookmark(item.level, title, index))
    return found


def scanned_note(pages: list[int]) -> str:
    """ "pages 3, 7–9 not indexed: no text layer; OCR is not done" """
    spans: list[str] = []
    start = prev = pages[0]
    for number in [*pages[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        spans.append(str(start) if start == prev else f"{start}–{prev}")
        if number is not None:
            start = prev = number
    word = "page" if len(pages) == 1 else "pages"
    return f"{word} {', '.join(spans)} not indexed: {NO_TEXT_LAYER}"
