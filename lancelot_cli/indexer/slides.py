"""A PowerPoint deck (.pptx) as one part per slide: its title as a heading ("Slide 3: Budget"), the
text of its shapes and tables in the order the slide stacks them, and the speaker notes after a
"Notes:" mark. Read with the standard library's zipfile and lxml (already a dependency): a deck is
zipped XML, and python-pptx would add about 12 MB (itself, Pillow, XlsxWriter) to read the same
elements. Dates, footers and slide numbers are left out.

A slide the deck lists more than once is read once (issue 37: a 5 KB deck that listed one slide
1,000 times became 835,001 chunks), and the deck's text is bounded (``bounds.TextBudget``).
"""

from __future__ import annotations

from typing import Any

from lancelot_cli.indexer.bounds import TextBudget
from lancelot_cli.indexer.zipped import open_zip, read_xml, relations

NS = {
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
}
NOTES = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide"
TITLES = {"title", "ctrTitle"}
CHROME = {"dt", "ftr", "sldNum", "hdr", "sldImg"}  # placeholders that are not the slide's content
NOTES_MARK = "Notes:"


def read_pptx(raw: bytes) -> tuple[str | None, list[str]]:
    """(the first slide's title, each slide's Markdown) of the deck in ``raw``."""
    budget = TextBudget()
    with open_zip(raw, "a PowerPoint deck (.pptx)") as deck:
        presentation = read_xml(deck, "ppt/presentation.xml")
        targets = relations(deck, "ppt/presentation.xml")
        ids = presentation.xpath("p:sldIdLst/p:sldId/@r:id", namespaces=NS)
        slides = dict.fromkeys(targets[i][0] for i in ids if i in targets)  # each slide once, in order
        parts: list[str] = []
        first_title: str | None = None
        for number, name in enumerate(slides, start=1):
            title, body = _shapes(read_xml(deck, name).find("p:cSld/p:spTree", NS))
            first_title = first_title or title
            notes = _notes(deck, name)
            heading = f"# Slide {number}: {title}" if title else f"# Slide {number}"
            part = "\n\n".join([heading, *body, *([f"{NOTES_MARK} {notes}"] if notes else [])])
            parts.append(budget.take(part))
    return first_title, parts


def _shapes(tree: Any) -> tuple[str | None, list[str]]:
    """(the title, the other paragraphs and table rows) of a shape tree, groups included."""
    title: str | None = None
    body: list[str] = []
    for shape in tree if tree is not None else []:
        tag = shape.tag.rsplit("}", 1)[-1] if isinstance(shape.tag, str) else ""
        if tag == "grpSp":
            inner_title, inner = _shapes(shape)
            title = title or inner_title
            body.extend(inner)
        elif tag == "graphicFrame":
            rows = [
                " | ".join(_text(cell) for cell in row.iterfind("a:tc", NS)) for row in shape.iterfind(".//a:tr", NS)
            ]
            table = "\n".join(f"| {row} |" for row in rows if row.strip(" |"))
            body.extend([table] if table else [])
        elif tag == "sp":
            kind = shape.xpath("string(p:nvSpPr/p:nvPr/p:ph/@type)", namespaces=NS)
            paragraphs = [t for t in map(_text, shape.iterfind("p:txBody/a:p", NS)) if t]
            if kind in TITLES and title is None and paragraphs:
                title = " ".join(paragraphs)
            elif kind not in CHROME:
                body.extend(paragraphs)
    return title, body


def _text(el: Any) -> str:
    """The text of a paragraph (or a table cell): its runs and fields, a line break as a space."""
    parts = [
        node.text or "" if node.tag.endswith("}t") else " " for node in el.iter(f"{{{NS['a']}}}t", f"{{{NS['a']}}}br")
    ]
    return " ".join("".join(parts).split())


def _notes(deck: Any, slide: str) -> str:
    """The speaker notes of a slide (its notes page's body placeholder), or ""."""
    for target, kind in relations(deck, slide).values():
        if kind == NOTES:
            _, body = _shapes(read_xml(deck, target).find("p:cSld/p:spTree", NS))
            return " ".join(body)
    return ""
