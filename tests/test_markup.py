"""reStructuredText and AsciiDoc as Markdown (indexer/markup.py, issue 47): titles and headings,
markup cleaned to its text, Sphinx's navigation dropped, one output line per input line, and
linear time on hostile input (issue 37)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lancelot_cli.indexer.chunking import chunk_lines, chunk_text, heading_paths
from lancelot_cli.indexer.markup import asciidoc_attributes, asciidoc_to_markdown, rst_to_markdown
from lancelot_cli.mdtext import atx_heading
from tests.support.growth import assert_linear

FIXTURES = Path(__file__).parent / "fixtures" / "markup"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _headings(markdown: str) -> list[tuple[int, str]]:
    found, fence = [], False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and (heading := atx_heading(line)):
            found.append(heading)
    return found


# -- reStructuredText ----------------------------------------------------------------------------------


def test_a_sphinx_adr_reads_as_markdown() -> None:
    source = _fixture("0003-store-vectors-in-lancedb.rst")
    title, markdown = rst_to_markdown(source)
    assert title == "3. Store search vectors in lancedb tables"
    assert _headings(markdown) == [
        (1, "3. Store search vectors in lancedb tables"),
        (2, "Context"),
        (2, "Decision"),
        (3, "Sub section"),
        (2, "Consequences"),
    ]
    for markup in (":ref:", ":class:", ":mod:", ":py:func:", ":term:", ".. ", "toctree", "contents::", "|project|"):
        assert markup not in markdown
    assert "0001-record-architecture-decisions" not in markdown  # the toctree's entries
    assert "This is a comment" not in markdown and "_adr-0003" not in markdown
    assert "We index documents with Lancelot and need a store that supports filtering" in markdown
    assert "as well as Schema columns. See LanceDB\nand `lancedb.connect()`. The connect call and vector." in markdown
    assert "Note\nThe old store stays readable until the next major version." in markdown
    assert "New in version 2.1\nThe `--ext rst` flag." in markdown
    assert "Status: Accepted\nDate: 2024-03-18" in markdown  # the field list, as text
    assert "A footnote text." in markdown and "[#f1]" not in markdown
    assert "Good, because X." in markdown


def test_code_blocks_and_literal_blocks_are_fenced() -> None:
    _, markdown = rst_to_markdown(_fixture("0003-store-vectors-in-lancedb.rst"))
    assert '```python\nimport lancedb\n# a comment, not a heading\ndb = lancedb.connect("data/")\n```' in markdown
    assert ":linenos:" not in markdown
    assert "Example:\n```\n$ lancelot index docs/\n```" in markdown
    assert (2, "a comment, not a heading") not in _headings(markdown)


def test_every_line_stays_on_its_line() -> None:
    source = _fixture("0003-store-vectors-in-lancedb.rst")
    _, markdown = rst_to_markdown(source)
    assert markdown.count("\n") == source.count("\n")
    written, read = source.split("\n"), markdown.split("\n")
    for name in ("Context", "Decision", "Consequences"):
        assert read[written.index(name)].endswith(f"# {name}")
    chunks = chunk_text(markdown, 300)
    lines = chunk_lines(markdown, chunks)
    assert all(span is not None for span in lines)
    for chunk, span in zip(chunks, lines, strict=True):  # each chunk starts on the line chunk_lines says
        assert span is not None and read[span[0] - 1] == chunk.split("\n")[0]
    at = next(n for n, line in enumerate(written) if line.startswith("We index documents"))
    assert read[at].startswith("We index documents")
    paths = heading_paths(chunks, "ADR 3")
    assert any(path.endswith("> Context") for path in paths) and paths[-1].endswith("> Consequences")


def test_a_status_section_roles_and_dropped_directives() -> None:
    title, markdown = rst_to_markdown(_fixture("0005-sphinx-status-section.rst"))
    assert title == "Serve search over MCP"
    assert [name for _, name in _headings(markdown)] == [
        "Serve search over MCP",
        "Status",
        "Context",
        "Decision",
        "Consequences",
    ]
    assert "**Superseded** by 0007-streamable-http" in markdown
    assert "The MCP (Model Context Protocol) SDK gives\nmcp.server.MCPServer; see the server notes." in markdown
    assert "Warning: Do not expose the server without a token." in markdown
    assert "See also\n\nThe specification" in markdown
    assert "This paragraph is for the HTML build." in markdown  # `only` is a marker, its content stays
    for dropped in ("adr-footer", "footer.rst", "description", "only::", "raw::", "html"):
        assert dropped not in markdown.replace("HTML build", "")
    assert "Deprecated since version 1.4: Use the HTTP transport." in markdown


def test_heading_levels_follow_the_order_styles_appear_in() -> None:
    source = "=====\nTitle\n=====\n\nA\n-\n\nPart\n----\n\nDeeper\n~~~~~~\n\nAgain\n=====\n\nB\n~~\n"
    title, markdown = rst_to_markdown(source)
    assert title == "Title"
    # "=" under alone is a style of its own, apart from "=" over and under: docutils' rule
    assert _headings(markdown) == [(1, "Title"), (2, "Part"), (3, "Deeper"), (4, "Again"), (3, "B")]
    assert "A\n" in markdown  # underline shorter than a 1-character title is no adornment (2 at least)


def test_an_underline_shorter_than_its_text_is_not_a_title() -> None:
    title, markdown = rst_to_markdown("A paragraph line\n---\n\nText.\n")
    assert title is None and _headings(markdown) == []
    assert "A paragraph line" in markdown


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (":ref:`text <target>`", "text"),
        (":ref:`target-label`", "target-label"),
        (":class:`~a.b.C`", "C"),
        (":doc:`x`", "x"),
        (":py:func:`f`", "f"),
        (":func:`!f`", "f"),
        (":term:`vector store`", "vector store"),
        (":abbr:`LIFO (last-in, first-out)`", "LIFO (last-in, first-out)"),
        ("``literal``", "`literal`"),
        ("`text <https://example.com>`_", "text"),
        ("`anonymous <https://example.com>`__", "anonymous"),
        ("`<https://example.com>`_", "https://example.com"),
        ("`Named`_ and Python_", "Named and Python"),
        ("`text`:sub:", "text"),
        ("``__init__`` and ``x_``", "`__init__` and `x_`"),
        ("`default role`", "`default role`"),
        ("see [1]_ and [#note]_", "see and"),
        ("``:ref:`kept` inside a literal``", "`:ref:`kept` inside a literal`"),
        ("at 10:30:45 sharp", "at 10:30:45 sharp"),
        ("snake_case_name stays", "snake_case_name stays"),
    ],
)
def test_roles_and_links_become_their_text(written: str, read: str) -> None:
    _, markdown = rst_to_markdown(f"Para: {written}.\n")
    assert markdown == f"Para: {read}.\n"


def test_substitutions_targets_and_comments() -> None:
    source = (
        ".. |tool| replace:: Lancelot\n.. |logo| image:: logo.png\n   :alt: logo\n\n"
        "Use |tool| now |logo| and |undefined|.\n\n.. _label:\n\n..\n   comment body\n\n"
        ".. a comment\n   that goes on\n\n..\n\n   A quote after one that is empty.\n\nAfter.\n"
    )
    _, markdown = rst_to_markdown(source)
    assert "Use Lancelot now  and undefined." in markdown
    for gone in ("|", "logo.png", ":alt:", "label", "comment", "goes on"):
        assert gone not in markdown
    assert "   A quote after one that is empty." in markdown  # an empty comment holds nothing
    assert markdown.split("\n")[-2] == "After."


def test_prose_that_looks_like_a_markdown_heading_is_escaped() -> None:
    _, markdown = rst_to_markdown("Intro\n=====\n\n# of users grew.\n")
    assert _headings(markdown) == [(1, "Intro")]
    assert "\\# of users grew." in markdown


def test_a_code_block_left_open_at_the_end_is_closed() -> None:
    _, markdown = rst_to_markdown(".. code-block:: sh\n\n   echo hi")
    assert markdown.split("\n") == ["", "```sh", "echo hi", "```"]


def test_tables_lose_their_borders() -> None:
    source = "+-----+-----+\n| a   | b   |\n+=====+=====+\n\n=====  =====\nx      y\n=====  =====\n"
    _, markdown = rst_to_markdown(source)
    assert "+--" not in markdown and "====" not in markdown
    assert "| a   | b   |" in markdown and "x      y" in markdown


# -- AsciiDoc ------------------------------------------------------------------------------------------


def test_an_asciidoc_page_reads_as_markdown() -> None:
    source = _fixture("0002-use-postgresql.adoc")
    title, markdown = asciidoc_to_markdown(source)
    assert title == "Use PostgreSQL for order data"
    assert _headings(markdown) == [
        (1, "Use PostgreSQL for order data"),
        (2, "Context"),
        (2, "Decision"),
        (3, "Consequences"),
    ]
    assert markdown.count("\n") == source.count("\n")
    for markup in (":toc:", ":status:", "toc::", "include::", "ifdef::", "endif::", "<<", "link:", "kbd:", "[[", "//"):
        assert markup not in markdown
    assert "The Shop team stores orders in files. See the decision and" in markdown  # {product} from its entry
    assert "the PostgreSQL manual or Example site." in markdown
    assert "NOTE: Backups run nightly." in markdown
    assert "Shown on GitHub only." in markdown  # conditional text stays: the condition is unknown here
    assert "```python\nimport psycopg\n# connect\nconn = psycopg.connect()\n```" in markdown
    assert "Warning\n\nMigrations must be reversible." in markdown
    assert "Press Ctrl+C to stop." in markdown


def test_asciidoc_attributes_stay_readable() -> None:
    attributes = asciidoc_attributes(_fixture("0002-use-postgresql.adoc"))
    assert attributes["status"] == "accepted" and attributes["date"] == "2023-11-02"


def test_asciidoc_comment_and_passthrough_blocks_are_dropped() -> None:
    source = "== Part\n\n////\nhidden\n////\n\n++++\n<b>raw</b>\n++++\n\n....\nliteral\n....\n"
    title, markdown = asciidoc_to_markdown(source)
    assert title == "Part"  # no document title: the first section's
    assert "hidden" not in markdown and "raw" not in markdown
    assert "```\nliteral\n```" in markdown
    assert markdown.count("\n") == source.count("\n")


def test_a_listing_holding_a_markdown_fence_gets_a_longer_fence() -> None:
    _, markdown = asciidoc_to_markdown("[source,markdown]\n----\n```sh\nls\n```\n----\n")
    assert "\n````markdown\n```sh\nls\n```\n````\n" in markdown


# -- hostile input: time linear in the input (issue 37) -----------------------------------------------

HOSTILE_LINES = {
    "roles-without-code": lambda n: ":a" * n,
    "unclosed-role": lambda n: ":ref:`" + "a" * n,
    "backticks": lambda n: "`a" * n,
    "literals-unclosed": lambda n: "``a" * n,
    "pipes": lambda n: "|a " * n,
    "pipe-runs": lambda n: "|" + " " * n + "a",
    "named-refs": lambda n: "a-" * n + "_",
    "dots": lambda n: "a." * n + "_",
    "footnote-brackets": lambda n: "[" * n,
    "field-colons": lambda n: ":" + "a\\:" * n,
    "directive-name": lambda n: ".. " + "a:" * n,
    "adornment": lambda n: "=" * n,
    "adoc-xrefs": lambda n: "<<a," * n,
    "adoc-macros": lambda n: "link:a[" * n,
    "adoc-attributes": lambda n: "{a" * n,
    "adoc-heading": lambda n: "== " + "= " * n + "a",
}


@pytest.mark.parametrize("make", HOSTILE_LINES.values(), ids=HOSTILE_LINES.keys())
def test_hostile_lines_take_linear_time(make: object) -> None:
    assert callable(make)
    assert_linear(lambda text: (rst_to_markdown(text), asciidoc_to_markdown(text)), make, 256)


def test_a_64_kb_line_and_a_100k_line_file_complete() -> None:
    line = "".join(f":ref:`t{n} <x>` ``l`` |s| `u <v>`_ <<x,y>> link:u[v] " for n in range(1000))[: 64 * 1024]
    for convert in (rst_to_markdown, asciidoc_to_markdown):
        _, markdown = convert(line)
        assert markdown.count("\n") == 0 and len(markdown) > 1000
    page = "\n".join(
        ["Title", "=====", ""]
        + [f"Section {n}\n---------------\n\n.. note:: n{n}\n\n   Body :doc:`d{n}`.\n" for n in range(15_000)]
    )
    assert page.count("\n") >= 100_000
    title, markdown = rst_to_markdown(page)
    assert title == "Title" and markdown.count("\n") == page.count("\n")
    assert len(re.findall(r"^## Section", markdown, re.M)) == 15_000
    _, markdown = asciidoc_to_markdown(page.replace("---------------", "// x"))
    assert markdown.count("\n") == page.count("\n")
