"""The `--help` screens: usage, description, then panels of arguments, options and commands, drawn
like Typer's rich help but with the standard library only.

Why not rich: `lancelot --help` and `lancelot <cmd> --help` should cost about what importing typer
costs (tests/benchmarks/cli_speed.py). Typer's rich help imports rich.markdown, markdown-it,
rich.traceback and pygments; drawing the same panels with rich.console/table/panel still added
about 25 ms (importing rich.console and its first render) to a 50 ms budget. A help screen is boxes,
aligned columns and wrapped text, which `textwrap` does; everything it shows comes from
`reference.describe`, i.e. from the Typer app.

Width: the terminal's (`COLUMNS`, then the terminal size; `TERMINAL_WIDTH` wins, as in Typer),
at most 100 columns. Colour: only on a terminal, or with `FORCE_COLOR`/`PY_COLORS`; `NO_COLOR`
keeps bold and dim but no colours; `_TYPER_FORCE_DISABLE_TERMINAL` turns styling off.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from typing import Any

from lancelot_cli.cli.reference import ParamDoc, describe, paragraphs

MAX_WIDTH = 100
MIN_WIDTH = 40
MIN_HELP_COLUMN = 24  # narrower than this, an option's help goes on the lines below its name

# SGR codes; with NO_COLOR only the non-colour part (bold, dim) is used.
_STYLES = {
    "usage": ("", "33"),
    "title": ("1", ""),
    "dim": ("2", ""),
    "option": ("1", "36"),
    "short": ("1", "32"),
    "metavar": ("1", "33"),
    "required": ("", "31"),
    "command": ("1", "36"),
    "border": ("2", ""),
}
_OPTION_MENTION = re.compile(r"(?<![\w/.=-])--?[a-zA-Z][\w-]*")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def styling() -> tuple[bool, bool]:
    """(style at all, use colours) for stdout."""
    env = os.environ
    if env.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        return False, False
    forced = bool(env.get("FORCE_COLOR") or env.get("PY_COLORS") or env.get("GITHUB_ACTIONS"))
    on = forced or (isatty(sys.stdout) and env.get("TERM") != "dumb")
    return on, on and not env.get("NO_COLOR")


def isatty(stream: Any) -> bool:
    """True for a terminal; False for a pipe, a file, a closed or replaced stream (CliRunner's)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def width() -> int:
    forced = os.environ.get("TERMINAL_WIDTH", "")
    columns = int(forced) if forced.isdigit() else shutil.get_terminal_size((80, 24)).columns
    return max(MIN_WIDTH, min(columns, MAX_WIDTH))


class _Painter:
    def __init__(self, on: bool, colour: bool) -> None:
        self.on, self.colour = on, colour

    def __call__(self, text: str, style: str) -> str:
        if not self.on or not text:
            return text
        attrs, colour = _STYLES[style]
        codes = ";".join(code for code in (attrs, colour if self.colour else "") if code)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    def prose(self, line: str, style: str | None = None) -> str:
        """A line of help text: option names picked out, the rest in ``style``."""
        out, last = [], 0
        for match in _OPTION_MENTION.finditer(line):
            out.append(self(line[last : match.start()], style) if style else line[last : match.start()])
            out.append(self(match.group(), "option"))
            last = match.end()
        out.append(self(line[last:], style) if style else line[last:])
        return "".join(out)


def _wrap(text: str, size: int) -> list[str]:
    """Re-flow ``text`` to ``size`` columns; a paragraph starting with \\b keeps its lines."""
    if text.startswith("\b"):
        return [line for raw in text[1:].strip("\n").splitlines() for line in (textwrap.wrap(raw, size) or [""])]
    return textwrap.wrap(" ".join(text.split()), size, break_on_hyphens=False) or [""]


def _panel(title: str, rows: list[list[tuple[str, str]]], total: int, paint: _Painter) -> list[str]:
    """A rounded box as wide as ``total``; each row is its already padded (text, style) pieces."""
    inner = total - 4
    top = "╭─ " + title + " " + "─" * max(0, total - len(title) - 5) + "╮"
    lines = [paint(top[:3], "border") + paint(title, "title") + paint(top[3 + len(title) :], "border")]

    def piece(text: str, style: str) -> str:
        return paint.prose(text) if style == "prose" else paint(text, style) if style else text

    for pieces in rows:
        plain = "".join(text for text, _ in pieces)
        body = "".join(piece(text, style) for text, style in pieces)
        lines.append(paint("│", "border") + " " + body + " " * max(0, inner - len(plain)) + " " + paint("│", "border"))
    lines.append(paint("╰" + "─" * (total - 2) + "╯", "border"))
    return lines


def _columns(
    cells: list[list[str]], help_texts: list[tuple[str, str]], styles: list[str], inner: int, gap: int = 2
) -> list[list[tuple[str, str]]]:
    """Rows of aligned columns, the last one (help) wrapped into what is left of ``inner``."""
    widths = [max(len(row[i]) for row in cells) for i in range(len(styles))]
    lead = sum(w + gap for w in widths if w)
    room = inner - lead
    rows: list[list[tuple[str, str]]] = []
    for cell, (text, extra) in zip(cells, help_texts, strict=True):
        prefix: list[tuple[str, str]] = []
        for value, size, style in zip(cell, widths, styles, strict=False):  # a row may have fewer cells
            if size:
                prefix.append((value.ljust(size + gap), style))
        if room >= MIN_HELP_COLUMN:
            wrapped = _help_lines(text, extra, room)
            rows.append(prefix + wrapped[0])
            rows.extend([[(" " * lead, ""), *line] for line in wrapped[1:]])
        else:  # narrow: the help under the name, indented
            rows.append(prefix)
            rows.extend([[("    ", ""), *line] for line in _help_lines(text, extra, inner - 4)])
    return rows


def _help_lines(text: str, extra: str, size: int) -> list[list[tuple[str, str]]]:
    """Wrap help text plus its dim "[default: ...]" into lines of (text, style) pieces."""
    full = f"{text} {extra}".strip() if extra else text
    lines = _wrap(full, size) if full else [""]
    if not extra:
        return [[(line, "prose")] for line in lines]
    out, seen = [], 0
    start = len(" ".join(text.split())) + (1 if text else 0)  # where the extra begins in the re-flowed text
    for line in lines:
        begin, end = seen, seen + len(line)
        if end <= start:
            out.append([(line, "prose")])
        elif begin >= start:
            out.append([(line, "dim")])
        else:
            cut = start - begin
            out.append([(line[:cut], "prose"), (line[cut:], "dim")])
        seen = end + 1
    return out


def _extras(param: ParamDoc) -> str:
    return f"[{'; '.join(param.extras)}]" if param.extras else ""


def help_screen(command: Any, ctx: Any) -> str:
    """The `--help` screen of ``command`` in ``ctx``, styled for stdout."""
    on, colour = styling()
    paint = _Painter(on, colour)
    total = width()
    doc = describe(command, ctx)
    out = ["", " " + paint("Usage: ", "usage") + paint(f"{doc.path} {doc.usage}", "title"), ""]
    if doc.help.strip():
        for i, para in enumerate(paragraphs(doc.help)):
            out.extend(" " + paint.prose(line, "dim" if i else None) for line in _wrap(para, total - 2))
            out.append("")
    inner = total - 4
    arguments = [p for p in doc.params if p.kind == "argument"]
    options = [p for p in doc.params if p.kind == "option"]
    if arguments:
        cells = [["*" if a.required else "", a.names[0]] for a in arguments]
        rows = _columns(cells, [(a.help, _extras(a)) for a in arguments], ["required", "option"], inner)
        out.extend(_panel("Arguments", rows, total, paint))
    if options:
        cells = []
        for opt in options:
            longs = [n for n in opt.names if n.startswith("--")] + list(opt.secondary)
            shorts = [n for n in opt.names if not n.startswith("--")]
            cells.append([" / ".join(longs), ", ".join(shorts), opt.metavar or ""])
        rows = _columns(cells, [(o.help, _extras(o)) for o in options], ["option", "short", "metavar"], inner)
        out.extend(_panel("Options", rows, total, paint))
    if doc.subcommands:
        cells = [[name] for name, _ in doc.subcommands]
        rows = _columns(cells, [(summary, "") for _, summary in doc.subcommands], ["command"], inner)
        out.extend(_panel("Commands", rows, total, paint))
    if doc.epilog.strip():
        for para in paragraphs(doc.epilog):
            out.append("")
            out.extend(" " + paint.prose(line, "dim") for line in _wrap(para, total - 2))
    return "\n".join(line.rstrip() if not on else line for line in out) + "\n"


def visible(text: str) -> str:
    """``text`` without its ANSI styling (for tests and width checks)."""
    return _ANSI.sub("", text)
