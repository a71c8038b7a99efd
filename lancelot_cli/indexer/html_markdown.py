"""Main content of a documentation page as Markdown, by a small walk of the parsed lxml tree.

Generated documentation (Sphinx, DocBook, MkDocs, Docusaurus, ...) keeps its content in a
container that can be named: ``<main>``, ``[role=main]``, ``<article>``, Sphinx's ``div.body`` or
``div.document``, DocBook's top-level ``div.sect1``/``div.refentry``/``div.chapter``, MkDocs'
``div.md-content``. For such pages this walk keeps every heading (h1-h6 as ``#`` lines), paragraph,
list, definition list, table (one ``| a | b |`` line per row) and ``<pre>`` block (fenced) in
document order, with links as their text and inline code in backticks, in about a tenth of
trafilatura's time; trafilatura, built for articles, drops most section headings of such pages.
Pages without a container (blog posts and the like) are left to trafilatura (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_BACKTICKS = re.compile(r"`+")
# The first of these that matches names the content (several matches of one are taken in order).
_CLASS = 'contains(concat(" ", normalize-space(@class), " "), " {} ")'
_DOCBOOK = (
    "sect1",
    "refentry",
    "chapter",
    "appendix",
    "preface",
    "part",
    "reference",
    "book",
    "set",
    "article",
    "glossary",
    "bibliography",
    "index",
    "sect2",
    "section",
    "legalnotice",
)
CONTAINERS = (
    "//main",
    '//*[@role="main"]',
    "//div[" + _CLASS.format("md-content") + "]",
    "//article",
    "//div[" + _CLASS.format("body") + "]",
    "/html/body/div[" + " or ".join(f'@class="{c}"' for c in _DOCBOOK) + "]",
    "//div[" + _CLASS.format("document") + "]",
)
# Page chrome inside a broad container (Sphinx's div.document holds the sidebar and the footer):
# elements with one of these roles, ids or classes (a class as one of the blank-separated words of
# ``class``, as ``contains(concat(" ", normalize-space(@class), " "), " nav ")`` tells it).
CHROME_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary"})
CHROME_IDS = frozenset({"sidebar", "hd", "ft"})
CHROME_CLASSES = frozenset(
    {
        "sphinxsidebar",
        "related",
        "nav",
        "footer",
        "navheader",
        "navfooter",
        "md-sidebar",
        "md-footer",
        # The entries of a DocBook back-of-book index: terms that link to the pages explaining
        # them, so indexed they outranked those pages (bookindex.html was the first hit for
        # pg_stat_activity). Without them PostgreSQL's tune MRR@10 0.8455 -> 0.8545, heldout
        # 0.7226 -> 0.7378, no question worse; the other 15 tuning sets unchanged (issue 39).
        # Tables of contents stay: left out, a chapter page kept its title alone and that short
        # chunk won its title's words (PostgreSQL tune 0.8455 -> 0.8409, "brin index").
        "indexdiv",
    }
)


# XPath's blanks (space, tab, CR, LF): what ``normalize-space`` collapses, not Python's wider set.
def chrome(container: Any) -> list[Any]:
    """The page chrome inside ``container`` (not itself), in document order, nested ones included.
    One walk in Python: the XPath union that said the same took 1.4 of the 4.1 s of CPU that
    converting the PostgreSQL manual cost (its nine ``concat(normalize-space(@class))`` for every
    element, three scans of the container)."""
    from lxml import etree

    from lancelot_cli.indexer.html import class_words

    found = []
    for el in container.iterdescendants(etree.Element):
        if (
            el.get("role") in CHROME_ROLES
            or el.get("id") in CHROME_IDS
            or not CHROME_CLASSES.isdisjoint(class_words(el))
        ):
            found.append(el)
    return found


DROP = {
    "nav",
    "footer",
    "aside",
    "script",
    "style",
    "noscript",
    "template",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "svg",
    "iframe",
    "object",
    "head",
    "title",
    "img",
    "hr",
    "map",
}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
CODE = {"code", "tt", "kbd", "samp"}
BLOCKS = {
    "address",
    "article",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "header",
    "hgroup",
    "html",
    "legend",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "listing",
    "xmp",
    "menu",
    "dir",
} | set(HEADINGS)


def find_container(tree: Any) -> list[Any]:
    """The elements holding the page's main content, or [] when none can be named."""
    for xpath in CONTAINERS:
        found = tree.xpath(xpath)
        if found:
            # A nested match (an <article> inside another) is part of the outer one. A set: a list
            # was searched once per ancestor of each match (20,000 <article>s took 8.8 s).
            matches = set(found)
            return [el for el in found if not any(a in matches for a in el.iterancestors())]
    return []


def to_markdown(tree: Any) -> str | None:
    """The page's main content as Markdown, or None when no container names it. Removes the page
    chrome found inside the container from ``tree``."""
    containers = find_container(tree)
    if not containers:
        return None
    for container in containers:
        for node in chrome(container):
            if node.getparent() is not None:
                node.drop_tree()
    out: list[str] = []
    try:
        for container in containers:
            _blocks(container, out)
    except RecursionError:  # deeper than the parser keeps (256) cannot get here; if it does, trafilatura
        return None
    return "\n\n".join(out)


def _tag(el: Any) -> str | None:
    tag = el.tag
    return tag.lower() if isinstance(tag, str) else None  # comments and processing instructions: None


def _blocks(el: Any, out: list[str]) -> None:
    """Append the Markdown blocks of ``el``'s content to ``out``: runs of text and inline elements
    make paragraphs, block elements their own blocks."""
    run: list[str] = [el.text or ""]
    for child in el:
        tag = _tag(child)
        if tag is None or tag in DROP or (tag == "header" and not _has_heading(child)):
            pass
        elif tag in BLOCKS:
            _flush(run, out)
            _block(tag, child, out)
        else:
            run.append(_inline(child))
        run.append(child.tail or "")
    _flush(run, out)


def _flush(run: list[str], out: list[str]) -> None:
    text = " ".join("".join(run).split())
    if text:
        out.append(text)
    run.clear()


def _block(tag: str, el: Any, out: list[str]) -> None:
    if tag in HEADINGS:
        text = " ".join(el.text_content().split())
        if text:
            out.append(f"{'#' * HEADINGS[tag]} {text}")
    elif tag in ("pre", "listing", "xmp"):
        code = el.text_content().strip("\n")
        if code.strip():
            # Longer than any run of backticks in the code (at least three); lengthening "```" until
            # it was not found searched the code once per backtick of its longest run (quadratic:
            # 1.4 -> 5.8 s for 64 -> 128 KB).
            fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(code)), default=0))
            out.append(f"{fence}\n{code}\n{fence}")
    elif tag in ("ul", "ol", "menu", "dir"):
        items: list[list[str]] = []
        for item in el:
            if _tag(item) == "li":
                inner: list[str] = []
                _blocks(item, inner)
                if inner:
                    mark = f"{len(items) + 1}. " if tag == "ol" else "- "
                    # A code fence keeps its line start; the mark goes on a line of its own.
                    inner[0] = f"{mark.rstrip()}\n{inner[0]}" if inner[0].startswith("```") else mark + inner[0]
                    items.append(inner)
        if all(len(inner) == 1 and "\n" not in inner[0] for inner in items):
            out.append("\n".join(inner[0] for inner in items))  # a tight list: one item a line
        else:
            for inner in items:
                out.extend(inner)
    elif tag == "table":
        rows = "\n".join(row for row in map(_row, _own(el, "tr")) if row)
        if rows:
            out.append(rows)
        for caption in _own(el, "caption"):
            _blocks(caption, out)
    else:
        _blocks(el, out)


def _own(table: Any, tag: str) -> Iterator[Any]:
    """The ``tag`` elements of ``table`` in document order, leaving out those of the tables nested
    in it: a nested table is read once, with the cell that holds it. (``table.iter`` listed its rows
    again for every table around it, 2^depth times: 11 nested tables took 7 ms, 22 took 13 s.)"""
    stack = list(reversed(table))
    while stack:
        node = stack.pop()
        name = _tag(node)
        if name == tag:
            yield node
        if name != "table":
            stack.extend(reversed(node))


def _row(tr: Any) -> str:
    cells = []
    for cell in tr:
        if _tag(cell) in ("td", "th"):
            inner: list[str] = []
            _blocks(cell, inner)
            cells.append(" ".join(" ".join(inner).split()))
    return "| " + " | ".join(cells) + " |" if any(cells) else ""


def _inline(el: Any) -> str:
    tag = _tag(el)
    if tag in CODE:
        text = " ".join(el.text_content().split())
        if not text:
            return ""
        ticks = "``" if "`" in text else "`"
        return f"{ticks}{text}{ticks}"
    if tag == "br":
        return " "
    if tag in DROP:
        return ""
    parts = [el.text or ""]
    for child in el:
        if _tag(child) is not None:
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _has_heading(el: Any) -> bool:
    return any(_tag(n) in HEADINGS for n in el.iter())


def body_markdown(html: str) -> str:
    """Markdown of a whole HTML body, which is all content (a book's chapter, a converted Word
    document): walked as a container, so every heading, list and table keeps its structure."""
    from lancelot_cli.indexer.html import clean_markdown, heading_texts, parse, prepare

    _, tree, _ = parse(html)
    if tree is None:
        return ""
    prepare(tree)
    for body in tree.iter("body"):
        body.tag = "main"
    return clean_markdown(to_markdown(tree) or "", heading_texts(tree))
