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
  components (``<Tabs>``, ``<TabItem value="x">``) dropped with their text kept, images that are
  links (badges: ``[![build](...)](...)``) dropped;
- MDX ``import``/``export`` lines, Hugo shortcodes (``{{< note >}}``, ``{{% tab %}}``) and Liquid or
  Jinja tags (``{% raw %}``, ``{{ page.title }}``): dropped.

Every dropped line is kept as an empty line, so line numbers still point into the file.
"""

from __future__ import annotations

import re

from lancelot_cli.mdtext import next_fence

_HEADING_ATTRS = re.compile(r"^( {0,3}#{1,6}[ \t]+.*?)[ \t]*\{:?[ \t]*[#.][^{}\n]*\}[ \t]*$")
_PARENTS = re.compile(r"^(?:\.\.?/)+")
_ATTR_LINE = re.compile(r"^[ \t]*\{:[^{}\n]*\}[ \t]*$")
_INCLUDE_LINE = re.compile(
    r"^[ \t]*(?:\{\*[ \t]*(\S+).*\*\}"  # {* path ... *}
    r"|;?-{2}8<-{2}[ \t]*[\"']?([^\"'\s]*).*"  # --8<-- "path"
    r"|\{!>?[ \t]*(\S+?)[ \t]*!\})[ \t]*$"
)  # {! path !}
_ADMONITION = re.compile(r"^( *)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)(?:[ \t]+\"([^\"]*)\")?[ \t]*$")
_BLOCK_OPEN = re.compile(r"^[ \t]*/{3,}[ \t]*([\w-]+)(?:[ \t]*\|[ \t]*(.*?))?[ \t]*$")
_BLOCK_CLOSE = re.compile(r"^[ \t]*(?:/{3,}|:{3,})[ \t]*$")
# Docusaurus admonitions: ":::tip What You'll Learn" or ":::note[Title]" ... ":::"
_COLONS_OPEN = re.compile(r"^[ \t]*:{3,}[ \t]*([A-Za-z][\w-]*)(?:\[([^\]]*)\]|[ \t]+(.+?))?[ \t]*$")
_MDX_LINE = re.compile(r"^(import[ \t]+[\w{*'\"].*|export[ \t]+(const|default|function|let)\b.*)$")
_RAW_BLOCK = re.compile(r"<(style|script)\b[^>]*>.*?</\1[ \t]*>|<!--.*?-->", re.S | re.I)
_BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)")
# Template tags hold no braces or backslashes: LaTeX ({{\\text{O}_{2}}}) and JSON ({"a": {}}) are not tags.
_SHORTCODE = re.compile(r"\{\{[<%][^{}\\\n]*?[%>]\}\}|\{%[^{}\\\n]*?%\}|\{\{[^{}\\\n]*\}\}")
_CODE_SPAN = re.compile(r"(`+[^`]*`+)")
_HTML_ELEMENTS = (
    "a abbr address article aside audio b bdi bdo blockquote br button caption center cite code col colgroup dd "
    "del details dfn div dl dt em figcaption figure font footer h1 h2 h3 h4 h5 h6 header hr i iframe img input "
    "ins kbd label li main mark nav noscript ol p picture pre q s samp section small source span strike strong "
    "sub summary sup table tbody td tfoot th thead time tr tt u ul var video wbr"
)
_TAG = re.compile(
    r"(?<![\w.])</?(?:(?:"
    + "|".join(_HTML_ELEMENTS.split())
    + r")|[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*)(?:\s[^<>]*)?/?>"
)


def clean(text: str) -> str:
    """``text`` (a Markdown page's body, front matter already split off) as its built page reads."""
    text = _RAW_BLOCK.sub(_blank_lines, text)
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
    include = _INCLUDE_LINE.match(line)
    if include:  # the included file's name stays: it names what the page shows there (an example's topic)
        return _PARENTS.sub("", next(path for path in include.groups() if path is not None))
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
    heading = _HEADING_ATTRS.match(line)
    if heading:
        line = heading.group(1)
    if "{" not in line and "<" not in line and "[![" not in line:
        return line
    # Inline code (`<div>`, `{{ value }}`) is shown as written: only the text between code spans is cleaned.
    parts = _CODE_SPAN.split(line)
    return "".join(
        part if i % 2 else _TAG.sub("", _BADGE.sub("", _SHORTCODE.sub("", part))) for i, part in enumerate(parts)
    )


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


def _blank_lines(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")
