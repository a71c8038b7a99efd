"""Doc-site builds (issue 12): --exclude and .lancelotignore (saved with the table), generated-site
detection (Sphinx, MkDocs), title suffixes and markup, clean chunk text (no permalink marks,
escapes or table residue), code comments that are not headings, and --watch on an empty folder.
Real files, real LanceDB in tmp folders, the real CLI."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import lancedb
import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.chunking import chunk_text, heading_paths
from lancelot_cli.indexer.html import common_suffix, strip_title_markup
from lancelot_cli.indexer.sources import markdown_title, read_document
from tests.conftest import lancelot_command, subprocess_env

SITE_SUFFIX = " — Widgets 4.2 documentation"
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}{suffix}</title></head>
<body><div class="document"><div class="body" role="main"><div class="section" id="top">
<h1>{title}<a class="headerlink" href="#top" title="Permalink to this headline">¶</a></h1>
<p>{body}</p>
<div class="section" id="usage"><h2>Usage<a class="headerlink" href="#usage" title="Permalink to this heading">¶</a></h2>
<p>Call <code>spin(**options)</code> to spin the widget; every keyword goes to the motor.
The widget spins until it is told to stop, and it reports its speed on every turn.</p>
<dl><dt id="spin"><code>spin</code>(<em>**options</em>)<a class="headerlink" href="#spin" title="Permalink to this definition">¶</a></dt>
<dd><p>Spin the widget with <em>**options</em> passed to the motor; the return value is the final speed.</p></dd></dl>
<table><tr><th>Option</th><th></th><th>Meaning</th></tr><tr><td>speed</td><td></td><td>turns a second</td></tr></table>
</div></div></div></div></body></html>"""  # noqa: E501 - markup lines as a Sphinx build writes them


def rows(db: Path) -> list[dict[str, Any]]:
    return lancedb.connect(str(db)).open_table("documents").to_arrow().to_pylist()


def paths(db: Path) -> set[str]:
    return {row["path"] for row in rows(db)}


def sphinx_site(root: Path, pages: int = 6) -> Path:
    """A small Sphinx HTML build: rendered pages, their _sources copies, search and index pages."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "searchindex.js").write_text("Search.setIndex({})")
    (root / "_static").mkdir()
    (root / "_static" / "basic.css").write_text("body {}")
    (root / "_sources").mkdir()
    for n in range(pages):
        title = f"Widget part {n}"
        body = f"Part {n} of the widget manual explains how gear {n} meshes with the crank."
        (root / f"part{n}.html").write_text(PAGE.format(title=title, suffix=SITE_SUFFIX, body=body))
        (root / "_sources" / f"part{n}.rst.txt").write_text(f"{title}\n{'=' * len(title)}\n\n{body}\n")
    for name in ("genindex.html", "search.html", "py-modindex.html"):
        (root / name).write_text(PAGE.format(title=f"Index {name}", suffix=SITE_SUFFIX, body="A B C index entries."))
    return root


# -- --exclude and .lancelotignore ------------------------------------------------------------------


def test_exclude_is_saved_with_the_table_and_cleared_with_an_empty_pattern(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "drafts").mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n\nThe guide.\n")
    (docs / "notes.txt").write_text("Loose notes.\n")
    (docs / "drafts" / "idea.md").write_text("# Idea\n\nA draft.\n")
    db = tmp_path / "db"
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(docs), str(db), "--exclude", "drafts/", "--exclude", "*.txt"])
    assert result.exit_code == 0, result.output
    assert paths(db) == {"guide.md"}
    (docs / "drafts" / "second.md").write_text("# Second\n\nAnother draft.\n")
    result = runner.invoke(app, ["index", str(docs), str(db)])  # no --exclude: the saved patterns
    assert result.exit_code == 0, result.output
    assert paths(db) == {"guide.md"}
    result = runner.invoke(app, ["index", str(docs), str(db), "--exclude", ""])
    assert result.exit_code == 0, result.output
    assert paths(db) == {"guide.md", "notes.txt", "drafts/idea.md", "drafts/second.md"}


def test_a_new_exclude_pattern_removes_rows_already_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nKeep me.\n")
    (docs / "b.md").write_text("# B\n\nDrop me later.\n")
    db = tmp_path / "db"
    index_folder(docs, str(db))
    assert paths(db) == {"a.md", "b.md"}
    report = index_folder(docs, str(db), exclude=["b.md"])
    assert paths(db) == {"a.md"} and report.deleted == 1


def test_lancelotignore_uses_gitignore_syntax(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "build").mkdir(parents=True)
    (docs / "sub").mkdir()
    (docs / "keep.md").write_text("# Keep\n\nKept.\n")
    (docs / "build" / "out.md").write_text("# Out\n\nBuilt.\n")
    (docs / "sub" / "private.md").write_text("# Private\n\nSecret.\n")
    (docs / "sub" / "public.md").write_text("# Public\n\nOpen.\n")
    (docs / ".lancelotignore").write_text("# generated\nbuild/\n**/p*.md\n!public.md\n")
    db = tmp_path / "db"
    index_folder(docs, str(db))
    assert paths(db) == {"keep.md", "sub/public.md"}


# -- documentation sites --------------------------------------------------------------------------


def test_a_sphinx_build_keeps_its_rendered_pages_only_and_says_so(tmp_path: Path) -> None:
    site = sphinx_site(tmp_path / "html")
    db = tmp_path / "db"
    result = CliRunner().invoke(app, ["index", str(site), str(db)])
    assert result.exit_code == 0, result.output
    assert paths(db) == {f"part{n}.html" for n in range(6)}
    assert "Sphinx site found: left out 6 source copies and 3 generated pages" in " ".join(result.output.split())


def test_site_detection_can_be_turned_off_and_that_is_saved(tmp_path: Path) -> None:
    site = sphinx_site(tmp_path / "html")
    db = tmp_path / "db"
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(site), str(db), "--no-site-detection"])
    assert result.exit_code == 0, result.output
    assert len(paths(db)) == 6 + 6 + 3 and "site found" not in result.output
    result = runner.invoke(app, ["index", str(site), str(db)])
    assert result.exit_code == 0 and len(paths(db)) == 15
    result = runner.invoke(app, ["index", str(site), str(db), "--site-detection"])
    assert result.exit_code == 0 and len(paths(db)) == 6


def test_a_sphinx_build_below_the_folder_and_an_mkdocs_site_are_found(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    sphinx_site(docs / "_build" / "html")
    mk = docs / "site"
    (mk / "search").mkdir(parents=True)
    (mk / "search" / "search_index.json").write_text("{}")
    (mk / "index.html").write_text(PAGE.format(title="Home", suffix="", body="The MkDocs home page text."))
    (mk / "404.html").write_text(PAGE.format(title="404", suffix="", body="Page not found."))
    (docs / "notes.md").write_text("# Notes\n\nNot a site.\n")
    report = index_folder(docs, str(tmp_path / "db"))
    assert paths(tmp_path / "db") == {"notes.md", "site/index.html", *(f"_build/html/part{n}.html" for n in range(6))}
    assert report.site and "MkDocs site found: left out 1 generated page" in report.site


# -- titles ---------------------------------------------------------------------------------------


def test_the_title_suffix_every_page_repeats_is_dropped(tmp_path: Path) -> None:
    site = sphinx_site(tmp_path / "html")
    index_folder(site, str(tmp_path / "db"))
    titles = {row["title"] for row in rows(tmp_path / "db")}
    assert titles == {f"Widget part {n}" for n in range(6)}


def test_common_suffix_is_found_per_run_not_hard_coded() -> None:
    titles = [f"Page {n} | Acme Handbook" for n in range(8)] + ["Acme Handbook", "Other"]
    assert common_suffix(titles) == " | Acme Handbook"
    assert common_suffix(["Alpha — one", "Beta — two", "Gamma", "Delta", "Epsilon"]) is None
    assert common_suffix(["A — X docs"] * 3) is None  # too few pages to tell


def test_titles_lose_rst_roles_and_backticks(tmp_path: Path) -> None:
    assert (
        strip_title_markup(":mod:`os.path` --- Common pathname manipulations")
        == "os.path --- Common pathname manipulations"
    )
    assert strip_title_markup("The ``json`` module and `dumps`") == "The json module and dumps"
    (tmp_path / "a.md").write_text("# The :py:func:`~json.dumps` function\n\nText.\n")
    assert read_document(tmp_path, "a.md").title == "The json.dumps function"


# -- chunk text -----------------------------------------------------------------------------------


def test_html_text_has_no_permalink_marks_escapes_or_empty_table_cells(tmp_path: Path) -> None:
    (tmp_path / "p.html").write_text(PAGE.format(title="Spinning", suffix="", body="Spin it &gt;&gt;&gt; fast."))
    text = read_document(tmp_path, "p.html").text
    assert "¶" not in text
    assert "\\*" not in text and "\\>" not in text and "\\_" not in text
    assert "**options" in text
    assert "| |" not in text and "|---" not in text
    assert "speed" in text and "turns a second" in text


def test_fenced_code_keeps_its_backslashes() -> None:
    from lancelot_cli.indexer.html import clean_markdown

    text = "Run it:\n\n```\n...\\> py -m django\n```\n\nThe \\*\\*kwargs and `a\\_b`."
    assert clean_markdown(text) == "Run it:\n\n```\n...\\> py -m django\n```\n\nThe **kwargs and `a\\_b`."


# -- headings -------------------------------------------------------------------------------------


def test_a_comment_in_a_code_block_is_not_a_heading() -> None:
    text = (
        "# Tools\n\n## Permutations\n\n```python\n# Compute the list of all permutations of l\n"
        "def perms(l):\n    pass\n```\n\nAfter the code.\n\n## Formatted literals\n\nf-strings."
    )
    chunks = chunk_text(text, 60)
    found = heading_paths(chunks, "Tools")
    assert not any("Compute the list" in path for path in found)
    assert found[-1] == "Tools > Formatted literals"
    assert markdown_title("```\n# not a title\n```\n\n# Real title\n") == "Real title"


def test_a_fence_opened_at_the_end_of_a_prose_line_hides_its_comments() -> None:
    text = "# Page\n\nThe type is (```\n# a comment\nINTERVAL\n```\n). Then more."
    assert heading_paths([text], "Page") == ["Page"]
    assert not any("a comment" in p for p in heading_paths(chunk_text(text, 20), "Page"))


def test_flattened_code_comment_in_html_is_not_a_heading(tmp_path: Path) -> None:
    page = (
        "<html><head><title>Views</title></head><body><article><h1>Views</h1>"
        "<p>Some text about views and the testing tools that check them in detail.</p>"
        "<h2>Testing</h2><p>Use the client to call a view and look at what it returned.</p>"
        "<pre># my_view here is a function based view\nself.assertEqual(func, my_view)</pre>"
        "<p>More text after the code, long enough to be kept by the extractor.</p></article></body></html>"
    )
    (tmp_path / "v.html").write_text(page)
    doc = read_document(tmp_path, "v.html")
    found = heading_paths(chunk_text(doc.text, 80), doc.title)
    assert not any("my_view" in p for p in found)


# -- --watch on an empty folder -------------------------------------------------------------------


@pytest.mark.slow
def test_watch_on_an_empty_folder_keeps_watching(tmp_path: Path) -> None:
    src, db = tmp_path / "notes", tmp_path / "db"
    src.mkdir()
    proc = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(db), "--watch"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path / "config"), COLUMNS="400"),
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()

    def wait_for(words: str) -> None:
        deadline = time.monotonic() + 60
        while not any(words in line for line in lines):
            assert proc.poll() is None, f"the watcher exited ({proc.returncode}): {''.join(lines)}"
            assert time.monotonic() < deadline, f"no {words!r} within 60 s: {''.join(lines)}"
            time.sleep(0.05)

    try:
        # The message comes from the watcher's first pass, which runs once it is subscribed to file
        # events (indexer/watch.py): the note saved now is an event for the next batch.
        wait_for("nothing to index")
        (src / "first.md").write_text("# First note\n\nWritten after the watcher started.\n")
        wait_for(" file(s) read: ")  # the batch line, printed once the table is written
        assert proc.poll() is None, f"the watcher exited ({proc.returncode}): {''.join(lines)}"
        assert paths(db) == {"first.md"}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)
    assert "Traceback" not in "".join(lines)


def test_without_watch_an_empty_folder_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["index", str(tmp_path / "empty"), str(tmp_path / "db")])
    assert result.exit_code == 1 and "nothing to index" in result.output


# -- a DocBook book index (issue 39 item 9d) ---------------------------------------------------------

DOCBOOK = (
    '<html><head><title>{title}</title></head><body><div class="navheader">Prev Up Next</div>'
    '<div class="{kind}">{body}</div><div class="navfooter">Prev Up Next</div></body></html>'
)


def test_a_book_index_does_not_outrank_the_page_it_points_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries of a DocBook back-of-book index (PostgreSQL's bookindex.html) are links to the
    pages that explain each term: they are navigation, not text, and were the first hit for
    `pg_stat_activity`. The page keeps its title; the entries are left out."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    src = tmp_path / "html"
    src.mkdir()
    entries = "".join(
        f'<dt>pg_stat_{name}, <a href="monitoring-stats.html">Viewing Statistics</a>, '
        f'<a href="monitoring-stats.html#{name}">pg_stat_{name}</a></dt>'
        for name in ("activity", "archiver", "bgwriter", "database", "replication", "ssl", "wal")
    )
    (src / "bookindex.html").write_text(
        DOCBOOK.format(
            title="Index",
            kind="index",
            body='<div class="titlepage"><h1>Index</h1></div><p>A | B | P</p>'
            f'<div class="indexdiv"><h3>P</h3><dl>{entries}</dl></div>',
        )
    )
    prose = " ".join(f"Statistic {i} counts the blocks read by the server since the last reset." for i in range(60))
    (src / "monitoring-stats.html").write_text(
        DOCBOOK.format(
            title="Viewing Statistics",
            kind="sect1",
            body=f"<h2>Viewing Statistics</h2><p>{prose}</p><p>The <code>pg_stat_activity</code> view has one "
            "row per server process, showing its current query.</p>",
        )
    )
    assert read_document(src, "bookindex.html").text == "# Index\n\nA | B | P"
    db = tmp_path / "db"
    index_folder(src, str(db))
    monkeypatch.setenv("LANCEDB_PATH", str(db))
    hits = Engine(load()).search("pg_stat_activity", search_type="text").hits
    assert [hit.source for hit in hits] == ["monitoring-stats.html"]
