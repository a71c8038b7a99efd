"""What a person sees: output on a real pseudo-terminal (colour, width) against piped output (plain),
NO_COLOR, and the help screens.

Terminal runs spawn the installed console script with its stdout on a pty of a given size (stderr on
a pipe, so the two stay apart); in-process runs use CliRunner (not a terminal). Expected words come
from the sample documents or from the --json reply, never from the renderer.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from tests.conftest import lancelot_command, subprocess_env
from tests.support.terminal import read_all

ANSI = re.compile(r"\x1b\[[0-9;]*m")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)m")  # a foreground colour SGR
TIMEOUT = 60


def visible(text: str) -> str:
    return ANSI.sub("", text).replace("\r\n", "\n")


def on_terminal(args: list[str], columns: int, **env: str) -> tuple[str, str, int]:
    """Run `lancelot ARGS` with stdout (and stdin) on a pty of ``columns`` x 40; stderr piped."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    base = subprocess_env(**env)
    for name in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERMINAL_WIDTH"):
        if name not in env:
            base.pop(name, None)
    base.setdefault("TERM", "xterm-256color")
    proc = subprocess.Popen(
        [*lancelot_command(), *args], stdin=follower, stdout=follower, stderr=subprocess.PIPE, env=base
    )
    os.close(follower)
    output = read_all(leader)
    err = proc.stderr.read() if proc.stderr else b""
    code = proc.wait(timeout=TIMEOUT)
    os.close(leader)
    return output.decode("utf-8"), err.decode("utf-8"), code


def cli(*args: str | Path, **env: str) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot", env=env or None)


def hits(sample_db: Path, query: str, *flags: str) -> list[dict[str, Any]]:
    return json.loads(cli("search", query, "--db", sample_db, "--json", *flags).stdout)["hits"]


# -- search ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_search_on_a_wide_terminal_is_a_coloured_table(sample_db: Path) -> None:
    out, err, code = on_terminal(["search", "refund policy", "--db", str(sample_db), "-n", "3"], 120)
    assert code == 0, err
    text = visible(out)
    assert re.search(r"#\s+score\s+section / place / id\s+snippet", text), text
    for hit in hits(sample_db, "refund policy", "-n", "3"):
        assert hit["title"] in text and hit["source"] in text
    assert re.search(r"\x1b\[[0-9;]*33m[Rr]efund\x1b\[0m", out), "matched words are highlighted"
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "3 hits in table 'documents'" in err and "3 hits" not in text
    assert "file://" not in out and "\x1b]8;" not in out  # no hyperlinks: the indexed folder is unknown


@pytest.mark.slow
def test_search_on_a_narrow_terminal_is_a_list_that_fits(sample_db: Path) -> None:
    out, err, code = on_terminal(["search", "refund policy", "--db", str(sample_db), "-n", "2"], 60)
    assert code == 0, err
    text = visible(out)
    assert "section / place / id" not in text
    assert re.search(r"^\s*1\.\s+\d+\.\d{3}\s+\S", text, re.M), text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 60
    for hit in hits(sample_db, "refund policy", "-n", "2"):
        assert hit["source"] in text


@pytest.mark.slow
def test_no_color_on_a_terminal_keeps_styles_but_no_colours(sample_db: Path) -> None:
    out, err, code = on_terminal(["search", "refund policy", "--db", str(sample_db), "-n", "2"], 120, NO_COLOR="1")
    assert code == 0, err
    assert not COLOUR.search(out), out
    assert "\x1b[1m" in out  # bold survives NO_COLOR, as the convention allows


def test_search_piped_is_plain_blocks(sample_db: Path) -> None:
    result = cli("search", "refund policy", "--db", sample_db, "-n", "2")
    assert result.exit_code == 0, result.stderr
    assert not ANSI.search(result.stdout)
    expected = []
    for rank, hit in enumerate(hits(sample_db, "refund policy", "-n", "2"), start=1):
        section = hit["metadata"].get("heading") or hit["title"]
        expected.append(f"{rank}. {section}  (score {hit['score']:.3f})")
        expected.append(f"   {hit['source']}:{hit['metadata']['line_start']}  id {hit['id']}")
        expected.append("   " + " ".join(hit["snippet"].split()))
    assert [line for line in result.stdout.splitlines() if line] == expected
    assert "2 hits in table 'documents'" in result.stderr


# -- query, status -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_query_on_a_terminal_is_rendered_markdown(sample_db: Path) -> None:
    question = "how do refunds work?"
    out, err, code = on_terminal(["query", question, "--db", str(sample_db), "--budget", "1500"], 100)
    assert code == 0, err
    text = visible(out)
    assert f"Context for: {question}" in text
    assert f"# Context for: {question}" not in text  # the heading is drawn, not printed as source
    assert "chunk(s)" in err


def test_status_shows_tables_and_where_settings_come_from(
    monkeypatch: pytest.MonkeyPatch, isolated_env: Path, sample_db: Path
) -> None:
    (isolated_env / "settings.json").write_text(json.dumps({"EMBEDDING_MODEL": "from-file-model"}), encoding="utf-8")
    monkeypatch.setenv("LANCEDB_DEFAULT_LIMIT", "7")
    result = cli("status", "--db", sample_db)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    reply = json.loads(cli("status", "--db", sample_db, "--json").stdout)
    table = reply["tables"][0]
    assert re.search(r"table\s+rows\s+language\s+full-text index\s+vectors\s+last indexed", out), out
    fts = ", ".join(table["fullTextColumns"])  # text, and the weighted title, heading and path
    assert re.search(
        rf"^\s*documents\s+{table['rows']}\s+en\s+{re.escape(fts)}\s+none\s+{table['updatedAt'][:10]}", out, re.M
    ), out
    assert re.search(rf"^\s*LANCEDB_PATH\s+{re.escape(str(sample_db))}\s+flag\s*$", out, re.M), out
    assert re.search(r"^\s*LANCEDB_DEFAULT_LIMIT\s+7\s+env\s*$", out, re.M), out
    assert re.search(r"^\s*EMBEDDING_MODEL\s+from-file-model\s+file\s*$", out, re.M), out
    assert re.search(r"^\s*LANCEDB_TABLE\s+documents\s+default\s*$", out, re.M), out
    assert re.search(r"^\s*OPENAI_API_KEY\s+\(not set\)\s+-\s*$", out, re.M), out
    assert str(isolated_env / "settings.json") in out
    assert not ANSI.search(out)


def test_status_counts_rows_without_vectors(vector_env: Any) -> None:
    result = cli("status")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(cli("status", "--json").stdout)
    documents = next(t for t in reply["tables"] if t["name"] == "documents")
    vector = documents["vectors"][0]
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("documents"))
    assert f"{vector['column']} ({vector['dimension']}-d" in row
    assert ("all rows" in row) if vector["missing"] == 0 else (f"{vector['missing']} missing" in row)
    assert re.search(r"^\s*OPENAI_API_KEY\s+\(set\)\s+env\s*$", result.stdout, re.M), result.stdout


# -- help ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_help_on_a_terminal_is_styled_and_fits(tmp_path: Path) -> None:
    out, err, code = on_terminal(["search", "--help"], 80)
    assert code == 0, err
    text = visible(out)
    assert COLOUR.search(out)
    assert "Usage: lancelot search [OPTIONS] QUERY" in text
    assert "╭─ Options" in text and "--jsonl" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    plain, _, _ = on_terminal(["search", "--help"], 80, NO_COLOR="1")
    assert not COLOUR.search(plain) and "\x1b[1m" in plain
    assert visible(plain) == text


@pytest.mark.parametrize("columns", [50, 80, 100, 160])
def test_help_follows_the_width(columns: int) -> None:
    result = cli("query", "--help", COLUMNS=str(columns))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert not ANSI.search(result.stdout)
    assert max(len(line) for line in lines) == min(columns, 100)  # panels span the width, up to 100
    for option in ("--budget", "--warm-start", "--limit", "--table", "--json", "--db"):
        assert option in result.stdout


def test_help_shows_bracketed_defaults_as_written() -> None:
    # Typer's rich markup used to swallow "[default: LANCEDB_TABLE or documents]" as a style tag.
    result = cli("search", "--help", COLUMNS="200")
    words = " ".join(result.stdout.replace("│", " ").split())
    assert "Table to use [default: LANCEDB_TABLE or documents]." in words
    assert "[1<=x<=200]" in words


def test_help_states_exit_codes_and_the_no_match_decision() -> None:
    root = " ".join(cli("--help", COLUMNS="100").stdout.split())
    assert "0 success" in root and "1 a user error" in root and "2 a usage error" in root
    search = " ".join(cli("search", "--help", COLUMNS="100").stdout.split())
    assert "Finding nothing is not an error: exit 0" in search
    assert "does not break on an empty result" in search


@pytest.mark.slow
def test_typer_use_rich_0_gives_the_classic_help() -> None:
    proc = subprocess.run(
        [*lancelot_command(), "search", "--help"],
        capture_output=True,
        text=True,
        env=subprocess_env(TYPER_USE_RICH="0"),
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "╭" not in proc.stdout
    assert "Options:" in proc.stdout and "--jsonl" in proc.stdout
