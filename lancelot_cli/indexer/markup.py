"""reStructuredText and AsciiDoc pages as Markdown, for search (issue 47).

Read as code, a ``.rst`` ADR became 60-line windows titled ``path:1-37`` with its markup left in.
Here a page becomes what its built page says, in the Markdown the rest of the indexer reads: section
titles as ``#`` headings (the first one is the title), roles and links as their text, code as fenced
blocks, admonitions as their label and text, and what a reader never sees (``toctree``, ``include``,
comments, targets, substitution definitions, AsciiDoc attributes and preprocessor lines) dropped.

Why line by line and not a parser: docutils is not a dependency, and alone it does not know Sphinx's
directives and roles (each becomes an error node holding the raw text); this is cleanup for search,
not rendering, and a line-based pass never fails on a page, known or not. Unknown directives keep
their argument and body as text.

Line numbers: every input line gives one output line (a dropped line stays as an empty one, a
fence takes the place of a directive, a delimiter or a blank), so ``path:line`` from the Markdown
points into the file. One case adds a line: a code block that ends without the blank line reST
asks for (its closing fence), and a block left open at the end of the file.

Each pattern reads a line once from each place it may start (no nested quantifiers, and every
scan stops at the next mark of its kind), so hostile lines cost linear time (issue 37).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lancelot_cli.mdtext import ATX_OPEN

# -- shared ------------------------------------------------------------------------------------------

_FENCE_LIKE = re.compile(r" {0,3}(`{3,})")


def _lines(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [line.expandtabs(8) if "\t" in line else line for line in text.split("\n")]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fence(content: list[str]) -> str:
    """A backtick fence longer than any fence-like line of ``content`` (a Markdown sample inside)."""
    longest = max((len(m.group(1)) for m in map(_FENCE_LIKE.match, content) if m), default=2)
    return "`" * max(3, longest + 1)


def _not_heading(line: str) -> str:
    """A prose line that would read as a Markdown heading ("# of users"), escaped."""
    if "#" in line[:4] and ATX_OPEN.match(line):
        cut = _indent(line)
        return f"{line[:cut]}\\{line[cut:]}"
    return line


@dataclass
class _Block:
    """A directive, literal block or delimited block whose lines are being read."""

    indent: int  # reST: the lines of the block are indented more than this
    mode: str  # "drop", "code" or "keep"
    start: int  # its first line in the output
    lang: str = ""
    strip: int | None = None  # the indentation of its content, from the first line of it
    opened: int = -1  # the output line of a code block's opening fence
    last: int = -1  # the output line of a code block's last line
    options: bool = False  # directive options (":linenos:") may still follow


def _close_code(out: list[str], block: _Block) -> None:
    """Close a code block: its fence goes on the first blank line after its last line (appended
    when there is none), and both fences get longer than any fence inside."""
    if block.opened < 0:
        return
    fence = _fence(out[block.opened + 1 : block.last + 1])
    out[block.opened] = fence + block.lang
    after = block.last + 1
    if after < len(out) and not out[after]:
        out[after] = fence
    else:
        out.append(fence)


def _open_code(out: list[str], block: _Block) -> None:
    """Open a code block at its first line of content: the fence takes the blank line before it (or
    the directive's own line), else a line is added."""
    if out and not out[-1] and len(out) - 1 >= block.start:
        block.opened = len(out) - 1
        out[-1] = "```"
    else:
        block.opened = len(out)
        out.append("```")


# -- reStructuredText --------------------------------------------------------------------------------

_ADORNMENT = frozenset("=-~^\"'`#*+:._")
_EXPLICIT = re.compile(r"( *)\.\.(?: +|$)")
_DIRECTIVE = re.compile(r"([\w][\w:.+-]*) *::(?: +(.*)|$)")
_OPTION = re.compile(r":[\w-][\w. -]*:(?: |$)")
_FIELD = re.compile(r"( *):((?:[^:`\\]|\\.)+):(?: +|$)")
_SUBSTITUTION_DEF = re.compile(r" *\.\. +\|([^|]+)\| +(\w[\w:-]*)::(?: +(.*))?")
_LITERAL = re.compile(r"``(.+?)``")  # the next "``" ends it: each start reads on to the next one only
_ROLE = re.compile(r":((?:[\w.+-]++:)++)(?:`([^`]*)`)?")
_INTERPRETED = re.compile(r"`([^`]+)`(__?|:[\w.+-]+:)?")
_SUBSTITUTION = re.compile(r"(?<![\w|])\|([^|\s](?:[^|\n]*[^|\s])?)\|(?:__?)?(?![\w|])")
_FOOTNOTE_REF = re.compile(r" ?\[[#*]?[\w.-]*\]_")
_NAMED_REF = re.compile(r"(?<!\w)([^\W_]+)__?(?!\w)")
_CODE_DIRECTIVES = {
    "code-block": "",
    "code": "",
    "sourcecode": "",
    "testcode": "python",
    "doctest": "python",
    "ipython": "python",
    "jupyter-execute": "python",
    "testoutput": "",
    "parsed-literal": "",
    "prompt": "",
    "math": "",
    "productionlist": "",
}
_DROPPED = frozenset(
    "toctree include literalinclude contents index meta highlight raw sectnum image autosummary tabularcolumns "
    "default-role default-domain currentmodule module role title header footer target-notes graphviz digraph "
    "graph inheritance-diagram uml mermaid plantuml spelling:word-list footbibliography bibliography".split()
)
_MARKERS = frozenset("only ifconfig container class rst-class cssclass compound tabs tab-set grid".split())
_LABELS = {
    "note": "Note",
    "warning": "Warning",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "caution": "Caution",
    "danger": "Danger",
    "attention": "Attention",
    "error": "Error",
    "todo": "Todo",
    "seealso": "See also",
}
_VERSIONS = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
_FILE_FIELDS = frozenset({"orphan", "nosearch", "nocomments", "tocdepth"})  # Sphinx's file-wide settings


def rst_to_markdown(text: str) -> tuple[str | None, str]:
    """(title, Markdown) of a reStructuredText page: its first section title, and the page with
    titles as ``#`` headings in order of their adornment styles, roles and links as their text,
    code as fenced blocks, admonitions kept as text and Sphinx's navigation and comments dropped.
    One output line per input line (see the module's docstring)."""
    lines = _lines(text)
    return _Rst(lines, _substitutions(lines)).run()


def _substitutions(lines: list[str]) -> dict[str, str]:
    """``.. |name| replace:: text`` definitions: name -> text ("" for images and other kinds)."""
    found: dict[str, str] = {}
    for line in lines:
        if "|" not in line or ".." not in line:
            continue
        match = _SUBSTITUTION_DEF.fullmatch(line.rstrip())
        if match:
            name, kind, value = match.groups()
            found[name.strip()] = (value or "").strip() if kind in ("replace", "unicode") else ""
    return found


class _Rst:
    """One page's conversion: the lines read, the output, open blocks and the title styles seen."""

    def __init__(self, lines: list[str], substitutions: dict[str, str]) -> None:
        self.lines = lines
        self.subs = substitutions
        self.out: list[str] = []
        self.stack: list[_Block] = []
        self.styles: list[tuple[str, bool]] = []  # (character, overlined), in order of first use
        self.title: str | None = None
        self.literal_after: int | None = None  # a "::" paragraph's indentation: a literal block may follow
        self.paragraph_indent = 0

    def run(self) -> tuple[str | None, str]:
        i = 0
        while i < len(self.lines):
            i += self._step(i)
        while self.stack:
            self._pop()
        return self.title, "\n".join(self.out)

    def _step(self, i: int) -> int:
        """Read line ``i`` (and the adornments of a section title there): how many lines were read."""
        line = self.lines[i]
        blank = not line.strip()
        indent = _indent(line)
        if not blank:
            while self.stack and indent <= self.stack[-1].indent:
                self._pop()
            self._literal_block(indent)
        top = self.stack[-1] if self.stack else None
        if top is not None and top.options:
            if not blank and _OPTION.match(line, indent):
                self.out.append("")
                return 1
            top.options = False
        if top is not None and top.mode != "keep":
            self._block_line(top, line, blank, indent)
            return 1
        if blank:
            self.out.append("")
            return 1
        if top is None:
            taken = self._section(i)
            if taken:
                return taken
        if not self.out or not self.out[-1]:
            self.paragraph_indent = indent
        cut = 0
        if top is not None:  # the body of a kept directive, dedented
            top.strip = indent if top.strip is None else top.strip
            cut = min(indent, top.strip)
        self.out.append(self._prose(line, indent, cut, i))
        return 1

    def _pop(self) -> None:
        block = self.stack.pop()
        if block.mode == "code":
            _close_code(self.out, block)

    def _literal_block(self, indent: int) -> None:
        """After a "::" paragraph, a line indented more than it starts a literal block."""
        after, self.literal_after = self.literal_after, None
        if after is not None and indent > after and not (self.stack and self.stack[-1].mode != "keep"):
            start = len(self.out) - 1
            while start > 0 and not self.out[start]:
                start -= 1
            self.stack.append(_Block(after, "code", start))

    def _block_line(self, block: _Block, line: str, blank: bool, indent: int) -> None:
        """A line inside a dropped block (empty) or a code block (dedented, fence opened at the first)."""
        if block.mode == "drop" or blank:
            self.out.append("")
            return
        if block.opened < 0:
            _open_code(self.out, block)
            block.strip = indent
        self.out.append(line[min(indent, block.strip or 0) :])
        block.last = len(self.out) - 1

    def _section(self, i: int) -> int:
        """Lines taken by a section title at ``i`` (0: none): the title as a heading, adornments empty."""
        lines = self.lines
        if i > 0 and lines[i - 1].strip() and self.out[-1].strip():  # a title starts after a blank line
            return 0
        line = lines[i]
        over = _adornment(line)
        if over and i + 2 < len(lines):
            text = lines[i + 1].strip()
            under = _adornment(lines[i + 2])
            if text and under == over and min(len(line.rstrip()), len(lines[i + 2].rstrip())) >= len(text):
                self.out += ["", self._heading(text, (over, True)), ""]
                return 3
        if over or line[0] == " " or i + 1 >= len(lines) or line.startswith(".. "):
            return 0
        under = _adornment(lines[i + 1])
        if under and len(lines[i + 1].rstrip()) >= len(line.rstrip()):
            self.out += [self._heading(line.strip(), (under, False)), ""]
            return 2
        return 0

    def _heading(self, text: str, style: tuple[str, bool]) -> str:
        if style not in self.styles:
            self.styles.append(style)
        name = _not_heading(self._inline(text)).strip()
        if self.title is None:
            self.title = name
        return "#" * min(self.styles.index(style) + 1, 6) + " " + name

    def _prose(self, line: str, indent: int, cut: int, i: int) -> str:
        """One line of text, or the first line of explicit markup (its block is opened here)."""
        explicit = _EXPLICIT.match(line)
        if explicit:
            following = self.lines[i + 1] if i + 1 < len(self.lines) else ""
            return self._explicit(line[explicit.end() :].rstrip(), indent, not following.strip())
        body = line[cut:].rstrip()
        stripped = body.lstrip()
        if (_adornment(stripped) and len(stripped) >= 3) or _table_rule(stripped):
            return ""  # a transition, a stray adornment, a table's border
        if (stripped.startswith("| ") and not stripped.endswith("|")) or stripped == "|":  # a line block
            body = body[: len(body) - len(stripped)] + stripped[2:]
        field = _FIELD.match(body)
        if field:
            name = field.group(2)
            if name.strip().lower() in _FILE_FIELDS:
                return ""
            body = f"{field.group(1)}{name}: {body[field.end() :]}".rstrip()
        if body.endswith("::") and (i + 1 >= len(self.lines) or not self.lines[i + 1].strip()):
            self.literal_after = min(self.paragraph_indent, indent)
            body = body[:-1] if body[-3:-2] not in ("", " ") else body[:-2].rstrip()
        return _not_heading(self._inline(body))

    def _explicit(self, rest: str, indent: int, then_blank: bool) -> str:
        """``.. `` markup: a directive, a target, a substitution, a footnote, or a comment."""
        directive = _DIRECTIVE.match(rest)
        if directive:
            return self._directive(directive.group(1).lower(), (directive.group(2) or "").strip(), indent)
        if not rest and then_blank:  # an empty comment: it ends what came before and holds nothing
            return ""
        if rest.startswith("[") and "]" in rest:  # a footnote or citation: its text stays
            self.stack.append(_Block(indent, "keep", len(self.out)))
            return self._inline(rest[rest.index("]") + 1 :].strip())
        # a target (".. _label:"), a substitution definition, or a comment: dropped with what it holds
        self.stack.append(_Block(indent, "drop", len(self.out)))
        return ""

    def _directive(self, name: str, argument: str, indent: int) -> str:
        base = name.rsplit(":", 1)[-1] if name not in _DROPPED else name
        start = len(self.out)
        if name in _DROPPED or base in _DROPPED:
            self.stack.append(_Block(indent, "drop", start))
            return ""
        if base in _CODE_DIRECTIVES:
            lang = argument.split()[0] if argument and base in ("code-block", "code", "sourcecode") else ""
            self.stack.append(_Block(indent, "code", start, lang=lang or _CODE_DIRECTIVES[base], options=True))
            return ""
        self.stack.append(_Block(indent, "keep", start, options=True))
        if base in _MARKERS:
            return ""
        if base in _VERSIONS:
            version, _, why = argument.partition(" ")
            label = f"{_VERSIONS[base]} {version}".strip()
            return _not_heading(self._inline(f"{label}: {why.strip()}" if why.strip() else label))
        if base in _LABELS:
            return _not_heading(self._inline(f"{_LABELS[base]}: {argument}" if argument else _LABELS[base]))
        if base == "figure":
            return ""  # its argument is the image's file; its caption is its body
        return _not_heading(self._inline(argument))

    def _inline(self, text: str) -> str:
        """Roles, links, substitutions and references as their text; ``literals`` as Markdown code."""
        if not any(mark in text for mark in "`|_\\"):
            return text
        parts = _LITERAL.split(text)
        return "".join(f"`{part}`" if n % 2 else self._inline_text(part) for n, part in enumerate(parts))

    def _inline_text(self, text: str) -> str:
        if ":" in text and "`" in text:
            text = _ROLE.sub(_role, text)
        if "`" in text:
            text = _INTERPRETED.sub(_interpreted, text)
        if "|" in text:
            text = _SUBSTITUTION.sub(lambda m: self.subs.get(m.group(1), m.group(1)), text)
        if "_" in text:
            text = _NAMED_REF.sub(r"\1", _FOOTNOTE_REF.sub("", text))
        return text.replace("\\ ", "") if "\\ " in text else text


def _adornment(line: str) -> str | None:
    """The character of a line of one repeated punctuation character (``=====``), or None."""
    end = line.rstrip()
    if len(end) < 2 or end[0] not in _ADORNMENT or end in ("::", ".."):
        return None
    return end[0] if end.count(end[0]) == len(end) else None


def _table_rule(stripped: str) -> bool:
    """A grid table's border (``+---+---+``) or a simple table's (``=====  =====``)."""
    if stripped[:1] == "+" and len(stripped) > 2:
        return not stripped.strip("+-=:")
    return stripped[:1] == "=" and " " in stripped and not stripped.replace(" ", "").strip("=")


def _target_text(content: str) -> str:
    """What a role or link shows: the label of ``label <target>``, the last part of ``~a.b.C``."""
    content = content.strip()
    if content.endswith(">") and "<" in content:
        label = content[: content.rfind("<")].strip()
        return label or content[content.rfind("<") + 1 : -1]
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content.removeprefix("!")


def _role(match: re.Match[str]) -> str:
    content = match.group(2)
    return match.group(0) if content is None else _target_text(content)


def _interpreted(match: re.Match[str]) -> str:
    """`` `text <url>`_ `` -> text; `` `text`:role: `` -> text; `` `text` `` stays as code."""
    content, after = match.group(1), match.group(2)
    if after is None:
        return match.group(0)
    return _target_text(content)


# -- AsciiDoc ----------------------------------------------------------------------------------------

_ADOC_HEADING = re.compile(r"(={1,6}|#{1,6}) +(\S.*)")
_ADOC_ATTRIBUTE = re.compile(r":!?\w[\w-]*!?:(?: +(.*))?")
_ADOC_PREPROCESSOR = re.compile(r"(?:include|ifdef|ifndef|ifeval|endif|toc|image|video|audio)::[^\[]*\[[^\]]*\]")
_ADOC_BLOCK_ATTRIBUTES = re.compile(r"\[[^\[\]]*\]|\[\[[^\[\]]*\]\]")
_ADOC_XREF = re.compile(r"<<([^<>,\n]*)(?:,([^<>\n]*))?>>")
_ADOC_MACRO = re.compile(
    r"\b(?:(link|xref|mailto|kbd|btn|footnote|pass|image|icon|menu|anchor|indexterm2?|stem|latexmath|asciimath):"
    r"|((?:https?|ftp|irc|file)://))([^\s\[\]]*)\[([^\[\]\n]*)\]"
)
_ADOC_ATTRIBUTE_REF = re.compile(r"\{([\w-]+)\}")
_ADOC_BUILTIN = {
    "nbsp": " ",
    "sp": " ",
    "empty": "",
    "zwsp": "",
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "plus": "+",
    "vbar": "|",
    "caret": "^",
    "tilde": "~",
    "apos": "'",
    "quot": '"',
    "startsb": "[",
    "endsb": "]",
    "two-colons": "::",
    "deg": "°",
}
_ADOC_ADMONITIONS = {"NOTE": "Note", "TIP": "Tip", "IMPORTANT": "Important", "WARNING": "Warning", "CAUTION": "Caution"}
_ADOC_CODE = ("----", "....")  # listing and literal delimiters (any run of four or more)
_ADOC_DROPPED = ("////", "++++")  # comments and passthrough (raw HTML)
_ADOC_KEPT = ("====", "****", "____", "--", "|===", ",===", ":===", "!===")


def asciidoc_to_markdown(text: str) -> tuple[str | None, str]:
    """(title, Markdown) of an AsciiDoc page: the ``= Title`` (else its first section title), and
    the page with ``==`` sections as ``##`` headings, listings as fenced code, admonitions kept,
    cross references and links as their text, and attribute entries, comments and preprocessor
    lines (``include::``, ``ifdef::``, ``toc::[]``) dropped. One output line per input line."""
    lines = _lines(text)
    return _Adoc(dict(_attribute_entries(lines))).run(lines)


def _attribute_entries(lines: list[str]) -> list[tuple[str, str]]:
    """(name, value) of each attribute entry (``:toc: left``), in order; an unset (``:!name:``) is left out."""
    found = []
    for line in lines:
        match = _ADOC_ATTRIBUTE.fullmatch(line.rstrip()) if line.startswith(":") else None
        if match and "!" not in match.group(0).split(":", 2)[1]:
            found.append((match.group(0).split(":", 2)[1], (match.group(1) or "").strip()))
    return found


def asciidoc_attributes(text: str) -> dict[str, str]:
    """The attribute entries of an AsciiDoc page, names lower-cased (``:Status: Accepted`` ->
    {"status": "Accepted"}): what its Markdown leaves out, for ``decisions`` or columns."""
    return {name.lower(): value for name, value in _attribute_entries(_lines(text))}


class _Adoc:
    """One AsciiDoc page's conversion: the output, the open delimited blocks, the next block's style."""

    def __init__(self, attributes: dict[str, str]) -> None:
        self.attributes = attributes
        self.out: list[str] = []
        self.stack: list[tuple[str, _Block]] = []  # (delimiter, block)
        self.lang = ""  # from "[source,python]": the language of the next listing
        self.title: str | None = None
        self.first_heading: str | None = None

    def run(self, lines: list[str]) -> tuple[str | None, str]:
        for line in lines:
            self._line(line.rstrip())
        while self.stack:
            _, block = self.stack.pop()
            if block.mode == "code":
                _close_code(self.out, block)
        return self.title or self.first_heading, "\n".join(self.out)

    def _line(self, line: str) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and line == top[0]:  # the block's closing delimiter
            self.stack.pop()
            if top[1].mode == "code":
                top[1].last = len(self.out) - 1
                self.out.append("")
                _close_code(self.out, top[1])
            else:
                self.out.append("")
            return
        if top is not None and top[1].mode != "keep":
            self._block_line(top[1], line)
            return
        delimiter = _delimiter(line)
        if delimiter is not None:
            self._open(line, delimiter)
            return
        self.out.append(self._text(line))

    def _block_line(self, block: _Block, line: str) -> None:
        if block.mode == "drop":
            self.out.append("")
            return
        self.out.append(line)
        block.last = len(self.out) - 1

    def _open(self, line: str, kind: str) -> None:
        start = len(self.out)
        if kind == "code":
            block = _Block(0, "code", start, lang=self.lang, opened=start)
            self.out.append("```")
            block.last = start
        else:
            block = _Block(0, kind, start)
            self.out.append("")
        self.stack.append((line, block))
        self.lang = ""

    def _text(self, line: str) -> str:
        stripped = line.strip()
        if not stripped:
            return ""
        if stripped.startswith("//") or stripped in ("'''", "<<<", "+"):
            return ""  # a comment, a break, a list continuation
        heading = _ADOC_HEADING.fullmatch(line)
        if heading:
            return self._heading(len(heading.group(1)), heading.group(2))
        if line.startswith(":") and _ADOC_ATTRIBUTE.fullmatch(line):
            return ""
        if "::" in line and _ADOC_PREPROCESSOR.fullmatch(stripped):
            return ""
        if line.startswith("[") and _ADOC_BLOCK_ATTRIBUTES.fullmatch(line):
            return self._block_attributes(line[1:-1])
        if line.startswith(".") and len(line) > 1 and line[1] not in ". ":
            line = line[1:]  # a block title
        if line.endswith(" +"):
            line = line[:-2]  # a hard line break
        return _not_heading(self._inline(line))

    def _heading(self, level: int, name: str) -> str:
        bare = name.rstrip("=")
        name = self._inline(bare.rstrip() if bare != name and bare.endswith(" ") else name)  # "== A ==" -> "A"
        if level == 1 and self.title is None:
            self.title = name
        if self.first_heading is None:
            self.first_heading = name
        return "#" * level + " " + name

    def _block_attributes(self, inside: str) -> str:
        """``[source,python]`` (the next listing's language), ``[NOTE]`` (its label), anchors: a line."""
        first, _, rest = inside.partition(",")
        style = first.strip().lower()
        if style == "source":
            self.lang = rest.split(",")[0].strip()
        return _ADOC_ADMONITIONS.get(first.strip(), "")

    def _inline(self, text: str) -> str:
        if "<<" in text:
            text = _ADOC_XREF.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
        if "[" in text:
            text = _ADOC_MACRO.sub(_adoc_macro, text)
        if "{" in text:
            text = _ADOC_ATTRIBUTE_REF.sub(self._attribute, text)
        return text

    def _attribute(self, match: re.Match[str]) -> str:
        name = match.group(1)
        if name in self.attributes:
            return self.attributes[name]
        return _ADOC_BUILTIN.get(name, match.group(0))


def _delimiter(line: str) -> str | None:
    """The kind of delimited block a line opens ("code", "drop", "keep"), or None."""
    if len(line) < 2 or line[0] not in "-.=/+*_|,:!":
        return None
    if line in _ADOC_KEPT:
        return "keep"
    if len(line) >= 4 and line.count(line[0]) == len(line):
        if line[:4] in _ADOC_CODE:
            return "code"
        if line[:4] in _ADOC_DROPPED:
            return "drop"
        if line[:4] in _ADOC_KEPT:
            return "keep"
    return None


def _adoc_macro(match: re.Match[str]) -> str:
    """``link:url[text]`` -> text (the url when there is none), ``kbd:[Ctrl+C]`` -> Ctrl+C."""
    name, scheme, target, text = match.groups()
    if "=" in text:  # attributes follow the text: "text,window=_blank"
        text = text.split(",")[0]
    text = text.strip().strip('"')
    if name == "menu":
        return " > ".join(part for part in [target, *text.split(">")] if part.strip())
    if name in ("anchor", "indexterm", "indexterm2") and not text:
        return ""
    if name == "image":
        return text
    return text or (scheme or "") + target
