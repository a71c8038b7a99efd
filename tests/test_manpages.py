"""Man pages (`man/`): one per command plus `lancelot.1`, generated from the Typer app, checked for
drift, complete (every argument and option with its metavar, help and default, read here straight
from the app's parameters), and valid roff (`groff -man -ww -z`, else `man --warnings -l`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import typer

from lancelot_cli.cli.app import app
from tests.conftest import REPO
from tools import generate

MAN = REPO / "man"


def commands() -> list[tuple[str, Any, Any]]:
    """(page file, command, context) for the root and each subcommand, from the app."""
    root = typer.main.get_command(app)
    ctx = root.make_context("lancelot", [], resilient_parsing=True)
    out = [("lancelot.1", root, ctx)]
    for name in root.list_commands(ctx):
        sub = root.get_command(ctx, name)
        out.append((f"lancelot-{name}.1", sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True)))
    return out


def roff_text(text: str) -> str:
    """A roff source as plain words: minus escapes and font changes removed, lines joined."""
    text = text.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    text = re.sub(r"\\f[BIRP]", "", text)
    return " ".join(line for line in text.splitlines() if not line.startswith('.\\"'))


def test_one_page_per_command_and_no_stale_pages() -> None:
    expected = {page for page, _, _ in commands()}
    assert {p.name for p in MAN.glob("*.1")} == expected


@pytest.mark.parametrize("page", [page for page, _, _ in commands()])
def test_page_is_up_to_date(page: str) -> None:
    wanted = generate.man_pages()[page]
    assert (MAN / page).read_text(encoding="utf-8") == wanted, (
        f"man/{page} is out of date; run: python -m tools.generate"
    )


@pytest.mark.parametrize(("page", "command", "ctx"), commands(), ids=[p for p, _, _ in commands()])
def test_page_documents_every_argument_and_option(page: str, command: Any, ctx: Any) -> None:
    source = (MAN / page).read_text(encoding="utf-8")
    text = roff_text(source)
    assert f'.TH "{page[:-2].upper()}" "1"' in source
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
        assert f".SH {section}" in source, section
    for param in command.get_params(ctx):
        if param.hidden:
            continue
        if param.param_type_name == "argument":
            name = param.metavar or param.name.upper()
            assert ".SH ARGUMENTS" in source
            assert f"\\fI{name.replace('-', chr(92) + '-')}\\fR" in source, name
        else:
            for opt in (*param.opts, *param.secondary_opts):
                assert f"\\fB{opt.replace('-', chr(92) + '-')}\\fR" in source, opt
            if param.metavar:
                assert param.metavar in text, (param.name, param.metavar)
        if param.help:
            assert " ".join(param.help.split()) in text, (param.name, param.help)
        default = param.default
        if param.show_default and default not in (None, False, "") and not callable(default):
            shown = default.value if hasattr(default, "value") else default
            assert f"default: {shown}" in text, (param.name, shown)
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            assert f"\\fB{name}\\fR" in source and f"lancelot\\-{name}\\fR(1)" in source, name


@pytest.mark.parametrize(("page", "command", "ctx"), commands(), ids=[p for p, _, _ in commands()])
def test_page_has_examples_with_the_commands_own_options(page: str, command: Any, ctx: Any) -> None:
    """Issue 45 item 10: no man page had an EXAMPLES section."""
    from tools.manpage import EXAMPLES

    source = (MAN / page).read_text(encoding="utf-8")
    assert ".SH EXAMPLES" in source
    section = source.split(".SH EXAMPLES", 1)[1].split("\n.SH ", 1)[0]
    shown = [line for line in section.splitlines() if line.startswith("lancelot")]
    assert shown, page
    name = command.name if page != "lancelot.1" else "lancelot"
    root = typer.main.get_command(app)
    root_options = {opt for p in root.get_params(ctx.find_root()) for opt in p.opts}
    options = {opt for p in command.get_params(ctx) for opt in (*p.opts, *p.secondary_opts)} | root_options
    for _, lines in EXAMPLES[name]:
        for line in lines.splitlines():
            assert line.split()[:2] == ["lancelot", name] or name == "lancelot", line
            for word in line.split():
                if word.startswith("-"):
                    assert word in options, (page, word)
            # Shown as typed: every hyphen a minus sign, nothing else changed.
            assert line.replace("-", "\\-") in shown, line


def validators() -> list[list[str]]:
    tools = []
    if shutil.which("groff"):
        tools.append(["groff", "-man", "-ww", "-z"])
    if shutil.which("man"):
        tools.append(["man", "--warnings", "-l"])
    return tools


@pytest.mark.slow
@pytest.mark.skipif(not validators(), reason="neither groff nor man is installed")
@pytest.mark.parametrize("page", sorted(p.name for p in MAN.glob("*.1")))
def test_page_is_valid_roff(page: str) -> None:
    for tool in validators():
        proc = subprocess.run(
            [*tool, str(MAN / page)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LC_ALL": "C.UTF-8"},
        )
        assert proc.returncode == 0, (tool, proc.stderr)
        assert proc.stderr.strip() == "", (tool, proc.stderr)


def test_escaping_keeps_roff_control_characters_out_of_line_starts() -> None:
    from tools.manpage import _line

    assert _line(".hidden") == "\\&.hidden"
    assert _line("'quoted") == "\\&'quoted"
    assert _line("a \\ b --db -n") == "a \\e b \\-\\-db \\-n"


@pytest.mark.slow
def test_rendered_page_reads_like_the_help(tmp_path: Path) -> None:
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    proc = subprocess.run(
        ["man", "-l", str(MAN / "lancelot-search.1")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "MANWIDTH": "100", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"},
    )
    assert proc.returncode == 0, proc.stderr
    out = re.sub(r".\x08", "", proc.stdout)  # overstrike bold/underline
    assert "lancelot search [OPTIONS] QUERY" in out
    assert "--limit, -n N" in out and "--type <auto|text|vector|hybrid>" in out
