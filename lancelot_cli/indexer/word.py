"""A Word document (.docx) as Markdown: mammoth (the ``docs`` extra; BSD-2-Clause, under 1 MB with
its one dependency) turns it into plain HTML by its styles, and the HTML reader's walk
(``html_markdown``) turns that into Markdown, so headings, lists and tables keep their structure.

What a reader of the document sees is what is indexed: comments are left out (mammoth drops them
unless a style map asks for them), and tracked changes are read as if accepted (insertions kept,
deletions dropped).

Bounded as the other zipped formats are (issue 37 item 4): mammoth reads a part whole, so a part
that would inflate past ``zipped.MAX_MEMBER_BYTES`` is refused before mammoth opens the file; images
are never read (the text is what is indexed, and mammoth's default turned every reference to an
image into a base64 copy: 4.3 GB for one image drawn 64 times); files linked from outside the
document are never opened (mammoth 1.11 made that its default; it is asked for by name too).
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import zipfile
from typing import Any

from lancelot_cli.indexer.bounds import TextBudget
from lancelot_cli.indexer.zipped import MAX_MEMBER_BYTES, ZipError, open_zip, relations

# Word's own title styles are paragraphs to mammoth; as headings they give the document its title.
STYLE_MAP = """
p[style-name='Title'] => h1:fresh
p[style-name='Subtitle'] => h2:fresh
"""


class WordError(Exception):
    """The document cannot be read; the message says why."""


def read_docx(raw: bytes) -> str:
    """The document in ``raw`` as Markdown. Raises ``WordError`` with a reason."""
    import mammoth

    _check_parts(raw)
    try:
        result = mammoth.convert_to_html(
            io.BytesIO(raw),
            style_map=STYLE_MAP,
            convert_image=mammoth.images.img_element(_no_image),
            external_file_access=False,
        )
    except (zipfile.BadZipFile, KeyError) as exc:  # not a zip, or a zip without word/document.xml
        raise WordError(f"not a Word document (.docx): {exc}") from None
    from lancelot_cli.indexer.html_markdown import body_markdown

    return TextBudget().take(body_markdown(f"<html><body>{result.value}</body></html>"))


def _no_image(image: Any) -> dict[str, str]:
    """An image's attributes without its bytes (its alt text is kept by mammoth; the walk drops both)."""
    return {}


def _check_parts(raw: bytes) -> None:
    """Refuse a document with a part, other than an image, that inflates past the member bound:
    mammoth would read it whole, outside the bound the other zipped formats keep."""
    try:
        with open_zip(raw, "a Word document (.docx)") as archive:
            images = _images(archive)
            for info in archive.infolist():
                if info.file_size > MAX_MEMBER_BYTES and info.filename not in images:
                    raise WordError(
                        f"{info.filename} inflates to {info.file_size:,} bytes (more than {MAX_MEMBER_BYTES:,})"
                    )
    except ZipError as exc:
        raise WordError(str(exc)) from None


def _images(archive: zipfile.ZipFile) -> set[str]:
    """The members that parts of the document name as images (mammoth, as called here, never reads them)."""
    found: set[str] = set()
    for name in archive.namelist():
        folder, base = posixpath.split(name)
        if posixpath.basename(folder) == "_rels" and base.endswith(".rels"):
            part = posixpath.join(posixpath.dirname(folder), base[: -len(".rels")])
            with contextlib.suppress(ZipError):  # a part mammoth may never read: its images stay unknown
                targets = relations(archive, part).values()
                found.update(member for member, kind in targets if kind.endswith("/image"))
    return found
