"""Turn a document found under the folder (indexer/scanning.py) into a title and plain text.

Markdown and text are read as they are (Markdown's YAML front matter split off into ``meta``, a
site generator's markup dropped: ``site_markdown``);
HTML pages with a named content container are walked into Markdown (``html_markdown``), others
go through trafilatura (main content, as Markdown), with lxml as the fallback for pages
trafilatura finds nothing in; other extensions asked for with ``--ext`` are source code, read as
lines; PDF, Word, PowerPoint and EPUB files go to their readers (``formats``). Nothing outside
the folder is read: a link is followed only when it points inside, checked again as the file is
opened.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import frontmatter, site_markdown
from lancelot_cli.indexer.formats import KINDS, PACKAGED, FormatError, read_packaged
from lancelot_cli.indexer.scanning import ASCIIDOC, HTML, MARKDOWN, OUTSIDE_LINK, RST, TEXT, within
from lancelot_cli.indexer.scanning import scan as scan  # (re-exported: where callers have long found them)
from lancelot_cli.indexer.scanning import walk as walk
from lancelot_cli.indexer.titles import bounded, clean_title, markdown_title
from lancelot_cli.storage.schema import KIND

MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped (a log, a dump): --max-file-size to change


@dataclass(frozen=True)
class Document:
    path: str  # relative, forward slashes
    title: str
    text: str
    digest: str = ""  # sha256 of the file's bytes (first 16 hex digits)
    kind: str = "text"  # "markdown", "text", "rst", "asciidoc", "html", "code", or "pdf", "docx", "pptx", "epub"
    meta: dict[str, Any] = field(default_factory=dict)  # front matter, as table columns
    notes: tuple[str, ...] = ()  # what the reader should know: e.g. a page indexed only in part
    # (page number or None, Markdown) parts that chunks never cross: PDF pages, slides, chapters
    parts: tuple[tuple[int | None, str], ...] = ()
    first_line: int = 1  # the file's line that ``text`` starts on (after Markdown's front matter)


class SourceError(Exception):
    """A file that cannot be read or parsed; the message says why."""


class NothingToIndex(IndexingError):
    """A first run found no document it could index (the message says what it found instead);
    `lancelot index --watch` reports it and keeps watching."""


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)  # UTF-32 LE starts with UTF-16 LE's mark: tested first


def _decode(raw: bytes, rel: str) -> str:
    for bom, codec in _BOMS:  # UTF-16/32 text (Windows editors) is text, NUL bytes and all
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                break
    if b"\x00" in raw[:8192]:
        raise SourceError("looks like a binary file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


# libxml2 stops building the tree at this depth (its default limit) and drops what lies deeper.
HTML_MAX_DEPTH = 256
TOO_DEEP = f"the page nests elements more than {HTML_MAX_DEPTH} deep and the HTML parser drops the text below that"


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page."""
    title, text, _ = _html_to_text(html)
    return title, text


def _html_to_text(html: str) -> tuple[str | None, str, bool]:
    """(title, main text, True when the page was nested too deeply to be read whole)."""
    from lxml import html as lxml_html

    from lancelot_cli.indexer.html import clean_markdown, heading_texts, parse, prepare, release_memory
    from lancelot_cli.indexer.html_markdown import to_markdown

    html, tree, truncated = parse(html)
    title = None
    headings = None
    if tree is not None:
        prepare(tree)  # permalink anchors out, code blocks marked as code
        headings = heading_texts(tree)
        for xpath in ("//title", "//h1"):
            nodes = tree.xpath(xpath)
            if nodes:
                candidate = clean_title(nodes[0].text_content())
                if candidate:
                    title = candidate
                    break
    # A page whose content sits in a known container is walked (fast, keeps every heading); others
    # go to trafilatura, handed the parsed tree as it is (one parse per page, not two).
    text = to_markdown(tree) if tree is not None else None
    if not text or not text.strip():
        import trafilatura

        text = (
            trafilatura.extract(
                tree if tree is not None else html, output_format="markdown", include_tables=True, favor_recall=True
            )
            or ""
        )
    text = clean_markdown(text, headings)
    release_memory()
    # Permalink marks left on the heading lines of the extracted Markdown ("# Glossary#"): drop them.
    text = "\n".join(clean_title(line, markdown=True) if line.startswith("#") else line for line in text.split("\n"))
    if not text.strip() and tree is not None:
        tree = lxml_html.fromstring(html)  # trafilatura may have pruned the tree it was given
        for bad in tree.xpath("//script|//style|//noscript|//template"):
            bad.drop_tree()
        text = "\n\n".join(" ".join(p.split()) for p in tree.text_content().split("\n\n") if p.strip())
    return title, text, truncated


def content_digest(raw: bytes) -> str:
    """The digest of a file's bytes the table records (``file_hash``): sha256, 16 hex digits."""
    return hashlib.sha256(raw).hexdigest()[:16]


def read_document(root: Path, rel: str, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """Read one file into a ``Document``. Raises ``SourceError`` with a reason."""
    path = root / rel
    resolved = os.path.realpath(path)  # read the target checked, not a link swapped in meanwhile
    if not within(os.path.realpath(root), resolved):  # checked again here: the link may have changed since the walk
        raise SourceError(OUTSIDE_LINK)
    real = Path(resolved)
    try:
        info = real.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block the run
            raise SourceError("not a regular file")
        if info.st_size > max_bytes:
            raise SourceError(f"larger than {max_bytes:,} bytes (--max-file-size to change)")
        raw = real.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    digest = content_digest(raw)
    suffix = path.suffix.lower()
    if suffix in PACKAGED:
        return _packaged(rel, raw, suffix, digest)
    text = _decode(raw, rel)
    meta: dict[str, Any] = {}
    notes: list[str] = []
    title: str | None
    first_line = 1
    if suffix in HTML:
        kind = "html"
        try:
            title, text, truncated = _html_to_text(text)
        except Exception as exc:  # noqa: BLE001 - a page that breaks the parser is skipped, the run goes on
            raise SourceError(f"cannot parse HTML: {type(exc).__name__}: {exc}") from None
        if truncated:  # never index a page as its title alone without saying so
            if text.strip() in ("", title):
                raise SourceError(f"no text found: {TOO_DEEP}; flatten the page or convert it to Markdown")
            notes.append(f"indexed in part: {TOO_DEEP}")
    elif suffix in MARKDOWN or suffix in TEXT:  # text files may use Markdown headings too
        kind = "markdown" if suffix in MARKDOWN else "text"
        raw_markdown = text
        if kind == "markdown":
            lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n")
            try:
                meta, text = frontmatter.split(text)
            except frontmatter.FrontMatterError as exc:
                raise SourceError(f"{exc}; fix it or remove the block") from None
            text = site_markdown.clean(text)
            first_line += lines - text.count("\n")
        given = next((v for k, v in meta.items() if str(k).strip().lower() == "title"), None)
        title = clean_title(str(given)) if isinstance(given, (str, int, float)) and str(given).strip() else None
        title = title or markdown_title(text)
        if kind == "markdown":
            from lancelot_cli.indexer.decisions import decision_meta

            meta = {**decision_meta(rel, title, raw_markdown), **meta}  # front matter wins
    elif suffix in RST or suffix in ASCIIDOC:  # a project's docs and decisions (issue 47): line for line
        from lancelot_cli.indexer import decisions, markup

        kind = "rst" if suffix in RST else "asciidoc"
        raw_text = text
        title, text = markup.rst_to_markdown(text) if kind == "rst" else markup.asciidoc_to_markdown(text)
        title = clean_title(title or "") or None
        meta = decisions.decision_meta(rel, title, raw_text)  # kind: adr, status, date for a decision record
    else:
        from lancelot_cli.indexer.code import code_role

        kind, title = "code", rel
        meta = {KIND: code_role(rel)}  # a column: `--filter kind=code` leaves tests and migrations out
    if not text.strip():
        raise SourceError("no text found")
    title = bounded(title or path.name)  # it goes on every row
    return Document(rel, title, text, digest, kind, frontmatter.columns(meta), tuple(notes), first_line=first_line)


def _packaged(rel: str, raw: bytes, suffix: str, digest: str) -> Document:
    """A PDF, Word, PowerPoint or EPUB file (indexer/formats.py)."""
    try:
        found = read_packaged(raw, suffix)
    except FormatError as exc:
        raise SourceError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - a file that breaks its parser is skipped (a missing module: reading.py)
        raise SourceError(f"cannot parse {suffix[1:].upper()}: {type(exc).__name__}: {exc}") from None
    if not found.text.strip():
        raise SourceError("no text found")
    title = bounded(clean_title(found.title or "") or Path(rel).name)  # a PDF's first bookmark is rarely its title
    return Document(rel, title, found.text, digest, KINDS[suffix], notes=found.notes, parts=found.parts)


def nothing_readable(root: Path, skipped: list[tuple[str, str]], extra_hint: str | None = None) -> str:
    """Why a first run whose documents were all skipped wrote nothing: one line."""
    if extra_hint and not skipped:
        return f"nothing indexed from {root}: {extra_hint}"
    shown = "; ".join(f"{rel}: {reason}" for rel, reason in skipped[:3]) + ("; ..." if len(skipped) > 3 else "")
    also = f"; {extra_hint}" if extra_hint else ""
    return f"nothing indexed from {root}: none of its {len(skipped)} document(s) could be read ({shown}){also}"
