"""Hostile PDF, Word, PowerPoint and EPUB files, built at test time from raw bytes (issue 37 item 4:
document bombs). Each is small on disk and costly to read: memory, time or output text far beyond
its size. tests/test_document_bombs.py indexes them; the same builders made the figures in the
commit messages (``python -m tests.support.document_bombs OUT_FOLDER`` writes one of each)."""

from __future__ import annotations

import io
import sys
import zipfile
import zlib
from pathlib import Path

from tests.support.document_files import CONTAINER, _chapter


def raw_pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF whose objects 1..n are ``objects``, with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"", compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


# Objects 1-4 of every PDF here: the catalog, the page tree, one page (its content is object 4) and a font.
_HEAD = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >> >>"
    ),
]
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def nested_forms_pdf(depth: int = 7, fanout: int = 10) -> bytes:
    """A page that draws a form XObject which draws the next one ``fanout`` times, ``depth`` levels
    deep, the last drawing one word: fanout ** depth words for PDFium to lay out in about 2 KB
    (issue 37 item 4: depth 6 took 1.84 GB, depth 7 aborted the run)."""
    forms = []
    for level in range(depth + 1):
        if level < depth:  # object 6 + level draws object 7 + level, as /Y
            inner = b"/Y Do " * fanout
            resources = b"/Resources << /XObject << /Y %d 0 R >> >>" % (7 + level)
        else:
            inner = b"BT /F1 9 Tf 10 10 Td (boom) Tj ET"
            resources = b"/Resources << /Font << /F1 5 0 R >> >>"
        forms.append(_stream(inner, b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources))
    return raw_pdf([*_HEAD, _stream(b"/X Do"), _FONT, *forms])


def inflating_pdf(megabytes: int = 256) -> bytes:
    """One page whose content stream inflates to ``megabytes`` MB of text-drawing operators."""
    line = b"BT /F1 9 Tf 10 10 Td (bomb) Tj ET\n"
    content = line * (megabytes * 1024 * 1024 // len(line))
    return raw_pdf([*_HEAD, _stream(content, compress=True), _FONT, b"<< >>"])


def bookmarked_pdf(bookmarks: int, lines: int = 200) -> bytes:
    """One page of ``lines`` lines under ``bookmarks`` outline entries that all point at it."""
    text = b"".join(b"(line %d of the page) Tj T* " % n for n in range(lines))
    content = b"BT /F1 9 Tf 12 TL 10 780 Td " + text + b"ET"
    outline = 7
    items = []
    for n in range(bookmarks):
        links = b" /Prev %d 0 R" % (outline + n) if n else b""
        links += b" /Next %d 0 R" % (outline + n + 2) if n < bookmarks - 1 else b""
        items.append(b"<< /Title (Bookmark %d) /Parent %d 0 R /Dest [3 0 R /Fit]%s >>" % (n, outline, links))
    root = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (outline + 1, outline + bookmarks, bookmarks)
    catalog = b"<< /Type /Catalog /Pages 2 0 R /Outlines %d 0 R >>" % outline
    return raw_pdf([catalog, *_HEAD[1:], _stream(content), _FONT, b"<< >>", root, *items])


W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_DOCX_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)


def _rels(*entries: tuple[str, str, str]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{OFFICE}/{kind}" Target="{target}"/>' for i, kind, target in entries)
    return f'<?xml version="1.0"?><Relationships xmlns="{RELS}">{body}</Relationships>'


def raw_docx(body: str, members: dict[str, bytes] | None = None, document_rels: str | None = None) -> bytes:
    """A Word document whose body is ``body`` (WordprocessingML), zipped by hand."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as docx:
        docx.writestr("[Content_Types].xml", _DOCX_TYPES)
        docx.writestr("_rels/.rels", _rels(("rId1", "officeDocument", "word/document.xml")))
        document = f'<w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>{body}</w:body></w:document>'
        docx.writestr("word/document.xml", document)
        if document_rels is not None:
            docx.writestr("word/_rels/document.xml.rels", document_rels)
        for name, data in (members or {}).items():
            docx.writestr(name, data)
    return out.getvalue()


def paragraph(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def empty_paragraphs_docx(count: int = 4_000_000) -> bytes:
    """``count`` empty paragraphs and one with a word (about 36 KB for four million)."""
    return raw_docx("<w:p/>" * count + paragraph("lonely"))


def repeated_image_docx(references: int = 64, megabytes: int = 32) -> bytes:
    """One image of ``megabytes`` MB (zeros: it zips to almost nothing) drawn ``references`` times."""
    drawing = (
        '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">'
        '<wp:docPr id="1" name="p"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
        '<a:graphicData><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture">'
        '<pic:blipFill><a:blip r:embed="rIdImage"/></pic:blipFill></pic:pic></a:graphicData></a:graphic>'
        "</wp:inline></w:drawing></w:r></w:p>"
    )
    rels = _rels(("rIdImage", "image", "media/image1.png"))
    image = b"\x89PNG\r\n\x1a\n" + bytes(megabytes * 1024 * 1024)
    return raw_docx(paragraph("pictures") + drawing * references, {"word/media/image1.png": image}, rels)


P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def repeated_slide_pptx(times: int = 1000, words: int = 100_000) -> bytes:
    """A deck whose slide list names one slide (``words`` words of text) ``times`` times."""
    ids = "".join(f'<p:sldId id="{256 + n}" r:id="rId2"/>' for n in range(times))
    presentation = f'<p:presentation xmlns:p="{P}" xmlns:r="{R}"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>'
    text = " ".join(["again"] * words)
    slide = (
        f'<p:sld xmlns:p="{P}" xmlns:a="{A}"><p:cSld><p:spTree><p:sp><p:txBody>'
        f"<a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as deck:
        deck.writestr("ppt/presentation.xml", presentation)
        deck.writestr("ppt/_rels/presentation.xml.rels", _rels(("rId2", "slide", "slides/slide1.xml")))
        deck.writestr("ppt/slides/slide1.xml", slide)
    return out.getvalue()


def raw_epub(chapters: dict[str, str], spine: list[str], manifest: dict[str, str] | None = None) -> bytes:
    """A book of ``chapters`` (member name under OEBPS -> XHTML body); ``manifest`` maps item ids to
    hrefs (one per chapter by default), ``spine`` lists item ids in reading order."""
    manifest = manifest if manifest is not None else {name: name for name in chapters}
    items = "".join(
        f'<item id="{i}" href="{href}" media-type="application/xhtml+xml"/>' for i, href in manifest.items()
    )
    refs = "".join(f'<itemref idref="{i}"/>' for i in spine)
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bomb Book</dc:title></metadata>'
        f"<manifest>{items}</manifest><spine>{refs}</spine></package>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", CONTAINER)
        book.writestr("OEBPS/content.opf", opf)
        for name, body in chapters.items():
            book.writestr(f"OEBPS/{name}", _chapter(body))
    return out.getvalue()


def repeated_chapter_epub(times: int = 1000, words: int = 100_000) -> bytes:
    """A book whose spine reads one chapter (``words`` words) ``times`` times."""
    body = "<p>" + " ".join(["again"] * words) + "</p>"
    return raw_epub({"one.xhtml": body}, ["one"] * times, {"one": "one.xhtml"})


BOMBS = {
    "nested-forms.pdf": nested_forms_pdf,
    "inflating.pdf": inflating_pdf,
    "empty-paragraphs.docx": empty_paragraphs_docx,
    "repeated-image.docx": repeated_image_docx,
    "repeated-slide.pptx": repeated_slide_pptx,
    "repeated-chapter.epub": repeated_chapter_epub,
}


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in BOMBS.items():
        (folder / name).write_bytes(make())  # type: ignore[operator]
        print(f"{name}: {(folder / name).stat().st_size:,} bytes")
