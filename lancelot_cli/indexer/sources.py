"""Find the documents under a folder and turn each into a title and plain text.

Markdown and text are read as they are; HTML goes through trafilatura (main content, as
Markdown), with lxml as the fallback for pages trafilatura finds nothing in.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MARKDOWN = {".md", ".markdown", ".mdown"}
TEXT = {".txt", ".text"}
HTML = {".html", ".htm", ".xhtml"}
EXTENSIONS = MARKDOWN | TEXT | HTML

# CommonMark: closing #s count only after white space ("# Learning C#" keeps its "#").
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.M)
_SETEXT = re.compile(r"^(\S.*)\n(=+|-+)\s*$", re.M)
# Permalink marks that documentation generators append to headings (Sphinx "¶", MkDocs "#", "🔗").
_PERMALINK = re.compile(r"[\s¶§#🔗\u200b]+$")
# In Markdown a trailing "#" is part of the title unless white space precedes it.
_PERMALINK_MD = re.compile(r"(?:[\s¶§🔗\u200b]|(?<=\s)#)+$")


@dataclass(frozen=True)
class Document:
    path: str  # relative, forward slashes
    title: str
    text: str
    digest: str = ""  # sha256 of the file's bytes (first 16 hex digits)


class SourceError(Exception):
    """A file that cannot be read or parsed; the message says why."""


def walk(root: Path) -> list[str]:
    """Relative paths (forward slashes, sorted) of the documents under ``root``.

    Names starting with a dot are skipped, folders and files alike.
    """
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith(".") or Path(name).suffix.lower() not in EXTENSIONS:
                continue
            found.append(Path(folder, name).relative_to(root).as_posix())
    return sorted(found)


def clean_title(title: str, markdown: bool = False) -> str:
    title = " ".join(title.split())
    return (_PERMALINK_MD if markdown else _PERMALINK).sub("", title).strip()


def markdown_title(text: str) -> str | None:
    """The first Markdown heading (ATX `#` or setext underline), outside front matter."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    candidates = [m for m in (_HEADING.search(body), _SETEXT.search(body)) if m]
    if not candidates:
        return None
    first = min(candidates, key=lambda m: m.start())
    return clean_title(first.group(1), markdown=True) or None


def _decode(raw: bytes, rel: str) -> str:
    if b"\x00" in raw[:8192]:
        raise SourceError("looks like a binary file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page."""
    import trafilatura
    from lxml import html as lxml_html

    title = None
    tree = None
    try:
        tree = lxml_html.fromstring(html)
    except Exception:  # lxml rejects some broken pages outright; trafilatura may still cope
        tree = None
    if tree is not None:
        for xpath in ("//title", "//h1"):
            nodes = tree.xpath(xpath)
            if nodes:
                candidate = clean_title(nodes[0].text_content())
                if candidate:
                    title = candidate
                    break
    text = trafilatura.extract(html, output_format="markdown", include_tables=True, favor_recall=True) or ""
    if not text.strip() and tree is not None:
        for bad in tree.xpath("//script|//style|//noscript|//template"):
            bad.drop_tree()
        text = "\n\n".join(" ".join(p.split()) for p in tree.text_content().split("\n\n") if p.strip())
    return title, text


def read_document(root: Path, rel: str) -> Document:
    """Read one file into a ``Document``. Raises ``SourceError`` with a reason."""
    path = root / rel
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or device would block the run
            raise SourceError("not a regular file")
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    text = _decode(raw, rel)
    suffix = path.suffix.lower()
    title: str | None
    if suffix in HTML:
        try:
            title, text = html_to_text(text)
        except Exception as exc:  # a page that breaks the parser is skipped, the run goes on
            raise SourceError(f"cannot parse HTML: {type(exc).__name__}: {exc}") from None
    else:  # Markdown, and text files that use Markdown headings
        title = markdown_title(text)
    if not text.strip():
        raise SourceError("no text found")
    return Document(rel, title or path.name, text, hashlib.sha256(raw).hexdigest()[:16])
