"""cli/quick.py: which command lines the warm path takes without Typer, and that its option tables
are the Typer commands' own (the byte-for-byte comparisons with a running server are in
tests/test_background.py, test_the_quick_path_gives_the_same_bytes_without_typer)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from lancelot_cli.cli import quick
from lancelot_cli.cli.app import app
from tests.conftest import subprocess_env


def _typer_options(command: str) -> dict[str, str]:
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {
        name: param.name
        for param in click_command.params
        if param.param_type_name == "option"
        for name in (*param.opts, *param.secondary_opts)
        if name not in ("--help", "-h")
    }


@pytest.mark.parametrize("command", sorted(quick.OPTIONS))
def test_the_quick_options_are_the_commands_own(command: str) -> None:
    """Every option of the command, under the same names, for the same parameter: a new option
    fails here until the quick path reads it too."""
    assert {name: parameter for name, (parameter, _) in quick.OPTIONS[command].items()} == _typer_options(command)


TAKEN = [
    ["search", "refund policy"],
    ["search", "x", "--limit", "5", "--json"],
    ["search", "x", "--limit=5", "-n", "7", "--jsonl", "--table", "t", "--also", "a", "--also", "b"],
    ["--db", "/d", "search", "x", "--type", "text", "--filter", "k=v", "--per-document", "0"],
    ["query", "why", "--budget", "2000", "--per-document", "1"],
    ["query", "--warm-start", "--json"],
    ["show", "a.md#3", "--before", "1", "--after", "0"],
    ["show", "a.pdf", "--page", "2", "-b", "500"],
    ["status", "-v", "--json"],
    ["status"],
]
NOT_TAKEN = [
    [],
    ["--help"],
    ["search", "--help"],
    ["search"],  # a missing argument: Typer's usage error
    ["search", "a", "b"],
    ["search", "x", "--limit", "0"],  # out of range: Typer's message
    ["search", "x", "--limit", "201"],
    ["search", "x", "--limit", "+5"],
    ["search", "x", "-n5"],
    ["search", "x", "--limit"],
    ["search", "x", "--bogus"],
    ["search", "x", "--json=1"],
    ["search", "x", "--", "--json"],
    ["search", "x", "--table", "--json"],
    ["search", "caf\udce9"],  # not UTF-8
    ["index", "docs", "db"],
    ["ls"],
    ["serve"],
    ["status", "extra"],
    ["show", "a.md", "--page", "0"],
]


@pytest.mark.parametrize("argv", TAKEN, ids=[" ".join(a) for a in TAKEN])
def test_plain_command_lines_are_read(argv: list[str]) -> None:
    assert quick.parse(argv) is not None


@pytest.mark.parametrize("argv", NOT_TAKEN, ids=[" ".join(a) or "(none)" for a in NOT_TAKEN])
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert quick.parse(argv) is None


def test_what_is_read() -> None:
    command, given, positional = quick.parse(
        ["--db", "/root", "search", "x", "--limit=5", "-n", "7", "--also", "a", "--also", "b", "--db", "/mine"]
    ) or ("", {}, [])
    assert (command, positional) == ("search", ["x"])
    assert given == {"limit": 7, "also": ["a", "b"], "db": "/mine"}  # the last value wins, as in click
    assert quick.parse(["--db", "/root", "status"]) == ("status", {"db": "/root"}, [])


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["search", "x", "--json", "--jsonl"], "two output forms"),
        (["search", "x", "--type", "fuzzy"], "an unknown search type"),
        (["search", "x", "--filter", "novalue"], "not COLUMN=VALUE"),
        (["search", "x", *[w for n in range(7) for w in ("--also", str(n))]], "more phrasings than allowed"),
        (["query"], "no question and no --warm-start"),
        (["show", "a.md#2", "--page", "1"], "SOURCE#N with a page"),
    ],
)
def test_a_usage_error_is_left_to_typer(argv: list[str], why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read, but refused before any server is asked: Typer's path gives the usage error."""
    monkeypatch.setenv("LANCELOT_WARM", "10")
    monkeypatch.setenv("LANCEDB_PATH", "/nonexistent/db")
    assert quick.run(argv) is quick.NOT_TAKEN, why


def test_no_background_server_means_typer_runs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANCELOT_WARM", "0")
    monkeypatch.setenv("LANCEDB_PATH", "/nonexistent/db")
    assert quick.run(["search", "x"]) is quick.NOT_TAKEN


@pytest.mark.slow
def test_the_entry_point_module_is_light() -> None:
    """`lancelot_cli.cli.app` (the console script's module) loads neither Typer nor the commands;
    and garbage collection is paused by ``main`` for `serve` on stdio, not by an import."""
    code = (
        "import gc, sys; import lancelot_cli.cli.app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'rich', 'pydantic') "
        "or m == 'lancelot_cli.cli.commands'), gc.isenabled())"
    )
    for argv in ([], ["serve"]):
        out = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=subprocess_env(), check=True
        )
        assert out.stdout.strip() == "[] True"
