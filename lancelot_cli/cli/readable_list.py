"""Written by `python -m lancelot_cli.cli.generate` from the indexer's sets (readable.py)."""

READ = (
    "Markdown (.md, .mdx, .mdown, .markdown), text (.txt, .text), HTML (.html, .htm, .xhtml), "
    "PDF (.pdf), Word (.docx), PowerPoint (.pptx) and EPUB (.epub)"
)
