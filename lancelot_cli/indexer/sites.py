"""Recognise a generated documentation site and keep its rendered pages only.

A Sphinx build (``searchindex.js`` next to ``_static/`` or ``_sources/``) also holds the pages'
reST sources (``_sources/*.txt``), highlighted module code (``_modules/``) and generated search,
general-index and module-index pages; indexing them makes every hit appear twice and fills the
top hits with index pages. MkDocs (``search/search_index.json``) and Docusaurus (its generator
meta tag, ``assets/``) have their own search pages, 404 pages and tag lists. The site's root is
the folder holding the marker, anywhere under the indexed folder. ``--no-site-detection`` turns
this off.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

SOURCE_COPY = "source copy"
GENERATED = "generated page"
FRAGMENT = "source fragment"
UNLISTED = "page its search index does not list"
BESIDE = "pages with their sources"  # no generator's marker: X.html shipped with X.txt (AsciiDoc, Pandoc...)
# What a page is written in before it is built (an .adoc or .rst is read only with --ext).
_SOURCE_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".adoc", ".asciidoc", ".rst")
_PAGE_SUFFIXES = (".html", ".htm", ".xhtml")

# Pages a generator writes for navigation or search rather than content (names relative to the site root).
_SPHINX_GENERATED = re.compile(r"^(search|genindex(-[^/]*)?|[a-z]*-?modindex)\.html$|^_modules/|^_static/|^_images/")
_MKDOCS_GENERATED = re.compile(r"^(404|search)\.html$|^search/|^assets/")
_DOCUSAURUS_GENERATED = re.compile(
    r"^404\.html$|^search(/|\.html$)|^assets/|(^|/)tags(/|\.html$)"
    r"|^blog/(archive|page)/"
)
# The key of the list of pages in searchindex.js, up to the list's "[" (the list runs to the first "]").
_DOCNAMES = re.compile(r'"?docnames"?\s*:\s*\[')
_GENERATOR = re.compile(rb"<meta\s+name=[\"']generator[\"']\s+content=[\"']([^\"']+)", re.I)


@dataclass(frozen=True)
class Site:
    kind: str  # "Sphinx", "MkDocs", "Docusaurus"
    root: str  # relative folder ("" for the indexed folder itself), forward slashes
    pages: frozenset[str] | None = None  # Sphinx: the pages its search index lists ("pkgs.html"), if read

    def leave_out(self, rel: str) -> str | None:
        """Why ``rel`` (relative to the indexed folder) is not a rendered page of this site, or None."""
        inner = rel if not self.root else rel[len(self.root) + 1 :] if rel.startswith(f"{self.root}/") else None
        if inner is None:
            return None
        if self.kind == "Sphinx":
            if inner.startswith("_sources/"):
                return SOURCE_COPY
            if _SPHINX_GENERATED.search(inner):
                return GENERATED
            if self.pages is not None and inner.lower().endswith(".html") and inner not in self.pages:
                return UNLISTED
            return None
        pattern = _MKDOCS_GENERATED if self.kind == "MkDocs" else _DOCUSAURUS_GENERATED
        return GENERATED if pattern.search(inner) else None


def detect(folder: str, rel: str, dirs: list[str], files: list[str]) -> Site | None:
    """The site whose root is ``folder`` (``rel`` relative to the indexed folder), judged from its
    entries, or None."""
    names = set(files)
    if "searchindex.js" in names and ({"_sources", "_static"} & set(dirs)):
        return Site("Sphinx", rel, _sphinx_pages(os.path.join(folder, "searchindex.js")))
    if "search" in dirs and os.path.isfile(os.path.join(folder, "search", "search_index.json")):
        return Site("MkDocs", rel)
    if "index.html" in names and "assets" in dirs:
        generator = _generator(os.path.join(folder, "index.html"))
        if generator and generator.lower().startswith("docusaurus"):
            return Site("Docusaurus", rel)
        if generator and generator.lower().startswith("mkdocs"):
            return Site("MkDocs", rel)
    return None


def sources_beside_pages(names: list[str], below_pairs: bool = False) -> dict[str, str]:
    """Files of one folder that are the sources of rendered pages beside them, with the reason.

    A build that ships each page's source next to it (``git-add.txt`` by ``git-add.html``) would
    index every page twice, and the plain source outranks the page (no navigation, shorter). When
    the folder holds at least one such pair, its other sources, with no page of their own, are
    fragments that pages include and are left out too (the pages that include them hold their
    text), and so are the sources of a folder without pages below such a folder
    (``includes/cmd-options.txt``: ``below_pairs``). Any other folder is left as it is."""
    pages = {name[: -len(suffix)] for name in names for suffix in _PAGE_SUFFIXES if name.lower().endswith(suffix)}
    sources = {
        name: stem
        for name in names
        for suffix in _SOURCE_SUFFIXES
        if name.lower().endswith(suffix) and (stem := name[: -len(suffix)])
    }
    if any(stem in pages for stem in sources.values()) or (below_pairs and not pages):
        return {name: SOURCE_COPY if stem in pages else FRAGMENT for name, stem in sources.items()}
    return {}


def _sphinx_pages(path: str) -> frozenset[str] | None:
    """The pages a Sphinx build's ``searchindex.js`` lists (``docnames``, as ``.html`` files and as
    ``dirhtml``'s ``NAME/index.html``), or None when it cannot be read. A page of the folder that
    it does not list was not built from the site's sources: a single-page copy of the whole book
    (``developers-reference.html`` beside its chapters) that would outrank every chapter."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20).decode("utf-8", "replace")
        names = _docnames(head)
    except (OSError, ValueError):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    return frozenset(page for name in names for page in (f"{name}.html", f"{name}/index.html"))


def _docnames(head: str) -> Any:
    """The list after the first ``docnames:`` key of ``head``, parsed, or None. The first key whose
    list is closed by a "]" is the one ``"?docnames"?\\s*:\\s*(\\[[^\\]]*\\])`` found; when the first key's
    list is not closed, no later one is (that pattern read to the end from each: quadratic, 0.15 ->
    0.65 s for 64 -> 128 KB of "docnames:[", some 40 s for the 1 MB read)."""
    key = _DOCNAMES.search(head)
    end = head.find("]", key.end()) if key else -1
    return json.loads(head[key.end() - 1 : end + 1]) if key and end >= 0 else None


def _generator(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            head = f.read(16384)
    except OSError:
        return None
    found = _GENERATOR.search(head)
    return found.group(1).decode("utf-8", "replace") if found else None


def site_of(sites: list[Site], folder: str) -> Site | None:
    """The innermost site holding the files of ``folder`` (relative; "" for the top)."""
    best = None
    for site in sites:
        inside = site.root == "" or folder == site.root or folder.startswith(f"{site.root}/")
        if inside and (best is None or len(site.root) > len(best.root)):
            best = site
    return best


def describe(counts: dict[tuple[str, str], int]) -> str:
    """ "Sphinx site found: left out 497 source copies and 4 generated pages" from
    {(kind, reason): files}; one clause per kind of site."""
    parts = []
    for kind in sorted({k for k, _ in counts}):
        copies, generated = counts.get((kind, SOURCE_COPY), 0), counts.get((kind, GENERATED), 0)
        fragments, unlisted = counts.get((kind, FRAGMENT), 0), counts.get((kind, UNLISTED), 0)
        what = [
            f"{n} {one if n == 1 else many}"
            for n, one, many in (
                (copies, SOURCE_COPY, "source copies"),
                (generated, GENERATED, "generated pages"),
                (fragments, FRAGMENT, "source fragments"),
                (unlisted, UNLISTED, "pages its search index does not list"),
            )
            if n
        ]
        found = "rendered pages with their sources found" if kind == BESIDE else f"{kind} site found"
        parts.append(f"{found}: left out {' and '.join(what) or 'nothing'}")
    return "; ".join(parts) + " (--no-site-detection to index them)" if parts else ""
