"""The walks that find permalink anchors and page chrome (indexer/html.py, indexer/html_markdown.py)
find what the XPath unions they replaced found (issue 49 item 3): the same elements, in the same
order, on pages made to trip a difference (blanks XPath does not count, fragments, nesting)."""

from __future__ import annotations

import pytest

from lancelot_cli.indexer.html import parse, permalinks
from lancelot_cli.indexer.html_markdown import chrome, find_container

_CLASS = 'contains(concat(" ", normalize-space(@class), " "), " {} ")'
# The expressions as they were before the walks: the oracle.
OLD_PERMALINKS = (
    f"//a[{_CLASS.format('headerlink')}]|//a[{_CLASS.format('hash-link')}]|//a[{_CLASS.format('anchorjs-link')}]"
    '|//a[starts-with(@title, "Permalink") or starts-with(@title, "Link to this")]'
    f"|//*[{_CLASS.format('viewcode-link')}]|//a[{_CLASS.format('viewcode-back')}]"
)
OLD_CHROME = (
    './/*[@role="navigation" or @role="search" or @role="banner" or @role="contentinfo"'
    ' or @role="complementary"]|.//*[@id="sidebar" or @id="hd" or @id="ft"]|.//*['
    + " or ".join(
        _CLASS.format(c)
        for c in (
            "sphinxsidebar",
            "related",
            "nav",
            "footer",
            "navheader",
            "navfooter",
            "md-sidebar",
            "md-footer",
            "indexdiv",
        )
    )
    + "]"
)

PAGES = {
    "sphinx": """<html><head><title>T</title></head><body><div role="navigation">n</div>
<div class="document"><div class="body"><h1>A<a class="headerlink" href="#a"
title="Permalink to this heading">¶</a></h1>
<p>x <span class="viewcode-link">[source]</span> <a class="viewcode-back" href="#">[docs]</a></p>
<div class="sphinxsidebar"><div class="related"><ul class="nav"><li>in</li></ul></div></div>
<div class="footer">f</div></div></div></body></html>""",
    "blanks": """<html><body><main><h2>H<a class="\theaderlink\n" href="#">#</a></h2>
<div class="x\u00a0nav">not chrome: a no-break space is no XPath blank</div>
<div class="x\fnav">nor a form feed</div><div class="\r\nnav  footer ">chrome</div>
<div class="navigation">not chrome either</div><a class="hash-linked">no</a>
<a title="Link to this definition">#</a><a title=" Permalink">no</a><span title="Permalink">no</span>
<div id="sidebar"><div id="ft"><p role="search">nested</p></div></div><div id="Sidebar">no</div>
<!-- a comment --><?pi x?></main></body></html>""",
    "docbook": """<?xml version="1.0" encoding="UTF-8"?><html><body><div class="navheader">h</div>
<div class="sect1"><h2 class="title">S</h2><div class="indexdiv"><dl><dt>t</dt></dl></div>
<p>x<a class="anchorjs-link" href="#">#</a></p></div><div class="navfooter">f</div></body></html>""",
    "fragment": """<title>Only a fragment</title><article><a class="headerlink">¶</a>
<div role="banner">b</div><p>text</p></article>""",
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_permalink_walk_finds_what_the_xpath_found(name: str) -> None:
    _, tree, _ = parse(PAGES[name])
    old = tree.xpath(OLD_PERMALINKS)
    assert old  # every page holds some
    assert permalinks(tree) == old  # the same elements (lxml hands out one proxy per element), in order


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_chrome_walk_finds_what_the_xpath_found(name: str) -> None:
    _, tree, _ = parse(PAGES[name])
    containers = find_container(tree)
    assert containers
    for container in containers:
        assert chrome(container) == container.xpath(OLD_CHROME)
