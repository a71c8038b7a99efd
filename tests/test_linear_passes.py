"""Every pass that runs over untrusted text before or instead of a parser is linear in its input
(issue 37: one crafted 64 KB request held `serve --http`'s event loop for 10.7 s; one 4 KB Markdown
line held `lancelot index` for 52 s). Each case doubles a hostile input until a call takes 30 ms
and fails when the doubling more than triples the time (``tests/support/growth.py``): the HTTP
guard's checks, then each module of the indexer's text cleaning, then a whole index run."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.indexer import site_markdown
from lancelot_cli.indexer.chunking import heading_paths
from lancelot_cli.indexer.html import MIN_PAGES, clean_markdown, common_suffix, parse, quick_title
from lancelot_cli.indexer.html_markdown import to_markdown
from lancelot_cli.indexer.rows import rows_for
from lancelot_cli.indexer.sites import _sphinx_pages
from lancelot_cli.indexer.sources import read_document
from lancelot_cli.indexer.titles import MAX_TITLE_CHARS, clean_title, markdown_title
from lancelot_cli.mdtext import next_fence, plain_headings
from lancelot_cli.server.transports.http import _depth, json_problem
from tests.conftest import lancelot_command, subprocess_env
from tests.support import hostile_pages
from tests.support.growth import assert_linear

HOSTILE_RUN_SECONDS = 120  # the whole run over tests/support/hostile_pages.py (about 10 s here)

# -- the HTTP guard's checks before the JSON parser (server/transports/http.py, shared by the Lambda handler) --

BODIES: dict[str, Callable[[int], bytes]] = {
    "escaped-quotes-unterminated": lambda n: b'"' + b'\\"' * n,
    "escaped-quotes-in-object": lambda n: b'{"a":"' + b'\\"' * n,
    "backslashes-unterminated": lambda n: b'"' + b"\\\\" * n,
    "quotes-and-brackets": lambda n: b'["' + b'\\"[' * n,
    "many-short-strings": lambda n: b"[" + b'"",' * n,
    "brackets": lambda n: b"[" * n,
}


@pytest.mark.parametrize("make", BODIES.values(), ids=BODIES.keys())
def test_the_body_check_is_linear(make: Callable[[int], bytes]) -> None:
    assert_linear(json_problem, make)


@pytest.mark.parametrize(
    ("text", "deepest"),
    [
        ('{"a": "\\"{[", "b": [1]}', 2),
        ('{"a": "\\\\", "b": [[1]]}', 3),
        ('["]]]]", ["[[["]]', 2),
        ('"' + '\\"' * 10, 0),  # unterminated: no bracket outside a string
        ('"a\nb"[[', 2),  # a raw newline does not end the string scan early
    ],
)
def test_depth_counts_only_brackets_outside_strings(text: str, deepest: int) -> None:
    assert _depth(text) == deepest


# -- the indexer's text cleaning (issue 37 item 3) ------------------------------------------------------
# One case per pattern that was quadratic (or cubic) in a crafted line or page, with that input.
# Before: x4 to x8 per doubling; one 4 KB heading line took 52 s, 128 KB of "<!--" 17.8 s.


def _cases(shapes: dict[str, tuple[Callable[[int], object], int]]) -> Any:
    return pytest.mark.parametrize(("make", "start"), shapes.values(), ids=shapes.keys())


def _written(path: Path, text: Callable[[int], str]) -> Callable[[int], str]:
    """Inputs that are a file's path, for passes that read a file: ``text(n)`` written at ``path``."""

    def make(n: int) -> str:
        path.write_text(text(n), encoding="utf-8")
        return str(path)

    return make


# -- indexer/site_markdown.py: a Markdown page of a site generator, as its built page reads

SITE_MARKDOWN: dict[str, tuple[Callable[[int], object], int]] = {
    "heading-attribute-list": (lambda n: "# " + " " * n + "<", 64),  # cubic: 52 s for 4 KB
    "unclosed-comments": (lambda n: "<!--" * n, 256),
    "unclosed-scripts": (lambda n: "<script>" * n, 256),
    "unended-style-tags": (lambda n: "<style" * n, 256),
    "include-without-close": (lambda n: "{* " + "a" * n, 256),
    "block-title-blanks": (lambda n: "/// note | x" + " " * n + "y", 256),
    "colons-title-blanks": (lambda n: ":::tip x" + " " * n + "y", 256),
    "badge-openings": (lambda n: "[![" * n, 256),
    "closing-tags-after-words": (lambda n: "a</abbr>" * n, 256),
    "unended-closing-tags": (lambda n: "a</abbr " * n, 256),
    "open-brackets": (lambda n: "<" * n, 256),
    "cell-tags": (lambda n: "<td>a</td>" * n, 256),
    "tag-attribute-blanks": (lambda n: "x</td" + " " * n, 256),
}


@_cases(SITE_MARKDOWN)
def test_site_markdown_cleaning_is_linear(make: Callable[[int], str], start: int) -> None:
    assert_linear(site_markdown.clean, make, start)


# -- lancelot_cli/mdtext.py: fences and headings, on every line of every document (and of search hits)

MDTEXT: dict[str, tuple[Callable[[int], object], int]] = {
    "fence-backticks-mid-line": (lambda n: "a" + "`" * n + "x", 256),  # 29.7 -> 115 s for 64 -> 128 KB
    "heading-blanks": (lambda n: "# a" + " " * n + "b", 256),
}


@_cases(MDTEXT)
def test_fences_and_headings_are_linear(make: Callable[[int], str], start: int) -> None:
    assert_linear(lambda text: (next_fence(text, None), plain_headings(text)), make, start)


# -- indexer/titles.py and the title markup of indexer/html.py: titles and heading lines

TITLES: dict[str, tuple[Callable[[int], object], int]] = {
    "first-heading-blanks": (lambda n: "# a" + " " * n + "b", 256),
    "permalink-marks": (lambda n: "a" + "#" * n + "b", 256),
    "permalink-marks-markdown": (lambda n: "# a" + " #" * n + "b", 256),
    "role-names-without-code": (lambda n: "# " + ":a" * n, 256),
    "emphasis-never-closed": (lambda n: "# " + "(*a" * n, 256),
    "strong-closed-as-emphasis": (lambda n: "# " + "(**a*)" * n, 256),
    "underscores-never-closed": (lambda n: "# " + "(__a" * n, 256),
}


@_cases(TITLES)
def test_titles_are_linear(make: Callable[[int], str], start: int) -> None:
    assert_linear(lambda text: (markdown_title(text), clean_title(text), clean_title(text, markdown=True)), make, start)


# -- indexer/html.py: the Markdown extracted from a page, its <title>, the titles' common suffix

HTML_TEXT: dict[str, tuple[Callable[[int], object], int]] = {
    "table-rule-then-text": (lambda n: "| " + "-" * n + "x", 256),  # 18.5 -> 77.6 s for 64 -> 128 KB
    "blanks-before-text": (lambda n: " " * n + "x", 256),
    "code-span-long-opening": (lambda n: "a" + "`" * n + "a" * n + "`", 64),
}


@_cases(HTML_TEXT)
def test_extracted_markdown_cleaning_is_linear(make: Callable[[int], str], start: int) -> None:
    assert_linear(clean_markdown, make, start)


def test_reading_an_unended_xml_declaration_is_linear() -> None:
    """libxml2 is quadratic in the blanks of an XML declaration without its "?>" (3.5 s for 64 KB)."""
    assert_linear(parse, lambda n: "<?xml" + " " * n, 256)


def test_the_title_of_a_page_is_found_in_linear_time(tmp_path: Path) -> None:
    assert_linear(quick_title, _written(tmp_path / "page.html", lambda n: "<title>" * n), 64)


def test_the_common_title_suffix_is_found_in_linear_time() -> None:
    assert_linear(lambda title: common_suffix([title] * MIN_PAGES), lambda n: " -" * n, 256)


# -- indexer/html_markdown.py: the walk of a page's content

HTML_WALK: dict[str, tuple[Callable[[int], object], int]] = {
    "backticks-in-pre": (lambda n: _tree("<main><pre>" + "a" * n + "`" * n + "</pre></main>"), 256),
    "many-articles": (lambda n: _tree("<article>x</article>" * n), 16),  # 20,000 took 8.8 s
}


def _tree(body: str) -> Any:
    from lxml import html as lxml_html

    return lxml_html.fromstring(f"<html><body>{body}</body></html>")


@_cases(HTML_WALK)
def test_the_page_walk_is_linear(make: Callable[[int], Any], start: int) -> None:
    assert_linear(to_markdown, make, start)


def test_a_nested_table_is_read_once() -> None:
    """Each table listed the rows of every table inside it too, and those theirs: 2^depth readings
    of the innermost cell (11 levels took 7 ms, 22 took 13 s; libxml2 keeps 256)."""
    text = to_markdown(_tree("<main>" + "<table><tr><td>" * 16 + "innermost</main>")) or ""
    assert text.count("innermost") == 1, text[:200]


# -- indexer/sites.py: the page list of a Sphinx site's searchindex.js (its first 1 MB)


def test_the_sphinx_page_list_is_read_in_linear_time(tmp_path: Path) -> None:
    assert_linear(_sphinx_pages, _written(tmp_path / "searchindex.js", lambda n: "docnames:[" * n), 256)


# -- indexer/chunking.py: the heading path of each chunk


def test_heading_paths_are_linear() -> None:
    assert_linear(lambda text: heading_paths([text], "Title"), lambda n: "x\n# a" + " " * n + "b", 256)


# -- indexer/sources.py and rows.py: the title goes on every row of its document


def test_rows_grow_linearly_with_a_long_first_heading(tmp_path: Path) -> None:
    """A first heading as long as the page was stored on each of its rows (and began each heading
    path): the rows grew with the square of the page (5 s for one 256 KB page)."""
    page = _written(tmp_path / "page.md", lambda n: "# " + "a " * n + "\n\n" + "word " * n)
    assert_linear(lambda path: rows_for(read_document(tmp_path, Path(path).name)), page, 1024)
    assert len(read_document(tmp_path, "page.md").title) <= MAX_TITLE_CHARS


# -- a whole run over such documents


@pytest.mark.slow
def test_index_reads_hostile_documents_in_time_and_the_rest(tmp_path: Path) -> None:
    """`lancelot index` over one 256 KB document per pass above, beside an ordinary one: all are
    indexed, in seconds (before, the first of them alone never finished)."""
    import lancedb

    src = tmp_path / "src"
    names = hostile_pages.write(src)
    (src / "fine.md").write_text("# Fine\n\nAn ordinary page about refunds.\n", encoding="utf-8")
    done = subprocess.run(
        [*lancelot_command(), "index", str(src), str(tmp_path / "db"), "--no-embed"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=HOSTILE_RUN_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    rows = lancedb.connect(tmp_path / "db").open_table("documents").to_arrow().to_pylist()
    assert {row["path"] for row in rows} == {*names, "fine.md"}, done.stderr
