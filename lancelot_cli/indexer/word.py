"""A Word document (.docx) as Markdown: mammoth (the ``docs`` extra; BSD-2-Clause, under 1 MB with
its one dependency) turns it into plain HTML by its styles, and the HTML reader's walk
(``html_markdown``) turns that into Markdown, so headings, lists and tables keep their structure.

What a reader of the document sees is what is indexed: comments are left out (mammoth drops them
unless a style map asks for them), and tracked changes are read as if accepted (insertions kept,
deletions dropped).
"""

from __future__ import annotations

import io

# Word's own title styles are paragraphs to mammoth; as headings they give the document its title.
STYLE_MAP = """
p[style-name='Title'] => h1:fresh
p[style-name='Subtitle'] => h2:fresh
"""


class WordError(Exception):
    """The document cannot be read; the message says why."""


def read_docx(raw: bytes) -> str:
    """The document in ``raw`` as Markdown. Raises ``WordError`` with a reason."""
    import zipfile

    import mammoth

    try:
        result = mammoth.convert_to_html(io.BytesIO(raw), style_map=STYLE_MAP)
    except (zipfile.BadZipFile, KeyError) as exc:  # not a zip, or a zip without word/document.xml
        raise WordError(f"not a Word document (.docx): {exc}") from None
    from lancelot_cli.indexer.html_markdown import body_markdown

    return body_markdown(f"<html><body>{result.value}</body></html>")
