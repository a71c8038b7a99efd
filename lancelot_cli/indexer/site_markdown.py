"""Markdown written for a site generator, as the reader of the built page sees it.

MkDocs/Material, Docusaurus, Hugo and Jekyll sources carry markup that only the generator
understands; indexed as it stands it shows up in titles (``Request Files { #request-files }``),
snippets and context blocks, and spends an agent's budget on raw HTML. Outside code fences:

- attribute lists after headings and on their own line (``{ #anchor }``, ``{: .class }``): dropped;
- snippet includes (``{* ../src/app.py hl[3] *}``, ``--8<-- "file.md"``, ``{!file.md!}``): the
  file's path alone (``src/app.py``), since the page shows that file there and its name often says
  what it is about (dropping the names cost the FastAPI questions 0.03 MRR@10);
- admonitions (``!!! note "Title"``, ``??? tip``, ``/// warning | Title`` ... ``///``, Docusaurus'
  ``:::tip Title`` ... ``:::``): the
  title (or the kind, "Note") stays as a line of its own, the fence lines go and the
  indented body is dedented;
- raw HTML: ``<style>``/``<script>`` blocks and comments dropped, tags of HTML elements and of JSX
  components (``<Tabs>``, ``<TabItem value="x">``) dropped with their text kept (a block element's
  tag between two words leaves a blank: table cells), images that are links (badges:
  ``[![build](...)](...)``) dropped; code fences and code spans keep their tags;
- MDX ``import``/``export`` lines, Hugo shortcodes (``{{< note >}}``, ``{{% tab %}}``) and Liquid or
  Jinja tags (``{% raw %}``, ``{{ page.title }}``): dropped.

Every dropped line is kept as an empty line, so line numbers still point into the file.

Each rule is linear in its line (the raw-HTML pass in the page): a pattern that can try many
splits of a run of blanks, or read on from many starts, is replaced by string operations that
read the line once (issue 37: one 4 KB heading line took 52 s, 64 KB of "<!--" 4.3 s and 128 KB
17.8 s). What each rule keeps or drops is the same as before.
"""

from __future__ import annotations

import re

from lancelot_cli.mdtext import ATX_OPEN, next_fence

_PARENTS = re.compile(r"^(?:\.\.?/)+")
_ATTR_LINE = re.compile(r"^[ \t]*\{:[^{}\n]*\}[ \t]*$")
# "{* path ... *}" is read apart (_star_include); these two are linear as they stand.
_INCLUDE_LINE = re.compile(
    r"^[ \t]*(?:;?-{2}8<-{2}[ \t]*[\"']?([^\"'\s]*).*"  # --8<-- "path"
    r"|\{!>?[ \t]*(\S+?)[ \t]*!\})[ \t]*$"
)  # {! path !}
_STAR_INCLUDE = re.compile(r"[ \t]*\{\*[ \t]*(\S+)")
_ADMONITION = re.compile(r"^( *)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)(?:[ \t]+\"([^\"]*)\")?[ \t]*$")
# A title runs to its last non-blank, ".*[^ \t]": the lazy "(.*?)[ \t]*$" it replaces tried every
# end, each reading the blanks after it (quadratic on a title with a long run of blanks inside:
# 9.6 -> 36 s for 64 -> 128 KB).
_BLOCK_OPEN = re.compile(r"^[ \t]*/{3,}[ \t]*([\w-]+)(?:[ \t]*\|[ \t]*(.*[^ \t]|))?[ \t]*$")
_BLOCK_CLOSE = re.compile(r"^[ \t]*(?:/{3,}|:{3,})[ \t]*$")
# Docusaurus admonitions: ":::tip What You'll Learn" or ":::note[Title]" ... ":::". As above; a
# title of blanks only is its last blank, as "[ \t]+(.+?)" had it.
_COLONS_OPEN = re.compile(r"^[ \t]*:{3,}[ \t]*([A-Za-z][\w-]*)(?:\[([^\]]*)\]|[ \t]+(.*[^ \t]|[ \t]))?[ \t]*$")
_MDX_LINE = re.compile(r"^(import[ \t]+[\w{*'\"].*|export[ \t]+(const|default|function|let)\b.*)$")
# Where a raw block may open (its end is looked for apart: _drop_raw_blocks).
_RAW_OPEN = re.compile(r"<(?:(?P<style>style)\b|(?P<script>script)\b|(?P<comment>!--))", re.I)
_RAW_CLOSE = {kind: re.compile(rf"</{kind}[ \t]*>", re.I) for kind in ("style", "script")}
# Template tags hold no braces or backslashes: LaTeX ({{\\text{O}_{2}}}) and JSON ({"a": {}}) are not tags.
_SHORTCODE = re.compile(r"\{\{[<%][^{}\\\n]*?[%>]\}\}|\{%[^{}\\\n]*?%\}|\{\{[^{}\\\n]*\}\}")
_CODE_SPAN = re.compile(r"(`+[^`]*`+)")
_HTML_ELEMENTS = (
    "a abbr address article aside audio b bdi bdo blockquote br button caption center cite code col colgroup dd "
    "del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hr i iframe img input "
    "ins kbd label li main mark nav noscript ol p picture pre q s samp section small source span strike strong "
    "sub summary sup table tbody td tfoot th thead time tr tt u ul var video wbr"
)
# An opening tag right after a word or a dot is a type's parameter (List<String>, Map<K, V>), not
# markup; a closing tag is markup wherever it stands: "the ASGI</abbr> specification" (a generic
# never writes "</"). The pattern read one line before the lookbehind covered closing tags too,
# and 135 closing tags of the FastAPI pages stayed in the text (issue 39 item 5).
_TAG = re.compile(
    r"(?:</|(?<![\w.])<)(?P<name>"
    + "|".join(_HTML_ELEMENTS.split())
    + r"|[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*)(?:\s[^<>]*)?/?>"
)
# Elements that end a run of text in the built page (a table cell, a list item, a line break):
# their tags leave a blank between the words they stood between ("<td>name</td><td>str</td>").
_BLOCK_ELEMENTS = frozenset(
    "address article aside blockquote br caption center dd details div dl dt figcaption figure footer h1 h2 h3 "
    "h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)


def clean(text: str) -> str:
    """``text`` (a Markdown page's body, front matter already split off) as its built page reads."""
    text = _drop_raw_blocks(text)
    out: list[str] = []
    fence: str | None = None
    body_indent: str | None = None  # the indentation of a ``!!!`` admonition's body, while inside it
    for line in text.split("\n"):
        if fence is not None:
            fence = next_fence(line, fence)
            out.append(line)
            continue
        if body_indent is not None:
            if line.startswith(body_indent):
                line = line[len(body_indent) :]
            elif line.strip():
                body_indent = None
        fence = next_fence(line, None)
        if fence is not None:
            out.append(line)
            continue
        admonition = _ADMONITION.match(line) if "!!!" in line or "???" in line else None
        if admonition:
            indent, kind, title = admonition.groups()
            out.append(indent + (title if title is not None else kind.replace("-", " ").capitalize()))
            body_indent = indent + "    "
            continue
        out.append(_clean_line(line))
    return "\n".join(out)


def _clean_line(line: str) -> str:
    if not _markup(line):
        return line  # most lines: no rule below can apply
    include = _include(line)
    if include is not None:  # the included file's name stays: it names what the page shows there (an example's topic)
        return _PARENTS.sub("", include)
    if _ATTR_LINE.match(line) or _MDX_LINE.match(line) or _BLOCK_CLOSE.match(line):
        return ""
    block = _BLOCK_OPEN.match(line)
    if block:
        kind, title = block.groups()
        return title or kind.replace("-", " ").capitalize()
    colons = _COLONS_OPEN.match(line)
    if colons:
        kind, bracketed, title = colons.groups()
        return bracketed or title or kind.replace("-", " ").capitalize()
    line = _without_attributes(line)
    if "{" not in line and "<" not in line and "[![" not in line:
        return line
    # Inline code (`<div>`, `{{ value }}`) is shown as written: only the text between code spans is cleaned.
    parts = _CODE_SPAN.split(line)
    return _without_tags([part if i % 2 else _without_badges(_SHORTCODE.sub("", part)) for i, part in enumerate(parts)])


def _without_tags(parts: list[str]) -> str:
    """The line whose ``parts`` are text and code spans in turn (``_CODE_SPAN.split``), joined
    without the tags of HTML elements and JSX components in its text parts. A block element's tag
    between two words leaves one blank (``<td>name</td><td>str</td>`` -> ``name str``); at the
    start or end of the line, or beside a blank, it leaves nothing (the line's indentation stays
    what it was: four blanks more would make it a code block). One pass over each part."""
    out: list[str] = []
    apart = False  # a block tag was dropped since the last text kept
    last = ""  # the last character kept ("" at the start of the line)

    def keep(text: str) -> None:
        nonlocal apart, last
        if not text:
            return
        if apart and last and not last.isspace() and not text[0].isspace():
            out.append(" ")
        out.append(text)
        apart, last = False, text[-1]

    for i, part in enumerate(parts):
        if i % 2 or "<" not in part:
            keep(part)
            continue
        done = 0
        for tag in _TAG.finditer(part):
            keep(part[done : tag.start()])
            apart = apart or tag.group("name") in _BLOCK_ELEMENTS
            done = tag.end()
        keep(part[done:])
    return "".join(out)


def _include(line: str) -> str | None:
    """The path a snippet include names (``{* path ... *}``, ``--8<-- "path"``, ``{! path !}``), or None."""
    star = _star_include(line) if "{*" in line else None
    if star is not None:
        return star
    found = _INCLUDE_LINE.match(line)
    return next(path for path in found.groups() if path is not None) if found else None


def _star_include(line: str) -> str | None:
    """The path of ``{* path ... *}``: the first word after ``{*``, not running into the closing
    ``*}``. (The pattern ``\\{\\*[ \\t]*(\\S+).*\\*\\}[ \\t]*$`` gave the word back a character at a
    time, reading to the end after each: quadratic on a long word and no closing, 2.1 -> 7.3 s for
    64 -> 128 KB.)"""
    end = line.rstrip(" \t")
    if not end.endswith("*}"):
        return None
    found = _STAR_INCLUDE.match(end, 0, len(end) - 2)
    return found.group(1) if found else None


def _without_attributes(line: str) -> str:
    """A heading line without the attribute list that ends it: ``## Files { #files }`` -> ``## Files``.

    The list is the line's last "{", then an optional ":", blanks, "#" or "." and no brace up to
    a "}" that only blanks follow; what stays keeps the heading's marks and the blank after them.
    String operations replace ``^( {0,3}#{1,6}[ \\t]+.*?)[ \\t]*\\{:?[ \\t]*[#.][^{}\\n]*\\}[ \\t]*$``,
    whose three ways to split a run of blanks made it cubic (a 4 KB line took 14 s, 8 KB 116 s; 52 s
    for 4 KB through `lancelot index`).
    """
    opening = ATX_OPEN.match(line)
    end = line.rstrip(" \t")
    if opening is None or not end.endswith("}"):
        return line
    brace = end.rfind("{")
    inside = end[brace + 1 : -1]
    if brace < opening.end() or "}" in inside or inside.removeprefix(":").lstrip(" \t")[:1] not in ("#", "."):
        return line
    return line[: max(opening.end(), len(line[:brace].rstrip(" \t")))]


def _markup(line: str) -> bool:
    """Whether a rule of ``_clean_line`` can apply: each needs one of these (an include: ``{* *}``,
    ``{! !}``, ``--8<--``; an attribute list or shortcode: ``{``; a tag: ``<``; a badge: ``[![``; a
    block: ``///``, ``:::``; an MDX line: its first word). Plain ``in`` tests, as most lines have none."""
    return (
        "{" in line
        or "<" in line
        or "[![" in line
        or "///" in line
        or ":::" in line
        or line.startswith(("import", "export"))
    )


def _drop_raw_blocks(text: str) -> str:
    """``text`` with each ``<style>``/``<script>`` block and each comment replaced by its line
    breaks, as ``re.sub`` with ``<(style|script)\\b[^>]*>.*?</\\1[ \\t]*>|<!--.*?-->`` (DOTALL,
    IGNORECASE) did. Once the end of one kind is missing from the rest of the text, its later
    openings are passed over: that pattern read to the end again from each of them (quadratic: 64
    KB of "<!--" took 4.3 s, 128 KB 17.8 s, 1 MB did not end in 15 minutes)."""
    out: list[str] = []
    done = at = 0  # text[:done] is in out; the next opening is looked for from at
    unclosed: set[str] = set()
    while (opening := _RAW_OPEN.search(text, at)) is not None:
        kind = opening.lastgroup or "comment"
        end = -1 if kind in unclosed else _raw_end(text, opening.end(), kind)
        if end < 0:
            unclosed.add(kind)
            at = opening.start() + 1
            continue
        out += [text[done : opening.start()], "\n" * text.count("\n", opening.start(), end)]
        done = at = end
    return "".join([*out, text[done:]])


def _raw_end(text: str, after: int, kind: str) -> int:
    """Where the raw block whose opening ends at ``after`` ends, or -1 when nothing after closes it."""
    if kind == "comment":
        end = text.find("-->", after)
        return end + 3 if end >= 0 else -1
    tag_end = text.find(">", after)  # the opening tag's own ">"
    close = _RAW_CLOSE[kind].search(text, tag_end + 1) if tag_end >= 0 else None
    return close.end() if close else -1


def _without_badges(text: str) -> str:
    """``text`` without images that are links (``[![build](badge.svg)](ci)``), as ``re.sub`` with
    ``\\[!\\[[^\\]]*\\]\\([^)]*\\)\\]\\([^)]*\\)`` did. Each "]" and ")" a badge needs is looked for
    from where the last search for it ended, never again from each "[![" (that pattern read on from
    every one: quadratic on a line of them, 0.4 -> 1.6 s for 64 -> 128 KB)."""
    if "[![" not in text:
        return text
    # Starts only move on, and each mark a badge needs lies after the one before it: the searches
    # for "]" and for ")" each go forward only (what _Next needs).
    bracket, paren = _Next(text, "]"), _Next(text, ")")
    out: list[str] = []
    done = 0
    start = text.find("[![")
    while start >= 0:
        end = _badge_end(text, start, bracket, paren)
        if end is None:  # no badge can start here or later
            break
        if end:
            out.append(text[done:start])
            done = end
        start = text.find("[![", max(end, start + 1))
    return "".join([*out, text[done:]])


def _badge_end(text: str, start: int, bracket: _Next, paren: _Next) -> int | None:
    """The end of the badge that starts at ``start`` (``[![``), 0 when none does, None when none can
    start there or later (a "]" or ")" it needs is missing from the rest of the text)."""
    alt_end = bracket(start + 3)
    if alt_end < 0:
        return None
    if not text.startswith("](", alt_end):
        return 0
    image_end = paren(alt_end + 2)
    if image_end < 0:
        return None
    if not text.startswith(")](", image_end):
        return 0
    link_end = paren(image_end + 3)
    return link_end + 1 if link_end >= 0 else None


class _Next:
    """The first ``char`` of ``text`` at or after a position, asked for positions that never go
    back: a search starts where the last one ended, so all of them read ``text`` once."""

    def __init__(self, text: str, char: str) -> None:
        self.text, self.char, self.found = text, char, -1

    def __call__(self, at: int) -> int:
        if self.found < at:
            self.found = self.text.find(self.char, at)
        return self.found
