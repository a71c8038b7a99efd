"""Escape sequences in documents and file names reach a terminal as visible text, never as commands
(cli/visible.py): `search`, `query`, `show` and `index`, piped and on a real pseudo-terminal; the
`--json` reply keeps the text as it is.

The document is the one from issue 27: an OSC 8 link whose target differs from its text, a window
title, a clear-screen."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.cli.visible import shown
from lancelot_cli.indexer import index_folder
from tests.conftest import lancelot_command, subprocess_env
from tests.support.terminal import read_all

HOSTILE = "# ANSI doc\n\nrefund \x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x1b]0;PWNED\x07 \x1b[2J\n"
NAME = "odd\rname\x1b[2J.md"  # a carriage return and an escape in a file name
OBEYED = ("\x1b]0;", "\x1b]8;;http://evil", "\x1b[2J", "\x07", "\r")


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("hostile-src")
    (src / "ansi.md").write_text(HOSTILE, encoding="utf-8")
    (src / NAME).write_text("# Odd name\n\nA click on this page.\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("hostile-db") / "db"
    index_folder(src, str(db))
    return db


def cli(*args: str) -> str:
    done = CliRunner().invoke(app, list(args), prog_name="lancelot")
    assert done.exit_code == 0, done.output
    return done.stdout


def on_terminal(*args: str) -> str:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*lancelot_command(), *args],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=subprocess_env(TERM="xterm-256color", COLUMNS="160"),
    )
    os.close(follower)
    output = read_all(leader).decode("utf-8")
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    os.close(leader)
    return output


def test_shown_writes_controls_out_and_keeps_the_rest() -> None:
    assert shown("a\x1b[2Jb\x07\r\x9b\u202e") == "a\\x1b[2Jb\\x07\\x0d\\x9b\\u202e"
    assert shown("tabs\tand\nnewlines, café, 向量") == "tabs\tand\nnewlines, café, 向量"


@pytest.mark.parametrize("command", [["search", "click"], ["query", "click"], ["show", "ansi.md"]])
def test_piped_output_shows_the_sequences_instead_of_obeying_them(hostile_db: Path, command: list[str]) -> None:
    out = cli(*command, "--db", str(hostile_db))
    assert "ANSI doc" in out and "\\x1b]0;PWNED\\x07" in out
    assert not any(sequence in out for sequence in OBEYED), repr(out)


@pytest.mark.slow
@pytest.mark.parametrize("command", [["search", "click"], ["query", "click"], ["show", "ansi.md"]])
def test_a_terminal_is_never_sent_the_documents_sequences(hostile_db: Path, command: list[str]) -> None:
    out = on_terminal(*command, "--db", str(hostile_db))
    assert "PWNED" in out  # shown...
    for sequence in ("\x1b]0;", "\x1b]8;;http://evil", "\x1b[2J", "\x07"):  # ...never obeyed
        assert sequence not in out, (sequence, out)


def test_file_names_are_shown_escaped(hostile_db: Path) -> None:
    out = cli("search", "click", "--db", str(hostile_db))
    assert shown(NAME) in out and NAME not in out


def test_json_keeps_the_text_as_it_is(hostile_db: Path) -> None:
    reply = json.loads(cli("search", "click", "--db", str(hostile_db), "--json"))
    texts = {hit["source"]: hit["snippet"] for hit in reply["hits"]}
    assert "\x1b]0;PWNED\x07" in texts["ansi.md"] and NAME in texts


# -- `lancelot index`: the names it prints while it runs (issue 37 item 6) ----------------------------------
# Each name was printed raw: the progress bar sent the sequences to the terminal and read "[" as Rich
# markup (an OSC 8 link drawn; a closing tag with nothing open raised a MarkupError that ended the run).

INDEX_NAMES = {
    "escape-sequences": "a\x1b]0;PWNED\x07\x1b[2J.md",
    "link-markup": "[link=mailto:x@evil.example]a.md",
    "closing-tag": "x[/bold].md",  # a folder "x[" holding "bold].md"
}
OBEYED_BY_INDEX = ("\x1b]0;", "\x1b[2J", "\x07", "\x1b]8;")


def index_on_terminal(src: Path, db: Path) -> str:
    """`lancelot index SRC DB` with stdout and stderr on a pseudo-terminal, where the progress bar is drawn."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(db), "--no-embed"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=subprocess_env(TERM="xterm-256color", COLUMNS="160"),
    )
    os.close(follower)
    output = read_all(leader).decode("utf-8", "replace")
    os.close(leader)
    assert proc.wait(timeout=120) == 0, output
    return output


@pytest.mark.slow
@pytest.mark.parametrize("name", INDEX_NAMES.values(), ids=INDEX_NAMES.keys())
def test_the_progress_bar_shows_file_names_as_text(tmp_path: Path, name: str) -> None:
    src = tmp_path / "src"
    (src / name).parent.mkdir(parents=True)
    (src / name).write_text("# A page\n\nSome text.\n", encoding="utf-8")
    out = index_on_terminal(src, tmp_path / "db")  # the only file: the bar's last line names it
    assert f"reading {shown(name)}" in out, out
    assert "MarkupError" not in out
    for sequence in OBEYED_BY_INDEX:
        assert sequence not in out, (sequence, out)


def test_an_index_error_shows_the_names_it_gives(tmp_path: Path) -> None:
    """A run that reads nothing says which files it could not read, in the error line."""
    src = tmp_path / "src"
    src.mkdir()
    (src / INDEX_NAMES["escape-sequences"]).write_text("", encoding="utf-8")  # no text: skipped
    done = CliRunner().invoke(app, ["index", str(src), str(tmp_path / "db"), "--no-embed"], prog_name="lancelot")
    assert done.exit_code != 0
    assert shown(INDEX_NAMES["escape-sequences"]) in done.stderr, done.stderr
    assert not any(sequence in done.stderr for sequence in OBEYED_BY_INDEX), repr(done.stderr)


@pytest.mark.slow
def test_watch_messages_show_names_as_text(tmp_path: Path) -> None:
    """`--watch` names the folder it watches and says why a pass wrote nothing (the files it could
    not read); a folder named with an escape sequence and markup, holding such a file."""
    src = tmp_path / "src\x1b]0;PWNED\x07[link=mailto:x@evil.example]"
    src.mkdir()
    (src / INDEX_NAMES["escape-sequences"]).write_text("", encoding="utf-8")
    watcher = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(tmp_path / "db"), "--no-embed", "--watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(TERM="xterm-256color", FORCE_COLOR="1"),  # Rich renders markup as on a terminal
    )
    assert watcher.stderr is not None
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("warning" in line for line in lines):
            lines.append(watcher.stderr.readline())
            if not lines[-1]:  # the watcher ended
                break
    finally:
        watcher.send_signal(signal.SIGTERM)
        _, rest = watcher.communicate(timeout=30)
    err = "".join(lines) + rest
    assert f"Watching {shown(str(src))}" in err, err
    assert shown(INDEX_NAMES["escape-sequences"]) in err, err
    assert not any(sequence in err for sequence in OBEYED_BY_INDEX), repr(err)
