"""PDF, Word, PowerPoint and EPUB files built at test time (no binary fixture is committed): fpdf2
for PDFs (with or without an outline, a scanned page, a password), python-docx and python-pptx for
the Office files, an EPUB zipped by hand. Each says what it holds in words the tests search for."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

# One topic per page of the manual: the word a test searches for to land on that page.
TOPICS = {1: "calibration", 2: "lubrication", 3: "alignment", 4: "replacement"}
RUNNING_HEADER = "Widget Manual - Confidential"


def manual_pdf(*, outline: bool = True, scanned_page: bool = False, password: str | None = None) -> bytes:
    """Four pages, each with a chapter title, the running header, a footer "Page N" and a word
    hyphenated across a line end ("extraordi-" / "nary"); a fifth page holding only an image when
    ``scanned_page``; opened only with ``password`` when one is given."""
    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.set_title("Widget Manual")
    for number, topic in TOPICS.items():
        pdf.add_page()
        pdf.set_font("helvetica", size=9)
        pdf.set_y(8)
        pdf.cell(0, 5, RUNNING_HEADER)
        pdf.set_y(20)
        if outline:
            pdf.start_section(f"Chapter {number}: Sprocket {topic}", level=0)
        pdf.set_font("helvetica", size=16)
        pdf.cell(0, 10, f"Chapter {number}: Sprocket {topic}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, f"This page explains the {topic} of the sprocket. The extraordi-\nnary gearbox needs oil.")
        pdf.set_y(-15)
        pdf.cell(0, 5, f"Page {number}", align="C")
    if scanned_page:
        pdf.add_page()
        pdf.image(Image.new("RGB", (200, 100), "white"), x=10, y=10, w=100)
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    return bytes(pdf.output())


def scanned_pdf() -> bytes:
    """Two pages of images and no text at all (what a scanner makes)."""
    from fpdf import FPDF
    from PIL import Image

    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        pdf.image(Image.new("RGB", (200, 100), "gray"), x=10, y=10, w=150)
    return bytes(pdf.output())


W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def report_docx(*, comment: bool = True, tracked: bool = True) -> bytes:
    """A title, a heading, a bullet list and a table; a reviewer's comment ("REVIEWERREMARK") and,
    as tracked changes, an insertion ("INSERTEDWORDS") and a deletion ("DELETEDWORDS")."""
    import docx

    document = docx.Document()
    document.add_heading("Quarterly report", 0)
    document.add_heading("Revenue", 1)
    paragraph = document.add_paragraph("Revenue grew by twelve percent in the northern region.")
    document.add_paragraph("first bullet about sprockets", style="List Bullet")
    document.add_paragraph("second bullet about gearboxes", style="List Bullet")
    document.add_heading("Costs", 2)
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "40"}.items():
        table.cell(row, col).text = text
    if comment:
        document.add_comment(paragraph.runs, text="REVIEWERREMARK about the figure", author="Reviewer")
    buffer = io.BytesIO()
    document.save(buffer)
    raw = buffer.getvalue()
    if not tracked:
        return raw
    changes = (
        f'<w:ins xmlns:w="{W}" w:id="901" w:author="A" w:date="2026-01-01T00:00:00Z"><w:r><w:t> INSERTEDWORDS</w:t>'
        f'</w:r></w:ins><w:del xmlns:w="{W}" w:id="902" w:author="A" w:date="2026-01-01T00:00:00Z"><w:r>'
        "<w:delText> DELETEDWORDS</w:delText></w:r></w:del>"
    )
    end = "northern region.</w:t></w:r>"
    return _replace_member(raw, "word/document.xml", lambda xml: xml.replace(end, end + changes, 1))


def _replace_member(raw: bytes, name: str, change: object) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == name:
                data = change(data.decode()).encode()  # type: ignore[operator]
            target.writestr(info.filename, data)
    return out.getvalue()


def roadmap_pptx() -> bytes:
    """Three slides: a title and bullets with speaker notes, a table, and one with no title."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Roadmap 2027"
    first.placeholders[1].text = "Ship the gearbox\nHire two engineers"
    first.notes_slide.notes_text_frame.text = "Mention the budget freeze"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Costs"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "Item", (0, 1): "Cost", (1, 0): "Lubricant", (1, 1): "12"}.items():
        table.cell(row, col).text = text
    third = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    box = third.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "Questions welcome"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def _chapter(body: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title>'
        f"</head><body>{body}</body></html>"
    )


def book_epub(*, epub3: bool = True) -> bytes:
    """Three chapters whose spine order (one, two, three) is not their manifest order, titled in
    the navigation document (EPUB 3) or in toc.ncx (EPUB 2)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", CONTAINER)
        nav = (
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
            if epub3
            else '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
        )
        book.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>The Sprocket Book</dc:title></metadata>'
            f'<manifest>{nav}<item id="c3" href="text/three.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="c2" href="text/two%20b.xhtml" media-type="application/xhtml+xml"/></manifest>'
            f'<spine{"" if epub3 else " toc=" + chr(34) + "ncx" + chr(34)}><itemref idref="c1"/><itemref idref="c2"/>'
            '<itemref idref="c3"/></spine></package>',
        )
        titles = {"one.xhtml": "Beginnings", "two%20b.xhtml": "The Long Road", "three.xhtml": "Harbour"}
        if epub3:
            links = "".join(f'<li><a href="text/{href}#top">{title}</a></li>' for href, title in titles.items())
            book.writestr(
                "OEBPS/nav.xhtml",
                '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
                f'<body><nav epub:type="toc"><ol>{links}</ol></nav></body></html>',
            )
        else:
            points = "".join(
                f'<navPoint id="p{n}"><navLabel><text>{title}</text></navLabel><content src="text/{href}"/></navPoint>'
                for n, (href, title) in enumerate(titles.items())
            )
            book.writestr(
                "OEBPS/toc.ncx",
                '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
                f"<navMap>{points}</navMap></ncx>",
            )
        book.writestr(
            "OEBPS/text/one.xhtml",
            _chapter("<p>A cold morning in the workshop.</p><h2>The bench</h2><p>Tools lay everywhere.</p>"),
        )
        book.writestr("OEBPS/text/two b.xhtml", _chapter("<h1>The Long Road</h1><p>They walked to the coast.</p>"))
        book.writestr("OEBPS/text/three.xhtml", _chapter("<p>Boats rocked in the harbour.</p>"))
    return out.getvalue()


def write_all(folder: Path) -> None:
    """One of each (the PDF with an outline and a scanned page) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manual.pdf").write_bytes(manual_pdf(scanned_page=True))
    (folder / "report.docx").write_bytes(report_docx())
    (folder / "roadmap.pptx").write_bytes(roadmap_pptx())
    (folder / "book.epub").write_bytes(book_epub())
