"""Written by `python -m tools.generate` from the indexer's sets (tools/readable.py)."""

READ = (
    "Markdown (.md, .mdx, .mdown, .markdown), text (.txt, .text), reStructuredText (.rst, "
    ".rest), AsciiDoc (.adoc, .asciidoc), HTML (.html, .htm, .xhtml), PDF (.pdf), Word (.docx),"
    " PowerPoint (.pptx) and EPUB (.epub)"
)
