"""The terminal in the first hour (issue 39 #9): `query --warm-start` needs no question, an argument
that starts with '-' is answered with how to pass it, `serve` typed at a terminal says what it waits
for (on stderr, never stdout), init's key note points at the page that explains the passphrase, and
option errors read as sentences (no pydantic "Value error, ")."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.cli.init.flow import KEY_DOC
from tests.conftest import REPO, lancelot_command, subprocess_env


class Ran:
    def __init__(self, args: tuple[str, ...]) -> None:
        result = CliRunner().invoke(app, list(args), prog_name="lancelot")
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def run(*args: str) -> Ran:
    """The command in-process, as the console script runs it (the error boundary is the app's)."""
    return Ran(args)


def test_query_warm_start_needs_no_question(sample_db, isolated_env) -> None:
    result = run("query", "--warm-start", "--db", str(sample_db), "--budget", "800")
    assert result.returncode == 0, result.stderr
    assert "# Overview of the collection" in result.stdout

    missing = run("query", "--db", str(sample_db))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.splitlines() == [
        (
            "lancelot: error: missing argument QUESTION: give a question, or --warm-start for an overview of the "
            "collection; see `lancelot query --help`"
        )
    ]


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (
            ["search", "--exclude-table"],
            "to search for text starting with '-', put `--` before it: `lancelot search -- --exclude-table`",
        ),
        (["query", "-x"], "to ask a question starting with '-', put `--` before it: `lancelot query -- -x`"),
    ],
)
def test_text_starting_with_a_dash_is_told_to_follow_two_dashes(args, hint, isolated_env) -> None:
    result = run(*args)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"lancelot: error: No such option: {args[1]}") and hint in line


def test_an_option_typo_of_a_command_without_arguments_gets_no_dash_hint(isolated_env) -> None:
    result = run("status", "--bogus")
    assert result.returncode == 2 and "`--`" not in result.stderr


def test_the_dashes_hint_works(sample_db, isolated_env) -> None:
    result = run("search", "--db", str(sample_db), "--", "--exclude-table")
    assert result.returncode == 0, result.stderr


def test_option_errors_have_no_pydantic_prefix(isolated_env) -> None:
    result = CliRunner().invoke(app, ["search", "x", "--type", "bogus"], prog_name="lancelot")
    assert result.exit_code == 2
    assert "Value error" not in result.stderr
    assert "Invalid value for '--type': 'bogus' is not one of 'auto', 'text', 'vector', 'hybrid'" in result.stderr


@pytest.mark.slow
def test_serve_at_a_terminal_says_what_it_waits_for_and_stops_on_ctrl_d(sample_db, isolated_env) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*lancelot_command(), "serve", "--db", str(sample_db)],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    os.close(slave)
    assert proc.stderr is not None
    said = b""
    try:
        # Until it has said its line (it starts, then waits), not a fixed 3 s: the Ctrl-D then
        # reaches a server that is reading its input, or about to (the terminal keeps it till then).
        deadline = time.monotonic() + 60
        while b"stops it." not in said and proc.poll() is None and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 0.1)[0]:
                said += os.read(proc.stderr.fileno(), 4096)
        os.write(master, b"\x04")  # Ctrl-D at the start of a line: end of input
        out, err = proc.communicate(timeout=60)
        err = said + err
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        os.close(master)
    assert proc.returncode == 0, err
    assert out == b""  # stdout is MCP's
    line = err.decode()
    assert "waiting for an MCP client to write JSON-RPC to stdin" in line and "Ctrl-D or Ctrl-C stops it" in line


@pytest.mark.slow
def test_serve_started_by_a_client_says_nothing_of_the_kind(sample_db, isolated_env) -> None:
    result = subprocess.run(
        [*lancelot_command(), "serve", "--db", str(sample_db)],
        input="",
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0 and result.stdout == ""
    assert "waiting for an MCP client" not in result.stderr


def test_the_key_note_points_at_the_page_that_explains_the_passphrase() -> None:
    page, anchor = KEY_DOC.split("/blob/main/")[1].split("#")
    text = (REPO / page).read_text(encoding="utf-8")
    assert "## The stored key" in text and anchor == "the-stored-key"
    assert "LANCELOT_KEY_PASSPHRASE" in text.split("## The stored key")[1]
    assert "see the README" not in (REPO / "lancelot_cli" / "cli" / "init" / "flow.py").read_text(encoding="utf-8")
