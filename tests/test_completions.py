"""Shell completions (`completions/`): generated from the Typer app, checked for drift, and exercised
in a real bash; plus the `--table` completion of table names.

The scripts call back into `lancelot` (`_LANCELOT_COMPLETE=complete_bash lancelot`), so the bash test
runs the installed console script, as a shell would. Expected words come from the Typer app or
from folders the test makes, never from the completion code itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import typer

from lancelot_cli.cli.app import app
from lancelot_cli.cli.options import complete_table
from tests.conftest import REPO, lancelot_command, subprocess_env
from tools import generate

SHELLS = {"bash": "lancelot.bash", "zsh": "_lancelot", "fish": "lancelot.fish"}
TIMEOUT = 60


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=subprocess_env(**env), timeout=TIMEOUT, check=False)


# -- the files: present, current, and what the app itself prints -------------------------------------------


@pytest.mark.parametrize("shell", list(SHELLS))
def test_completion_file_is_up_to_date(shell: str) -> None:
    path = REPO / "completions" / SHELLS[shell]
    assert path.is_file(), f"missing {path}; run: python -m tools.generate"
    assert path.read_text(encoding="utf-8") == generate.completion_script(shell), (
        f"{path} is out of date; run: python -m tools.generate"
    )


needs_script = pytest.mark.skipif(
    len(lancelot_command()) != 1, reason="needs the installed `lancelot` console script (prog name, completion var)"
)


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize("shell", list(SHELLS))
def test_completion_file_is_what_the_console_script_prints(shell: str) -> None:
    proc = run(lancelot_command(), _LANCELOT_COMPLETE=f"source_{shell}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (REPO / "completions" / SHELLS[shell]).read_text(encoding="utf-8").strip()


def test_zsh_file_is_a_compdef_file() -> None:
    text = (REPO / "completions" / "_lancelot").read_text(encoding="utf-8")
    assert text.startswith("#compdef lancelot\n")


def test_generate_check_reports_nothing_stale() -> None:
    assert generate.stale() == [], "run: python -m tools.generate"


def test_generate_check_names_a_changed_file(tmp_path: Path) -> None:
    generate.write(tmp_path)
    assert generate.stale(tmp_path) == []
    (tmp_path / "completions" / "lancelot.bash").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "man" / "lancelot-gone.1").write_text(".TH GONE 1\n", encoding="utf-8")
    assert generate.stale(tmp_path) == ["completions/lancelot.bash", "man/lancelot-gone.1"]
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    generate.write(tmp_path)
    assert generate.stale(tmp_path) == []
    assert not (tmp_path / "man" / "lancelot-gone.1").exists()


# -- a real bash with the generated script -------------------------------------------------------------------

BASH_PROBE = r"""
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_lancelot_completion lancelot
printf '%s\n' "${COMPREPLY[@]}"
"""


def bash_complete(*words: str, **env: str) -> list[str]:
    """COMPREPLY after `lancelot WORDS<TAB>` in bash with completions/lancelot.bash sourced; the
    last word is the one being completed ("" after a space)."""
    script_dir = str(Path(lancelot_command()[0]).parent)
    path = script_dir + os.pathsep + os.environ.get("PATH", "")
    proc = subprocess.run(
        [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            BASH_PROBE,
            "bash",
            str(REPO / "completions" / "lancelot.bash"),
            "lancelot",
            *words,
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(PATH=path, **env),
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


needs_bash_and_script = pytest.mark.skipif(
    shutil.which("bash") is None or len(lancelot_command()) != 1,
    reason="needs bash and the installed `lancelot` console script",
)


@pytest.mark.slow
@needs_bash_and_script
def test_bash_completes_command_names() -> None:
    assert sorted(bash_complete("se")) == ["search", "serve"]
    commands = typer.main.get_command(app).list_commands(None)  # type: ignore[arg-type]
    assert sorted(bash_complete("")) == sorted(commands)


@pytest.mark.slow
@needs_bash_and_script
def test_bash_completes_options_and_choices() -> None:
    options = bash_complete("search", "--")
    assert {"--limit", "--type", "--table", "--json", "--jsonl", "--db"} <= set(options)
    assert bash_complete("search", "--type", "") == ["auto", "text", "vector", "hybrid"]


@pytest.mark.slow
@needs_bash_and_script
def test_bash_completes_table_names_from_the_db_folder(tmp_path: Path) -> None:
    db = tmp_path / "db"
    for name in ("documents", "notes", "news"):
        (db / f"{name}.lance").mkdir(parents=True)
    (db / "stray.txt").write_text("not a table", encoding="utf-8")
    assert bash_complete("search", "x", "--db", str(db), "--table", "") == ["documents", "news", "notes"]
    assert bash_complete("search", "x", "--db", str(db), "-t", "n") == ["news", "notes"]
    assert bash_complete("--db", str(db), "query", "x", "--table", "do") == ["documents"]
    assert bash_complete("search", "x", "--table", "", LANCEDB_PATH=str(db)) == ["documents", "news", "notes"]


# -- the --table callback itself -------------------------------------------------------------------------


def resolve(args: list[str], incomplete: str) -> list[str]:
    """What `--table` completion offers after `lancelot ARGS`, through the vendored click's resolver."""
    from typer._click.shell_completion import _resolve_context

    command = typer.main.get_command(app)
    ctx = _resolve_context(command, {}, "lancelot", args)
    return complete_table(ctx, incomplete)


@pytest.fixture
def table_db(tmp_path: Path) -> Path:
    db = tmp_path / "db"
    for name in ("documents", "notes"):
        (db / f"{name}.lance").mkdir(parents=True)
    (db / ".hidden.lance").mkdir()
    (db / "file.lance").write_text("a file, not a table", encoding="utf-8")
    (db / "plain.lance.txt").write_text("x", encoding="utf-8")
    return db


def test_table_names_from_the_command_db(table_db: Path) -> None:
    assert resolve(["search", "x", "--db", str(table_db), "--table"], "") == ["documents", "notes"]
    assert resolve(["search", "x", "--db", str(table_db), "--table"], "no") == ["notes"]


def test_table_names_from_the_global_db(table_db: Path) -> None:
    assert resolve(["--db", str(table_db), "query", "x", "--table"], "") == ["documents", "notes"]


def test_index_completes_table_names_from_its_db_argument(table_db: Path, tmp_path: Path) -> None:
    """`lancelot index SRC DB --table <TAB>` (index's --table now completes, like every command's)."""
    assert resolve(["index", str(tmp_path), str(table_db), "--table"], "") == ["documents", "notes"]


def test_table_names_from_lancedb_path(monkeypatch: pytest.MonkeyPatch, table_db: Path) -> None:
    monkeypatch.setenv("LANCEDB_PATH", str(table_db))
    assert resolve(["search", "x", "--table"], "") == ["documents", "notes"]


def test_table_names_from_the_settings_file(isolated_env: Path, table_db: Path) -> None:
    (isolated_env / "settings.json").write_text(json.dumps({"LANCEDB_PATH": str(table_db)}), encoding="utf-8")
    assert resolve(["search", "x", "--table"], "") == ["documents", "notes"]


@pytest.mark.parametrize("db", ["{tmp}/missing", "s3://bucket/db", ""], ids=["missing-folder", "remote", "unset"])
def test_no_table_names_when_there_is_no_local_folder(tmp_path: Path, db: str) -> None:
    args = (
        ["search", "x", "--table"] if not db else ["search", "x", "--db", db.replace("{tmp}", str(tmp_path)), "--table"]
    )
    assert resolve(args, "") == []
