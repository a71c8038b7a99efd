"""The command line described as data: commands, their arguments and options (names, metavar, help,
default). One source for the `--help` screens (`cli/helpfmt.py`) and, through `tools.generate.walk`, the
man pages and the docs test, all read from the Typer app itself so they cannot drift apart.

Stdlib and typer only: `lancelot --help` goes through here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# What typer appends to a help text: two spaces, then "[default: x; 1<=x<=200; required]".
_EXTRA = re.compile(r"(?:^|  )\[(?P<extra>[^\[\]]*)\]$")


@dataclass(frozen=True)
class ParamDoc:
    """One argument or option as a person reads it."""

    kind: str  # "argument" or "option"
    names: tuple[str, ...]  # ("--limit", "-n"), long first; ("QUERY",) for an argument
    secondary: tuple[str, ...]  # the "off" switch of a --x/--no-x pair
    metavar: str | None  # "N", "PATH", "<auto|text|vector|hybrid>"; None for a flag
    help: str  # the help text without the bracketed extras
    extras: tuple[str, ...]  # "default: auto", "1<=x<=200", "required"
    required: bool

    @property
    def default(self) -> str | None:
        for extra in self.extras:
            if extra.startswith("default: "):
                return extra[len("default: ") :]
        return None


@dataclass(frozen=True)
class CommandDoc:
    """A command (or the root group) with what its help shows."""

    path: str  # "lancelot" or "lancelot search"
    name: str  # "lancelot" or "search"
    usage: str  # "[OPTIONS] QUERY"
    help: str  # the full help text (paragraphs separated by blank lines)
    epilog: str
    params: tuple[ParamDoc, ...]
    subcommands: tuple[tuple[str, str], ...] = field(default=())  # (name, summary) for a group

    @property
    def summary(self) -> str:
        """The first paragraph of the help, on one line."""
        return " ".join(paragraphs(self.help)[0].split()) if self.help.strip() else ""

    def option_names(self) -> set[str]:
        return {name for p in self.params if p.kind == "option" for name in (*p.names, *p.secondary)}


def paragraphs(text: str) -> list[str]:
    """Help text split into paragraphs (blank-line separated); leading indentation removed."""
    import inspect

    cleaned = inspect.cleandoc(text or "")
    return [part.strip("\n") for part in re.split(r"\n\s*\n", cleaned) if part.strip()] or [""]


def param_doc(param: Any, ctx: Any) -> ParamDoc | None:
    """Describe a Typer parameter from its own help record (what `--help` has always shown)."""
    record = param.get_help_record(ctx)
    if record is None:  # hidden
        return None
    text = record[1] or ""
    extras: tuple[str, ...] = ()
    match = _EXTRA.search(text)
    if match:
        extras = tuple(part.strip() for part in match.group("extra").split(";"))
        text = text[: match.start()]
    if param.param_type_name == "argument":
        name = param.metavar or param.name.upper()
        return ParamDoc("argument", (name,), (), None, text.strip(), extras, bool(param.required))
    long_first = sorted(param.opts, key=lambda opt: (not opt.startswith("--"), opt))
    metavar = None if param.is_flag or param.count else param.display_type_rich(ctx)
    return ParamDoc(
        "option", tuple(long_first), tuple(param.secondary_opts), metavar, text.strip(), extras, bool(param.required)
    )


def usage(command: Any, ctx: Any) -> str:
    """`[OPTIONS] SRC DB` / `[OPTIONS] COMMAND [ARGS]...`: metavars in capitals, optional ones in brackets."""
    pieces = ["[OPTIONS]"]
    for param in command.get_params(ctx):
        if param.param_type_name == "argument":
            name = param.metavar or param.name.upper()
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def describe(command: Any, ctx: Any) -> CommandDoc:
    """What `--help` shows for ``command`` in context ``ctx``."""
    params = tuple(doc for doc in (param_doc(p, ctx) for p in command.get_params(ctx)) if doc is not None)
    subcommands: tuple[tuple[str, str], ...] = ()
    if hasattr(command, "list_commands"):
        rows = []
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                rows.append((name, " ".join(paragraphs(sub.help or "")[0].split())))
        subcommands = tuple(rows)
    return CommandDoc(
        ctx.command_path,
        ctx.info_name or command.name,
        usage(command, ctx),
        command.help or "",
        command.epilog or "",
        params,
        subcommands,
    )
