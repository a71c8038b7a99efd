"""Markdown written for site generators indexes as the built page reads (indexer/site_markdown.py),
a page shipped with its source beside it counts once (indexer/sites.py), and snippets and context
blocks show headings as words (mdtext.plain_headings). Real files, real LanceDB tables."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pytest

from lancelot_cli.engine import Engine
from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.site_markdown import clean
from lancelot_cli.indexer.sources import read_document, scan
from lancelot_cli.mdtext import plain_headings
from lancelot_cli.settings import load
from lancelot_cli.textmatch import snippet

MKDOCS_PAGE = """---
title: Request Files
---

# Request Files { #request-files }

<p align="center"><a href="https://fastapi.tiangolo.com"><img src="logo.png" alt="FastAPI"></a></p>

[![Test](https://example.org/badge.svg)](https://example.org) [![Coverage](https://example.org/c.svg)](https://example.org)

<style>
.md-content h1 { display: none; }
</style>

You can define files to be uploaded by the client using `File`.

{* ../../docs_src/request_files/tutorial001_an_py39.py hl[9] *}

--8<-- "includes/abbreviations.md"

/// tip | Use UploadFile

`UploadFile` uses a spooled file: large files do not fill the memory.

///

!!! note "Technical Details"
    `File` is a class that inherits directly from `Form`.

## Optional File Upload { #optional-file-upload }

```html
<p>code keeps its tags</p>
{* and its braces *}
```
"""

DOCUSAURUS_PAGE = """import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

# Installation

:::tip What You'll Learn

Installing the package.

:::

:::note[Heads up]
Node 18 or later.
:::

<Tabs>
<TabItem value="npm" label="npm">

Run the installer with npm. {{< note >}}Hugo shortcodes vanish{{< /note >}} and {% raw %}Liquid too{% endraw %}.

</TabItem>
</Tabs>
"""


def test_mkdocs_markup_is_gone_and_the_text_stays(tmp_path: Path) -> None:
    (tmp_path / "request-files.md").write_text(MKDOCS_PAGE, encoding="utf-8")
    doc = read_document(tmp_path, "request-files.md")
    assert doc.title == "Request Files"
    for residue in ("{ #", "{*", "--8<--", "../", "<p", "<img", "<style", "display: none", "badge.svg", "///", "!!!"):
        assert residue not in doc.text.split("```html")[0], residue
    for kept in (
        "You can define files to be uploaded",
        "\ndocs_src/request_files/tutorial001_an_py39.py\n",
        "\nincludes/abbreviations.md\n",
        "Use UploadFile",
        "spooled file",
        "Technical Details",
        "`File` is a class that inherits directly from `Form`.",
        "## Optional File Upload\n",
    ):
        assert kept in doc.text, kept
    # the admonition's body is dedented: not an indented code block any more
    assert "\n`File` is a class" in doc.text
    # inside a code fence nothing is touched
    assert "<p>code keeps its tags</p>\n{* and its braces *}" in doc.text


def test_dropped_lines_keep_the_line_numbers() -> None:
    cleaned = clean(MKDOCS_PAGE)
    assert cleaned.count("\n") == MKDOCS_PAGE.count("\n")
    lines = MKDOCS_PAGE.split("\n")
    assert (
        cleaned.split("\n")[lines.index("## Optional File Upload { #optional-file-upload }")]
        == "## Optional File Upload"
    )


def test_docusaurus_imports_jsx_and_shortcodes_are_dropped(tmp_path: Path) -> None:
    (tmp_path / "install.mdx").write_text(DOCUSAURUS_PAGE, encoding="utf-8")
    doc = read_document(tmp_path, "install.mdx")
    assert doc.title == "Installation"
    assert "import" not in doc.text and "<Tab" not in doc.text and "</Tab" not in doc.text
    assert "{{" not in doc.text and "{%" not in doc.text
    assert "Run the installer with npm. Hugo shortcodes vanish and Liquid too." in doc.text
    assert ":::" not in doc.text
    assert "What You'll Learn\n\nInstalling the package." in doc.text and "Heads up\nNode 18 or later." in doc.text


def test_text_that_only_looks_like_markup_is_kept() -> None:
    prose = (
        "Use List<String> for a list; a set is {a, b}; x < y > z; 5 {items} left.\n"
        "Write `<div>` or `{{ page.title }}` or `{* path *}` in code spans.\n"
        'LaTeX stays: $$ {\\text{Pa}}_{{\\text{O}_{2}}} $$ and so does JSON {"a": {"b": 1}}.\n'
    )
    assert clean(prose) == prose


INLINE_HTML_PAGE = """# Middleware

**FastAPI** implements the <abbr title="Asynchronous Server Gateway Interface">ASGI</abbr> specification:
<dfn title="also known as: endpoints">path</dfn> operations, <abbr title="Object-Relational Mapper">ORM</abbr>s,
<kbd>Ctrl</kbd>+<kbd>C</kbd> and **<strong>JWT</strong>** tokens.

<details><summary>Or use <code>async def</code>...</summary>

| Field | Notes |
| `contact` | <table><tr><td><code>name</code></td><td><code>str</code></td></tr></table> |

</details>

```html
<div class="termy"><abbr title="kept">ASGI</abbr></div>
```

Write `<div>` in a code span, and List<String> in prose.
"""


def test_inline_html_is_read_as_its_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 item 5: closing tags after a word ("ASGI</abbr>") stayed in the text, snippets and
    query context; a table cell's tags leave its words apart; code keeps its tags."""
    cleaned = clean(INLINE_HTML_PAGE)
    assert cleaned.count("\n") == INLINE_HTML_PAGE.count("\n")
    prose = cleaned.split("```html")[0]
    for tag in ("</abbr>", "</dfn>", "</kbd>", "</code>", "</strong>", "</summary>", "<details>", "</td>"):
        assert tag not in prose, tag
    for kept in (
        "implements the ASGI specification:",
        "path operations, ORMs,",
        "Ctrl+C and **JWT** tokens.",
        "Or use async def...",
        "| `contact` | name str |",
        '```html\n<div class="termy"><abbr title="kept">ASGI</abbr></div>\n```',
        "Write `<div>` in a code span, and List<String> in prose.",
    ):
        assert kept in cleaned, kept
    src = tmp_path / "src"
    src.mkdir()
    (src / "middleware.md").write_text(INLINE_HTML_PAGE, encoding="utf-8")
    db = tmp_path / "db"
    index_folder(src, str(db), chunk_size=2000)
    monkeypatch.setenv("LANCEDB_PATH", str(db))
    engine = Engine(load())
    hit = engine.search("ASGI specification", search_type="text").hits[0]
    assert "implements the ASGI specification" in hit.snippet, hit.snippet
    context = engine.query("async def ORM").context
    assert "Or use async def..." in context and "</code>" not in context.split("```html")[0]


def test_a_page_with_its_source_beside_it_counts_once(tmp_path: Path) -> None:
    """An AsciiDoc-style build: every page's source next to it, and include fragments in a folder below."""
    for name in ("git-add", "git-commit"):
        (tmp_path / f"{name}.html").write_text(
            f"<html><head><title>{name}</title></head><body><h1>{name}</h1>"
            f"<p>The {name} command records changes.</p></body></html>"
        )
        (tmp_path / f"{name}.txt").write_text(f"{name}(1)\n=====\n\nThe {name} command records changes.\n")
    (tmp_path / "cmd-list.txt").write_text("A fragment that git-add.txt includes.\n")
    (tmp_path / "includes").mkdir()
    (tmp_path / "includes" / "options.txt").write_text("--verbose:: Be verbose.\n")
    found = scan(tmp_path)
    assert found.paths == ["git-add.html", "git-commit.html"]
    assert found.site_note() == (
        "rendered pages with their sources found: left out 2 source copies and "
        "2 source fragments (--no-site-detection to index them)"
    )
    assert scan(tmp_path, site_detection=False).paths == sorted(
        ["cmd-list.txt", "git-add.html", "git-add.txt", "git-commit.html", "git-commit.txt", "includes/options.txt"]
    )


def test_a_folder_without_pairs_keeps_its_text_files(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html><body><p>Home</p></body></html>")
    (tmp_path / "README.txt").write_text("Read me.\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("Buy milk.\n")
    assert scan(tmp_path).paths == ["README.txt", "index.html", "notes/todo.txt"]


def test_headings_show_as_words_in_snippets_and_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        plain_headings("# Refund policy\n\nWarranty\n========\n\n```sh\n# a comment\n```")
        == "Refund policy\n\nWarranty\n\n```sh\n# a comment\n```"
    )
    assert (
        snippet("# Refund policy\n\nRefunds are paid in 14 days.", ["refund"])
        == "Refund policy Refunds are paid in 14 days."
    )
    src = tmp_path / "src"
    src.mkdir()
    (src / "refunds.md").write_text(
        "# Refund policy\n\nRefunds are paid in 14 days.\n\nWarranty\n========\n\nTwo years on every kayak.\n",
        encoding="utf-8",
    )
    db = tmp_path / "db"
    index_folder(src, str(db), chunk_size=400)
    stored = lancedb.connect(str(db)).open_table("documents").to_arrow().column("text").to_pylist()
    assert any(text.startswith("# Refund policy") for text in stored)  # the table keeps the Markdown
    monkeypatch.setenv("LANCEDB_PATH", str(db))
    engine = Engine(load())
    hit = engine.search("refund warranty", search_type="text").hits[0]
    assert "#" not in hit.snippet and "===" not in hit.snippet
    context = engine.query("refund warranty").context
    assert "# Refund policy" not in context and "========" not in context
    assert "Refund policy\n" in context and "Two years on every kayak." in context


def _sphinx_build(root: Path, index_js: str) -> None:
    (root / "_static").mkdir(parents=True)
    (root / "searchindex.js").write_text(index_js)
    for name in ("index", "usage", "whole-book"):
        (root / f"{name}.html").write_text(
            f"<html><head><title>{name}</title></head><body><div role='main'>"
            f"<h1>{name}</h1><p>The widget spins on {name}.</p></div></body></html>"
        )


def test_a_sphinx_page_its_search_index_does_not_list_is_left_out(tmp_path: Path) -> None:
    """Debian's developers-reference ships the whole book on one page beside its chapters; the
    page is no page of the Sphinx project (its searchindex.js lists the chapters), and it would
    come first for every question."""
    _sphinx_build(tmp_path, 'Search.setIndex({"docnames": ["index", "usage"], "filenames": ["index.rst"]})')
    found = scan(tmp_path)
    assert found.paths == ["index.html", "usage.html"]
    assert "1 page its search index does not list" in (found.site_note() or "")


@pytest.mark.parametrize("index_js", ["garbage", 'Search.setIndex({"docnames": []})', ""])
def test_an_unreadable_sphinx_search_index_leaves_every_page_in(tmp_path: Path, index_js: str) -> None:
    _sphinx_build(tmp_path, index_js)
    assert scan(tmp_path).paths == ["index.html", "usage.html", "whole-book.html"]
