"""An EPUB book as one part per chapter, in spine (reading) order, each headed by its title in the
table of contents (the EPUB 3 navigation document, else EPUB 2's toc.ncx). An EPUB is zipped XHTML:
read with the standard library's zipfile, each chapter walked into Markdown as an HTML page's body
(``html_markdown.body_markdown``). No extra is needed. DRM-protected books cannot be read (their
chapters are encrypted): they are skipped with that reason.

Each file of the book is read once, however often the spine names it and whatever ``#fragment`` its
manifest entries carry (issue 39: Debian's live manual lists each chapter once per section, and one
chapter was read 27 times; issue 37: a spine that repeats one chapter a thousand times). A chapter
that is missing or cannot be read is left out with a note; the others are indexed.
"""

from __future__ import annotations

import html
import posixpath
import re
from typing import Any
from urllib.parse import unquote

from lancelot_cli.indexer.bounds import TextBudget
from lancelot_cli.indexer.zipped import ZipError, open_zip, read_member, read_xml

NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "x": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
}
_HEADING = re.compile(r"^#{1,6} +(.+)$")
# Embedded fonts scrambled so they cannot be lifted out (IDPF's and Adobe's schemes): not DRM.
FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}


def read_epub(raw: bytes) -> tuple[str | None, list[str], list[str]]:
    """(the book's title, each chapter's Markdown in spine order, notes on chapters left out) of the
    EPUB in ``raw``."""
    with open_zip(raw, "an EPUB book") as book:
        if "META-INF/encryption.xml" in book.namelist() and _drm(book):
            raise ZipError("its chapters are encrypted (DRM); Lancelot cannot read them")
        opf_name = read_xml(book, "META-INF/container.xml").xpath("string(//c:rootfile/@full-path)", namespaces=NS)
        if not opf_name:
            raise ZipError("META-INF/container.xml names no package document")
        opf = read_xml(book, opf_name)
        folder = posixpath.dirname(opf_name)
        items = {
            item.get("id"): item for item in opf.iterfind("opf:manifest/opf:item", NS) if item.get("href") is not None
        }
        titles = _toc_titles(book, opf, items, folder)
        chapters, notes = _chapters(book, _spine(opf, items, folder), titles)
        found = opf.find("opf:metadata/dc:title", NS)
        title = (_text(found) if found is not None else "") or None
    return title, [chapter for chapter in chapters if chapter.strip()], notes


def _spine(opf: Any, items: dict[str, Any], folder: str) -> list[str]:
    """The members of the book's (X)HTML chapters in reading order, each once (its first place)."""
    members: dict[str, None] = {}
    for ref in opf.iterfind("opf:spine/opf:itemref", NS):
        item = items.get(ref.get("idref"))
        if item is not None and "html" in (item.get("media-type") or ""):
            members.setdefault(_member(folder, item.get("href")))
    return list(members)


def _chapters(book: Any, members: list[str], titles: dict[str, str]) -> tuple[list[str], list[str]]:
    """(each chapter's Markdown, a note on the chapters left out, if any). A chapter that is missing
    or cannot be read is left out and named; when none can be read, the book is skipped with why."""
    from lancelot_cli.indexer.html_markdown import body_markdown

    budget = TextBudget()
    chapters: list[str] = []
    left_out: list[str] = []
    for name in members:
        try:
            data = read_member(book, name)
        except ZipError as exc:
            left_out.append(str(exc))
            continue
        chapters.append(budget.take(_headed(body_markdown(_decode(data)), titles.get(name))))
    if left_out and not chapters:
        raise ZipError(f"none of its {len(members)} chapter(s) can be read: {left_out[0]}")
    return chapters, [_left_out_note(left_out)] if left_out else []


def _left_out_note(reasons: list[str]) -> str:
    """One note for the chapters left out, the first three named: a book of a thousand missing
    chapters is one line, not a thousand."""
    shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
    return f"chapter not indexed: {shown}" if len(reasons) == 1 else f"{len(reasons)} chapters not indexed: {shown}"


def _member(folder: str, href: str | None) -> str:
    """The archive member an href of the package points at (fragment and %-escapes undone)."""
    path = unquote((href or "").split("#", 1)[0])
    return posixpath.normpath(posixpath.join(folder, path))


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def _toc_titles(book: Any, opf: Any, items: dict[str, Any], folder: str) -> dict[str, str]:
    """Chapter member -> its first title in the table of contents ({} when there is none)."""
    nav = next((i for i in items.values() if "nav" in (i.get("properties") or "").split()), None)
    found: dict[str, str] = {}
    if nav is not None:
        name = _member(folder, nav.get("href"))
        tree = read_xml(book, name)
        links = tree.xpath("//x:nav[@epub:type='toc']//x:a[@href]", namespaces=NS) or tree.xpath(
            "//x:nav//x:a[@href]", namespaces=NS
        )
        for link in links:
            found.setdefault(_member(posixpath.dirname(name), link.get("href")), _text(link))
    ncx = items.get(opf.xpath("string(opf:spine/@toc)", namespaces=NS))
    if not found and ncx is not None:
        name = _member(folder, ncx.get("href"))
        for point in read_xml(book, name).iterfind(".//ncx:navPoint", NS):
            label = point.find("ncx:navLabel/ncx:text", NS)
            src = point.xpath("string(ncx:content/@src)", namespaces=NS)
            if src and label is not None and _text(label):
                found.setdefault(_member(posixpath.dirname(name), src), _text(label))
    return {member: title for member, title in found.items() if title}


def _text(element: Any) -> str:
    """An element's text on one line, each entity decoded once. The parser loads no DTD, so a named
    entity the package's DTD would define (``&nbsp;``, ``&eacute;``: a navigation document or
    toc.ncx with an XHTML or NCX DOCTYPE) stays a reference node, which ``itertext`` gave as
    "&eacute;" and ``string()`` left out; ``&lt;`` and ``&amp;lt;`` are the parser's, decoded once
    already (issue 45 item 10)."""
    return " ".join(_joined(element).split())


def _joined(element: Any) -> str:
    from lxml import etree

    parts = [element.text or ""]
    for child in element:
        if isinstance(child, etree._Entity):
            parts.append(html.unescape(child.text or ""))  # "&eacute;" -> "é"; an unknown name stays
        elif isinstance(child.tag, str):
            parts.append(_joined(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _headed(text: str, title: str | None) -> str:
    """The chapter under its table-of-contents title, unless its first heading already says it."""
    if not title:
        return text
    first = text.lstrip().split("\n", 1)[0]
    match = _HEADING.match(first)
    if match and " ".join(match.group(1).lower().split()) == title.lower():
        return text
    return f"# {title}\n\n{text}"


def _drm(book: Any) -> bool:
    """Whether encryption.xml encrypts more than fonts (font obfuscation is not DRM)."""
    tree = read_xml(book, "META-INF/encryption.xml")
    methods = tree.xpath("//*[local-name()='EncryptionMethod']/@Algorithm")
    return any(method not in FONT_OBFUSCATION for method in methods)
