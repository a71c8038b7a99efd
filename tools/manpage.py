"""Man pages (roff, `man 7 man` macros) for `lancelot` and each subcommand, from `tools.generate.walk`.

click-man cannot do it for Typer 0.29: it keeps only ``click.Option`` parameters, and Typer's are
its vendored click's, so its pages have no OPTIONS section. Every argument and option is written
with its names, metavar, help and default/range/required, as `--help` shows them.
"""

from __future__ import annotations

import re

from lancelot_cli.cli.reference import CommandDoc, ParamDoc, paragraphs

GENERATED = '.\\" Generated from the Typer app by `python -m tools.generate`; do not edit.'

# Command (the root's name for the root) -> (what it does, its command lines), shown under EXAMPLES.
# tests/test_manpages.py checks that every page has some and that each option named is the command's.
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "lancelot": (
        (
            "Set up once, index a folder, then search it:",
            'lancelot init\nlancelot index ~/notes\nlancelot search "refund policy"',
        ),
    ),
    "init": (
        ("Set up interactively (database folder, API key, MCP clients):", "lancelot init"),
        ("Show what is set up, and where each setting comes from:", "lancelot init --show"),
        ("Set up without questions and without an API key:", "lancelot init --db ~/lancelot-db --no-api-key --yes"),
    ),
    "index": (
        ("Index a folder into the stored database:", "lancelot index ~/notes"),
        ("Index into a named table of ./db, text search only:", "lancelot index ./docs ./db --table docs --no-embed"),
        ("Keep the table up to date while you edit:", "lancelot index ~/notes --watch"),
        ("Index source code too, leaving out a folder:", "lancelot index . --ext py,sql --exclude 'build/'"),
    ),
    "search": (
        ("Search the documents:", 'lancelot search "refund policy"'),
        ("Three hits, as JSON Lines for a pipeline:", 'lancelot search "refund policy" --limit 3 --jsonl'),
        ("Only under a folder, text search only:", 'lancelot search "warranty" --path-prefix policies/ --type text'),
    ),
    "query": (
        ("The context block for a question:", 'lancelot query "how do refunds work?"'),
        ("A smaller block:", 'lancelot query "how do refunds work?" --budget 700'),
    ),
    "show": (
        ("Print one indexed document:", "lancelot show policies/warranty.md"),
        ("The chunks around chunk 3 of it:", "lancelot show 'policies/warranty.md#3' --before 1 --after 1"),
        ("Page 2 of a PDF:", "lancelot show manual.pdf --page 2"),
    ),
    "status": (
        ("The database, its tables and every setting:", "lancelot status"),
        ("The same as JSON:", "lancelot status --json"),
    ),
    "serve": (
        ("The MCP server on stdio (what an MCP client starts):", "lancelot serve"),
        ("On Streamable HTTP at http://127.0.0.1:8080/mcp:", "lancelot serve --http 8080"),
    ),
    "ls": (
        ("Every indexed document:", "lancelot ls"),
        ("Those under policies/:", "lancelot ls policies/"),
    ),
    "version": (
        ("The version and the MCP revisions it speaks:", "lancelot version"),
        ("With the features, as JSON:", "lancelot version --json"),
    ),
    "bench": (
        ("Score search on your questions:", "lancelot bench questions.jsonl"),
        ("The figures and every miss, as JSON:", "lancelot bench questions.jsonl --json"),
    ),
}
_OPTION_TOKEN = re.compile(r"(?<![\w/.=-])--?[a-zA-Z][\w-]*")


def page_name(doc: CommandDoc) -> str:
    """`lancelot` or `lancelot-search`: the page (and file stem) for a command."""
    return doc.path.replace(" ", "-")


def _escape(text: str) -> str:
    """Prose for a roff line: backslashes escaped, option names with real minus signs (roff `\\-`)."""
    text = text.replace("\\", "\\e")
    return _OPTION_TOKEN.sub(lambda m: m.group().replace("-", "\\-"), text)


def _literal(text: str) -> str:
    """A name (command, option, page): every hyphen a minus sign."""
    return text.replace("\\", "\\e").replace("-", "\\-")


def _line(text: str) -> str:
    text = _escape(" ".join(text.split()))
    return "\\&" + text if text[:1] in (".", "'") else text


def _block(text: str) -> list[str]:
    """Paragraphs of help text: filled paragraphs, or kept lines (.nf) after a \\b marker."""
    out: list[str] = []
    for i, para in enumerate(paragraphs(text)):
        if i:
            out.append(".PP")
        if para.startswith("\b"):
            out.append(".nf")
            out.extend(_line(raw) or "\\&" for raw in para[1:].strip("\n").splitlines())
            out.append(".fi")
        else:
            out.append(_line(para))
    return out


def _param(param: ParamDoc) -> list[str]:
    if param.kind == "argument":
        head = f"\\fI{_literal(param.names[0])}\\fR"
    else:
        head = ", ".join(f"\\fB{_literal(name)}\\fR" for name in (*param.names, *param.secondary))
        if param.metavar:
            head += f" \\fI{_literal(param.metavar)}\\fR"
    lines = [".TP", head]
    lines.extend(_block(param.help) if param.help else ["\\&"])
    if param.extras:
        lines.append(_line(f"[{'; '.join(param.extras)}]"))
    return lines


def _examples(examples: tuple[tuple[str, str], ...]) -> list[str]:
    """An EXAMPLES section: each command line kept as typed (no filling), under what it does."""
    if not examples:
        return []
    lines = [".SH EXAMPLES"]
    for what, commands in examples:
        lines.extend([".PP", _line(what), ".RS 4", ".nf", *map(_literal_line, commands.splitlines()), ".fi", ".RE"])
    return lines


def _literal_line(text: str) -> str:
    """A line shown as typed: backslashes and every hyphen escaped, a leading "." or "'" guarded."""
    text = _literal(text)
    return "\\&" + text if text[:1] in (".", "'") else text


def render(doc: CommandDoc, root: CommandDoc, version: str, commands: list[CommandDoc]) -> str:
    """The roff source of the page for ``doc``; ``root`` gives the exit status and the page list."""
    name = page_name(doc)
    lines = [
        GENERATED,
        f'.TH "{name.upper()}" "1" "" "lancelot {version}" "User Commands"',
        ".SH NAME",
        f"{_literal(name)} \\- {_line(doc.summary)}",
        ".SH SYNOPSIS",
        f".B {doc.path}",
        " ".join(
            f"[\\fI{piece[1:-1]}\\fR]"
            if piece.startswith("[") and piece.endswith("]")
            else f"\\fI{_literal(piece)}\\fR"
            for piece in doc.usage.split()
        ),
        ".SH DESCRIPTION",
    ]
    lines.extend(_block(doc.help))
    arguments = [p for p in doc.params if p.kind == "argument"]
    options = [p for p in doc.params if p.kind == "option"]
    if arguments:
        lines.append(".SH ARGUMENTS")
        for param in arguments:
            lines.extend(_param(param))
    if options:
        lines.append(".SH OPTIONS")
        for param in options:
            lines.extend(_param(param))
    if doc.subcommands:
        lines.append(".SH COMMANDS")
        for sub, summary in doc.subcommands:
            lines.extend(
                [
                    ".TP",
                    f"\\fB{_literal(sub)}\\fR",
                    _line(summary),
                    f"See \\fB{_literal(root.path + '-' + sub)}\\fR(1).",
                ]
            )
    if doc.epilog.strip() and doc is not root:
        lines.append(".SH NOTES")
        lines.extend(_block(doc.epilog))
    lines.extend(_examples(EXAMPLES.get(doc.name, ())))
    if root.epilog.strip():
        lines.append(".SH EXIT STATUS")
        lines.extend(_block(re.sub(r"^\s*Exit status:\s*", "", root.epilog)))
    lines.append(".SH SEE ALSO")
    lines.append(", ".join(f"\\fB{_literal(page_name(c))}\\fR(1)" for c in commands if c is not doc) + ".")
    return "\n".join(lines) + "\n"


def pages(commands: list[CommandDoc], version: str) -> dict[str, str]:
    """File name -> roff source, for the root (first) and every subcommand."""
    root = commands[0]
    return {f"{page_name(doc)}.1": render(doc, root, version, commands) for doc in commands}
