"""PDF, Word, PowerPoint and EPUB files: which reader takes which, and which need the ``docs`` extra.

Each reader gives a title and the document's text, whole (Word) or in parts that chunks never
cross (PDF pages, slides, chapters); what it leaves out and why goes into notes. PDF and Word need
the extra (pypdfium2, mammoth); decks and books are zipped XML, read with the standard library
and lxml. When the extra is missing, the run reads everything else and says, in one line, the
install command that works for this copy (``pipeline.read_changed``).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field

PDF, DOCX, PPTX, EPUB = ".pdf", ".docx", ".pptx", ".epub"
PACKAGED = frozenset({PDF, DOCX, PPTX, EPUB})
EXTRA = "docs"
# The module each reader needs from the docs extra.
NEEDS = {PDF: "pypdfium2", DOCX: "mammoth"}
KINDS = {PDF: "pdf", DOCX: "docx", PPTX: "pptx", EPUB: "epub"}


class FormatError(Exception):
    """The file cannot be read as its kind; the message says why."""


@dataclass(frozen=True)
class Parsed:
    title: str | None
    text: str  # Markdown, the parts joined
    parts: tuple[tuple[int | None, str], ...] = ()  # (page number or None, Markdown) that chunks never cross
    notes: tuple[str, ...] = field(default=())


def available(suffix: str) -> bool:
    """Whether the reader of ``suffix`` can run here (its module of the docs extra is installed)."""
    module = NEEDS.get(suffix)
    if module is None:
        return True
    if module in sys.modules:  # imported already, or blocked (None: what a failed import leaves)
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def extra_hint(suffixes: set[str]) -> str:
    """What to install to read files of ``suffixes`` (the command that works for this copy)."""
    from lancelot_cli.install_hint import install_command

    kinds = " and ".join(sorted(suffixes))
    return f"reading {kinds} files needs the {EXTRA} extra: {install_command(EXTRA)}"


def read_packaged(raw: bytes, suffix: str) -> Parsed:
    """The title and text of a PDF, .docx, .pptx or .epub file. Raises ``FormatError`` with a reason
    (also when the file's text runs past ``bounds.TEXT_CHARS``)."""
    from lancelot_cli.indexer.bounds import Exceeded
    from lancelot_cli.indexer.zipped import ZipError

    try:
        if suffix == PDF:
            return _pdf(raw)
        if suffix == DOCX:
            return _docx(raw)
        if suffix == PPTX:
            from lancelot_cli.indexer.slides import read_pptx

            title, parts = read_pptx(raw)
            notes: list[str] = []
        else:
            from lancelot_cli.indexer.epub import read_epub

            title, parts, notes = read_epub(raw)
    except (ZipError, Exceeded) as exc:
        raise FormatError(str(exc)) from None
    return Parsed(title, "\n\n".join(parts), tuple((None, part) for part in parts), tuple(notes))


def _docx(raw: bytes) -> Parsed:
    from lancelot_cli.indexer.titles import markdown_title
    from lancelot_cli.indexer.word import WordError, read_docx

    try:
        text = read_docx(raw)
    except WordError as exc:
        raise FormatError(str(exc)) from None
    return Parsed(markdown_title(text), text)


def _pdf(raw: bytes) -> Parsed:
    from lancelot_cli.indexer.pdf import NO_TEXT_LAYER, PdfError, read_pdf, scanned_note

    try:
        found = read_pdf(raw)
    except PdfError as exc:
        raise FormatError(str(exc)) from None
    if not found.pages and found.scanned:
        raise FormatError(f"no text on any of its {len(found.scanned)} page(s): {NO_TEXT_LAYER}")
    notes = (scanned_note(found.scanned),) if found.scanned else ()
    return Parsed(found.title, "\n\n".join(text for _, text in found.pages), tuple(found.pages), notes)
