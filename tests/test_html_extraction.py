"""HTML pages into titles and Markdown: a page whose content sits in a named container (Sphinx,
DocBook, MkDocs, <main>) keeps every section heading, its code blocks fenced and its tables as rows,
without the site's navigation; a page with an XML declaration (every DocBook page) keeps its
<title>; a page with no container still goes through trafilatura. Real files, the real reader."""

from __future__ import annotations

import re
from pathlib import Path

from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.chunking import chunk_text, heading_paths
from lancelot_cli.indexer.sources import read_document

DOCBOOK = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\
<html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />\
<title>VACUUM</title></head><body id="docContent">
<div class="navheader"><table><tr><th colspan="3">VACUUM</th></tr><tr><td><a href="a.html">Prev</a></td>
<th>SQL Commands</th><td><a href="b.html">Next</a></td></tr></table><hr /></div>
<div class="refentry" id="SQL-VACUUM"><div class="refnamediv"><h2><span class="refentrytitle">VACUUM</span></h2>
<p>VACUUM — garbage-collect and optionally analyze a database</p></div>
<div class="refsynopsisdiv"><h2>Synopsis</h2><pre class="synopsis">VACUUM [ FULL ] [ VERBOSE ] [ table_name ]
# not a heading, a line of the synopsis</pre></div>
<div class="refsect1" id="id-1"><h2>Description</h2><p><code class="command">VACUUM</code> reclaims storage
occupied by dead tuples.</p>
<div class="refsect2"><h3>Outputs</h3><div class="variablelist"><dl class="variablelist">
<dt><span class="term"><code class="literal">FULL</code></span></dt><dd><p>Selects <span class="quote">“full”</span> vacuum.</p></dd>
</dl></div></div></div>
<div class="refsect1"><h2>Parameters</h2><div class="table"><table class="table" border="1">
<thead><tr><th>Option</th><th></th><th>Default</th></tr></thead>
<tbody><tr><td>INDEX_CLEANUP</td><td></td><td>AUTO</td></tr></tbody></table></div>
<ul><li><p>Plain vacuum</p></li><li>Full vacuum</li></ul></div></div>
<div class="navfooter"><hr /><table><tr><td><a href="a.html">Prev</a></td><td>Home</td></tr></table></div>
</body></html>"""  # noqa: E501 - markup lines as the DocBook build writes them

SPHINX_THEME = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>QuerySet API — Widgets docs</title></head>
<body><div class="document"><div id="hd"><div id="global-nav"><a href="/">Home</a> Download Community</div>
<div class="nav"><a href="p.html">previous</a></div></div>
<div id="bd"><div id="yui-main"><div class="section" id="s-api">
<h1>QuerySet API<a class="headerlink" href="#s-api" title="Permalink to this headline">¶</a></h1>
<p>Reference for <code class="docutils literal"><span class="pre">QuerySet</span></code> and its methods.</p>
<div class="section"><h2>When QuerySets are evaluated</h2><p>Iteration evaluates a queryset.</p>
<div class="highlight"><pre><span class="c1"># Compute the list of all entries</span>
<span class="k">for</span> e <span class="ow">in</span> Entry.objects.all(): print(e)</pre></div>
<div class="section"><h3>Pickling</h3><p>Pickled querysets hold their results.</p></div>
<div class="section"><h4>Caveats</h4><p>Pickles are not portable between versions.</p></div></div>
</div></div>
<div class="yui-b" id="sidebar"><div class="sphinxsidebar" role="navigation"><h3>Contents</h3>
<ul><li>Sidebar entry</li></ul><h3>Browse</h3><p>Prev: somewhere</p></div></div></div>
<div id="ft"><div class="nav">Footer navigation</div></div></div></body></html>"""

BLOG = """<!DOCTYPE html><html><head><title>A walk in the hills</title></head><body>
<div id="top">Site menu: Home Archive About</div>
<div class="post"><h2>A walk in the hills</h2>
<p>We left the village at dawn and climbed the ridge path towards the old quarry, where the view opens
over the whole valley and on a clear morning you can see the lighthouse on the far coast.</p>
<p>Lunch was bread, cheese and apples by the cairn; the wind came up from the west around two o'clock
and we walked down through the beech woods, reaching the pub just before the rain set in.</p></div>
</body></html>"""


def headings(text: str) -> list[str]:
    fence = False
    found = []
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            found.append(line)
    return found


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_page_with_an_xml_declaration_keeps_its_title_and_text(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", "sql-vacuum.html", DOCBOOK)
    doc = read_document(docs, "sql-vacuum.html")
    assert doc.title == "VACUUM"  # not the file name
    assert "reclaims storage occupied by dead tuples" in doc.text


def test_docbook_page_keeps_every_heading_and_drops_its_navigation(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "docs", "sql-vacuum.html", DOCBOOK), "sql-vacuum.html")
    assert headings(doc.text) == ["## VACUUM", "## Synopsis", "## Description", "### Outputs", "## Parameters"]
    assert "Prev" not in doc.text and "Home" not in doc.text and "SQL Commands" not in doc.text
    assert "```\nVACUUM [ FULL ] [ VERBOSE ] [ table_name ]\n# not a heading" in doc.text
    assert "`VACUUM` reclaims storage occupied by dead tuples." in doc.text  # inline code, one line
    assert "| INDEX_CLEANUP | AUTO |" in doc.text  # a row, without empty cells or a rule row
    assert "---" not in doc.text
    assert "- Plain vacuum" in doc.text and "- Full vacuum" in doc.text
    assert "`FULL`" in doc.text and "Selects “full” vacuum." in doc.text
    paths = heading_paths(chunk_text(doc.text), doc.title)
    assert not any("not a heading" in path for path in paths)


def test_sphinx_page_keeps_headings_without_sidebar_or_permalinks(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "docs", "querysets.html", SPHINX_THEME), "querysets.html")
    assert headings(doc.text) == ["# QuerySet API", "## When QuerySets are evaluated", "### Pickling", "#### Caveats"]
    for chrome in ("Contents", "Browse", "Sidebar entry", "Download", "previous", "Footer navigation"):
        assert chrome not in doc.text
    assert "¶" not in doc.text
    assert "Reference for `QuerySet` and its methods." in doc.text
    assert "```\n# Compute the list of all entries\nfor e in Entry.objects.all(): print(e)\n```" in doc.text


def test_a_page_without_a_content_container_still_goes_through_trafilatura(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "docs", "walk.html", BLOG), "walk.html")
    assert doc.title == "A walk in the hills"
    assert "reaching the pub just before the rain set in" in doc.text


def test_an_indexed_docbook_page_is_found_under_its_title(tmp_path: Path) -> None:
    import lancedb

    docs = write(tmp_path / "docs", "sql-vacuum.html", DOCBOOK)
    index_folder(docs, str(tmp_path / "db"))
    rows = lancedb.connect(str(tmp_path / "db")).open_table("documents").to_arrow().to_pylist()
    assert {row["title"] for row in rows} == {"VACUUM"}


def deep_main(depth: int, tag: str = "div", before: str = "") -> str:
    return (
        f"<html><head><title>Deep page</title></head><body><main>{before}"
        + f"<{tag}>" * depth
        + "The buried words are here. " * 40
        + f"</{tag}>" * depth
        + "</main></body></html>"
    )


def test_a_container_nested_too_deep_is_still_skipped_or_read_in_part(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "deep.html", deep_main(100_000))
    write(docs, "spans.html", deep_main(100_000, tag="span"))
    write(docs, "part.html", deep_main(300, before="<h2>Before</h2><p>" + "Words before the deep part. " * 30 + "</p>"))
    report = index_folder(docs, str(tmp_path / "db"), workers=1)
    skipped = dict(report.skipped)
    assert "nests elements more than 256 deep" in skipped["deep.html"]
    assert "nests elements more than 256 deep" in skipped["spans.html"]
    assert "indexed in part" in dict(report.notes)["part.html"]


def test_an_article_keeps_a_header_that_holds_its_title_and_drops_its_navigation(tmp_path: Path) -> None:
    page = (
        "<html><head><title>Install | Gadget</title></head><body><nav>Docs Blog GitHub</nav>"
        "<main><article><nav class='breadcrumbs'>Home / Guides</nav><header><h1>Install</h1></header>"
        "<p>Run <code>pip install gadget</code> to install it.</p><h2>Upgrade</h2><p>Run it again with "
        "<code>-U</code>.</p><footer>Edit this page</footer></article><aside>On this page</aside></main>"
        "<footer>Copyright Gadget</footer></body></html>"
    )
    doc = read_document(write(tmp_path / "docs", "install.html", page), "install.html")
    assert doc.text == "# Install\n\nRun `pip install gadget` to install it.\n\n## Upgrade\n\nRun it again with `-U`."
