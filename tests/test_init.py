"""`lancelot init` (SPEC §5): the wizard driven through the real questionary prompts (prompt_toolkit pipe
input), the flags for scripts and CI through Typer's CliRunner (not a TTY), the key check against the
real OpenAI-compatible test server, where the key ends up (keychain or encrypted file), `--show`,
`--forget`, and a spawned `lancelot serve` that finds everything init stored with no other settings.

Keys typed into the pipe: "\\r" Enter, "\\x1b[B" down, "\\x03" Ctrl-C, "\\x15" Ctrl-U (clear the line).
Every pipe is closed after the keys are sent, so a test that runs out of answers ends (as Ctrl-D)
instead of hanging.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from lancelot_cli import keyfile
from lancelot_cli.cli.app import app
from lancelot_cli.cli.init import InitOptions, QuestionaryPrompter, client_configs, execute, server_command
from lancelot_cli.credentials import KEYRING_SERVICE, KEYRING_USER, find_openai_key
from tests.conftest import lancelot_command, subprocess_env
from tests.support.clock import client_retries
from tests.support.clock import install as install_clock
from tests.support.embed_server import MODEL
from tests.support.keyrings import MemoryKeyring
from tests.support.servers import closed_url

ENTER, DOWN, CTRL_C, CLEAR = "\r", "\x1b[B", "\x03", "\x15"
KEY = "sk-test-0123456789-abcd"  # what the tests type or pipe in as the OpenAI key
OTHER_KEY = "sk-test-9876543210-wxyz"


# -- helpers --------------------------------------------------------------------------------------


class Recording:
    """The real questionary prompter, noting each question's message as it is asked."""

    def __init__(self, prompter: QuestionaryPrompter) -> None:
        self.prompter = prompter
        self.asked: list[str] = []

    def __getattr__(self, kind: str) -> Any:
        ask = getattr(self.prompter, kind)

        def record(message: str, *args: Any, **kwargs: Any) -> Any:
            self.asked.append(message)
            return ask(message, *args, **kwargs)

        return record


def wizard(keys: str, cwd: Path, asked: list[str] | None = None, **options: Any) -> Any:
    """Run `lancelot init` as a person at a terminal would, typing ``keys`` into the real prompts.
    The questions' messages are appended to ``asked`` as they come."""
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        pipe.close()
        prompter = Recording(QuestionaryPrompter(input=pipe, output=DummyOutput()))
        if asked is not None:
            prompter.asked = asked
        return execute(InitOptions(**options), prompter, interactive=True, cwd=cwd)


def cli(*args: str | Path, input: str | None = None, **env: str) -> Any:  # noqa: A002 - CliRunner's name
    return CliRunner().invoke(app, ["init", *map(str, args)], input=input, env=env or None, prog_name="lancelot")


def stored_settings(config: Path) -> dict[str, str]:
    return json.loads((config / "settings.json").read_text(encoding="utf-8"))


def files_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} if folder.exists() else {}


def no_key_anywhere(*texts: str) -> None:
    for text in texts:
        assert KEY not in text and OTHER_KEY not in text
        assert "0123456789" not in text


def configs_in(stdout: str) -> dict[str, Any]:
    """The configurations init printed: the claude command, the JSON block and the two links."""
    lines = stdout.splitlines()
    claude = next(line.strip() for line in lines if line.strip().startswith("claude mcp add"))
    start = lines.index("{")
    end = lines.index("}", start)
    block = json.loads("\n".join(lines[start : end + 1]))
    vscode = next(line.strip() for line in lines if line.strip().startswith("vscode:"))
    cursor = next(line.strip() for line in lines if line.strip().startswith("cursor://"))
    return {"claude": claude, "json": block, "vscode": vscode, "cursor": cursor}


class BrokenKeyring(MemoryKeyring):
    """A keychain whose backend fails the way a dead D-Bus session does (not a KeyringError)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError("D-Bus went away")


# -- 1. the wizard at a terminal ------------------------------------------------------------------------


def test_first_run_indexes_a_new_folder_checks_the_key_and_stores_everything(
    tmp_path, docs, isolated_env, embed_server, capsys, monkeypatch
):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))  # the first run: text only
    embed_server.api_key = KEY
    keys = (
        ENTER  # database folder: the offered ./db
        + ENTER  # it does not exist: index a folder into it now
        + f"{docs}{ENTER}"  # the documents
        + ENTER  # default table: the one just written
        + ENTER  # embedded with a key (the first choice)
        + f"{KEY}{ENTER}"  # the key (hidden)
        + "y"  # change the endpoint or model
        + f"{embed_server.url}{ENTER}"  # base URL
        + f"{CLEAR}{MODEL}{ENTER}"  # model
        + "y"  # the table has no vectors: embed them now (issue 39 #7)
    )
    asked: list[str] = []
    plan = wizard(keys, cwd=tmp_path, asked=asked)
    out, err = capsys.readouterr()

    db = tmp_path / "db"
    assert plan.db_uri == str(db) and db.is_dir()
    import lancedb

    table = lancedb.connect(str(db)).open_table("documents")
    assert table.count_rows() > 0
    assert f"Embed them now with {MODEL} through {embed_server.url}?" in asked[-1]
    assert table.count_rows("vector IS NULL") == 0  # made with the key just stored
    assert stored_settings(isolated_env) == {
        "LANCEDB_PATH": str(db),
        "LANCEDB_TABLE": "documents",
        "OPENAI_BASE_URL": embed_server.url,
        "EMBEDDING_MODEL": MODEL,
        "EMBEDDING_DIMENSIONS": "32",
    }
    assert embed_server.requests > 1  # one small call checked the key, the others made the vectors
    assert find_openai_key(isolated_env, environ={}).source == "file"  # no keychain on this box
    assert keyfile.read_key(isolated_env) == KEY
    assert "The key works" in err and "32-d" in err
    assert "No OS keychain works here (NoKeyringError)" in err
    configs = configs_in(out)
    assert configs["json"]["mcpServers"]["lancelot"]["env"] == {"LANCEDB_PATH": str(db)}
    no_key_anywhere(out, err, (isolated_env / "settings.json").read_text())
    assert not any(KEY.encode() in p.read_bytes() for p in db.rglob("*") if p.is_file())


def test_rerun_offers_the_stored_answers_as_defaults(tmp_path, sample_db, isolated_env, embed_server, capsys):
    previous = {
        "LANCEDB_PATH": str(sample_db),
        "LANCEDB_TABLE": "documents",
        "OPENAI_BASE_URL": embed_server.url,
        "EMBEDDING_MODEL": MODEL,
        "LANCEDB_DEFAULT_LIMIT": "7",
    }
    (isolated_env / "settings.json").write_text(json.dumps(previous))
    keyfile.write_key(isolated_env, KEY)
    key_file = (isolated_env / keyfile.KEY_FILE).read_bytes()

    plan = wizard(ENTER * 5, cwd=tmp_path)  # folder, table, "with a key", "keep the stored key", "change endpoint? no"
    out, err = capsys.readouterr()

    assert plan.db_uri == str(sample_db) and plan.key_action == "keep"
    assert stored_settings(isolated_env) == previous  # same answers; the setting init does not ask about is kept
    assert (isolated_env / keyfile.KEY_FILE).read_bytes() == key_file  # the key was not rewritten
    assert embed_server.requests == 0  # a kept key on an unchanged endpoint is not re-checked
    assert configs_in(out)["json"]["mcpServers"]["lancelot"]["env"]["LANCEDB_PATH"] == str(sample_db)
    no_key_anywhere(out, err)


def test_table_list_and_another_name(tmp_path, vector_db, isolated_env):
    # vector_db has "documents" and "textonly": pick the second from the list, then type a new name.
    wizard(f"{CLEAR}{vector_db}{ENTER}" + DOWN + ENTER, cwd=tmp_path, no_api_key=True)
    assert stored_settings(isolated_env)["LANCEDB_TABLE"] == "textonly"
    # the stored "textonly" is now the highlighted default: one step down is "Another name…"
    wizard(f"{CLEAR}{vector_db}{ENTER}" + DOWN + ENTER + f"notes{ENTER}", cwd=tmp_path, no_api_key=True)
    assert stored_settings(isolated_env)["LANCEDB_TABLE"] == "notes"


def test_a_file_is_not_accepted_as_the_database_folder(tmp_path, sample_db, isolated_env, capsys):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a database")
    keys = (
        f"{CLEAR}{a_file}{ENTER}"  # refused by the validator: the prompt stays open
        f"{CLEAR}{sample_db}{ENTER}" + ENTER  # corrected
    )  # table
    plan = wizard(keys, cwd=tmp_path, no_api_key=True)
    assert plan.db_uri == str(sample_db)
    assert stored_settings(isolated_env)["LANCEDB_PATH"] == str(sample_db)


def test_a_missing_folder_can_be_created_empty_or_another_chosen(tmp_path, sample_db, isolated_env, capsys):
    empty = tmp_path / "later" / "db"
    plan = wizard(f"{CLEAR}{empty}{ENTER}" + DOWN + ENTER + f"{ENTER}", cwd=tmp_path, no_api_key=True)
    assert plan.create_db and empty.is_dir() and list(empty.iterdir()) == []
    assert stored_settings(isolated_env)["LANCEDB_PATH"] == str(empty)

    elsewhere = tmp_path / "nowhere"
    keys = f"{CLEAR}{elsewhere}{ENTER}" + DOWN * 2 + ENTER + f"{CLEAR}{sample_db}{ENTER}" + ENTER
    plan = wizard(keys, cwd=tmp_path, no_api_key=True)
    assert plan.db_uri == str(sample_db) and not elsewhere.exists()


def test_relative_and_home_paths_are_stored_absolute(tmp_path, sample_db, isolated_env, monkeypatch):
    monkeypatch.setenv("HOME", str(sample_db.parent))
    wizard(f"{CLEAR}~/{sample_db.name}{ENTER}{ENTER}", cwd=tmp_path, no_api_key=True)
    assert stored_settings(isolated_env)["LANCEDB_PATH"] == str(sample_db)
    wizard(f"{CLEAR}{os.path.relpath(sample_db, tmp_path)}{ENTER}{ENTER}", cwd=tmp_path, no_api_key=True)
    assert stored_settings(isolated_env)["LANCEDB_PATH"] == str(sample_db)


def test_a_failed_check_says_why_and_the_key_can_be_entered_again(
    tmp_path, sample_db, isolated_env, embed_server, capsys
):
    embed_server.api_key = KEY
    keys = (
        f"{CLEAR}{sample_db}{ENTER}"
        + ENTER
        + ENTER
        + f"{OTHER_KEY}{ENTER}"
        + "y"
        + f"{embed_server.url}{ENTER}"
        + f"{CLEAR}{MODEL}{ENTER}"
        + ENTER  # the check failed (401): "Enter the key again"
        + f"{KEY}{ENTER}"
    )
    plan = wizard(keys, cwd=tmp_path)
    out, err = capsys.readouterr()
    assert "The key check failed" in err and "rejected the API key (401)" in err
    assert plan.key_action == "store" and embed_server.requests == 2
    assert keyfile.read_key(isolated_env) == KEY
    no_key_anywhere(out, err)


def test_a_failed_check_can_fix_the_model_or_keep_the_key_anyway(
    tmp_path, sample_db, isolated_env, embed_server, capsys
):
    keys = (
        f"{CLEAR}{sample_db}{ENTER}"
        + ENTER
        + ENTER
        + f"{KEY}{ENTER}"
        + "y"
        + f"{embed_server.url}{ENTER}"
        + f"{CLEAR}no-such-model{ENTER}"
        + DOWN
        + ENTER  # 404: "Change the endpoint or model"
        + ENTER
        + f"{CLEAR}{MODEL}{ENTER}"
    )  # same URL, the right model
    wizard(keys, cwd=tmp_path)
    err = capsys.readouterr().err
    assert "does not know the model 'no-such-model' (404)" in err
    assert stored_settings(isolated_env)["EMBEDDING_MODEL"] == MODEL
    assert stored_settings(isolated_env)["EMBEDDING_DIMENSIONS"] == "32"

    dead = closed_url()
    keys = (
        ENTER
        + ENTER
        + ENTER
        + DOWN
        + ENTER  # keep folder and table; a key; "Enter a new key"
        + f"{OTHER_KEY}{ENTER}"
        + "y"
        + f"{CLEAR}{dead}{ENTER}"
        + ENTER
        + DOWN * 2
        + ENTER
    )  # unreachable: "Keep the key anyway"
    plan = wizard(keys, cwd=tmp_path)
    err = capsys.readouterr().err
    assert "cannot reach" in err
    assert plan.key_action == "store" and keyfile.read_key(isolated_env) == OTHER_KEY
    assert stored_settings(isolated_env)["OPENAI_BASE_URL"] == dead
    assert "EMBEDDING_DIMENSIONS" not in stored_settings(isolated_env)  # not measured for this endpoint


def test_the_key_prompt_refuses_what_cannot_be_a_key(tmp_path, sample_db, isolated_env, embed_server):
    keys = (
        f"{CLEAR}{sample_db}{ENTER}"
        + ENTER
        + ENTER
        + f"sk-two words{ENTER}"  # refused: the prompt stays open
        + f"{CLEAR}{KEY}{ENTER}"
        + "y"
        + f"{embed_server.url}{ENTER}"
        + f"{CLEAR}{MODEL}{ENTER}"
    )
    plan = wizard(keys, cwd=tmp_path)
    assert plan.key_action == "store" and keyfile.read_key(isolated_env) == KEY
    assert embed_server.requests == 1


def test_the_stored_key_can_be_removed_from_the_wizard(tmp_path, sample_db, isolated_env):
    keyfile.write_key(isolated_env, KEY)
    plan = wizard(f"{CLEAR}{sample_db}{ENTER}" + ENTER + ENTER + DOWN * 2 + ENTER, cwd=tmp_path)
    assert plan.key_action == "remove"
    assert find_openai_key(isolated_env, environ={}) is None
    assert not (isolated_env / keyfile.KEY_FILE).exists()


# Ctrl-C at each question: nothing is written, the previous settings and key stay byte for byte.
# step -> (keys, the question that was open when the keys ran out)
CANCEL_AT = {
    "database folder": (CTRL_C, "Database folder"),
    "missing folder": ("{clear}{missing}" + ENTER + CTRL_C, "does not exist yet"),
    "documents to index": ("{clear}{missing}" + ENTER + ENTER + CTRL_C, "Folder of documents to index"),
    "table": ("{clear}{db}" + ENTER + CTRL_C, "Default table"),
    "embedding choice": ("{clear}{db}" + ENTER + ENTER + CTRL_C, "How should documents be embedded"),
    "local model": ("{clear}{db}" + ENTER + ENTER + DOWN + ENTER + CTRL_C, "Local model"),
    "key choice": ("{clear}{db}" + ENTER + ENTER + ENTER + CTRL_C, "OpenAI key (for vector search)"),
    "new key": ("{clear}{db}" + ENTER + ENTER + ENTER + DOWN + ENTER + CTRL_C, "OpenAI API key"),
    "endpoint": (
        "{clear}{db}" + ENTER + ENTER + ENTER + DOWN + ENTER + "{key}" + ENTER + CTRL_C,
        "Change the embeddings endpoint",
    ),
    "base URL": ("{clear}{db}" + ENTER + ENTER + ENTER + DOWN + ENTER + "{key}" + ENTER + "y" + CTRL_C, "base URL"),
    "after a failed check": (
        "{clear}{db}"
        + ENTER
        + ENTER
        + ENTER
        + DOWN
        + ENTER
        + "{key}"
        + ENTER
        + "y"
        + "{clear}{url}"
        + ENTER
        + "{clear}{model}"
        + ENTER
        + CTRL_C,
        "What now?",
    ),
    "input ends (Ctrl-D)": ("{clear}{db}" + ENTER, "Default table"),
}


@pytest.mark.parametrize("previous", [True, False], ids=["over old settings", "first run"])
@pytest.mark.parametrize("step", list(CANCEL_AT))
def test_ctrl_c_at_any_question_changes_nothing(step, previous, tmp_path, sample_db, isolated_env, embed_server):
    embed_server.api_key = "sk-something-else-entirely"  # so the check fails at "after a failed check"
    if previous:
        (isolated_env / "settings.json").write_text(
            json.dumps({"LANCEDB_PATH": str(sample_db), "LANCEDB_TABLE": "documents"})
        )
        keyfile.write_key(isolated_env, OTHER_KEY)
    before = files_in(isolated_env)
    missing = tmp_path / "missing"
    keys, open_question = CANCEL_AT[step]
    keys = keys.format(clear=CLEAR, missing=missing, db=sample_db, key=KEY, url=embed_server.url, model=MODEL)
    if not previous and step not in ("embedding choice", "local model"):
        keys = keys.replace(ENTER + ENTER + DOWN + ENTER, ENTER + ENTER, 1)  # no stored key: no key choice
        if step == "key choice":
            open_question = "OpenAI API key"
    asked: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        wizard(keys, cwd=tmp_path, asked=asked)
    assert open_question in asked[-1]
    assert embed_server.requests == (1 if step == "after a failed check" else 0)
    assert files_in(isolated_env) == before
    assert not missing.exists()


# -- 2. without a terminal: flags ---------------------------------------------------------------------------


def test_no_terminal_and_missing_answers_is_one_clear_error(isolated_env):
    for args, needed in (
        [(), "--db PATH and --api-key-stdin or --no-api-key"],
        [("--db", "/tmp"), "--api-key-stdin or --no-api-key"],
        [("--no-api-key",), "--db PATH"],
    ):
        result = cli(*args)
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith("lancelot: error: no terminal to ask on") and needed in result.stderr
        assert "EOFError" not in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.splitlines()) == 1
        assert result.stdout == ""
    assert files_in(isolated_env) == {}


def test_flags_only_no_key(sample_db, isolated_env):
    result = cli("--db", sample_db, "--no-api-key")
    assert result.exit_code == 0, result.stderr
    assert stored_settings(isolated_env) == {"LANCEDB_PATH": str(sample_db), "LANCEDB_TABLE": "documents"}
    assert "Settings saved to" in result.stderr
    assert configs_in(result.stdout)["json"]["mcpServers"]["lancelot"]["env"] == {"LANCEDB_PATH": str(sample_db)}
    assert find_openai_key(isolated_env, environ={}) is None


def test_global_db_option_counts_as_the_answer(sample_db, isolated_env):
    result = CliRunner().invoke(app, ["--db", str(sample_db), "init", "--no-api-key", "-t", "notes"])
    assert result.exit_code == 0, result.stderr
    assert stored_settings(isolated_env) == {"LANCEDB_PATH": str(sample_db), "LANCEDB_TABLE": "notes"}
    assert "has no table 'notes' yet" in result.stderr


def test_bad_database_folders(tmp_path, isolated_env):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    result = cli("--db", a_file, "--no-api-key")
    assert result.exit_code == 1 and "is a file, not a folder" in result.stderr
    missing = tmp_path / "missing"
    result = cli("--db", missing, "--no-api-key")
    assert result.exit_code == 1 and "does not exist" in result.stderr and "--yes" in result.stderr
    assert not missing.exists() and files_in(isolated_env) == {}

    result = cli("--db", missing, "--no-api-key", "--yes")
    assert result.exit_code == 0, result.stderr
    assert missing.is_dir() and stored_settings(isolated_env)["LANCEDB_PATH"] == str(missing)


def test_yes_keeps_the_current_answers(sample_db, isolated_env):
    result = cli("--yes")
    assert result.exit_code == 1 and "no database folder is set yet" in result.stderr
    cli(
        "--db", sample_db, "--api-key-stdin", "--yes", input=f"{KEY}\n", OPENAI_BASE_URL=closed_url()
    )  # check fails, --yes stores the key anyway
    settings_before = files_in(isolated_env)
    result = cli("--yes")
    assert result.exit_code == 0, result.stderr
    assert files_in(isolated_env) == settings_before  # same settings, same key file
    assert keyfile.read_key(isolated_env) == KEY


def test_key_from_stdin_is_checked_then_stored(sample_db, isolated_env, embed_server):
    embed_server.api_key = KEY
    result = cli(
        "--db",
        sample_db,
        "--api-key-stdin",
        "--base-url",
        embed_server.url,
        "--embedding-model",
        MODEL,
        input=f"{KEY}\n",
    )
    assert result.exit_code == 0, result.stderr
    assert embed_server.requests == 1
    assert stored_settings(isolated_env) == {
        "LANCEDB_PATH": str(sample_db),
        "LANCEDB_TABLE": "documents",
        "OPENAI_BASE_URL": embed_server.url,
        "EMBEDDING_MODEL": MODEL,
        "EMBEDDING_DIMENSIONS": "32",
    }
    assert find_openai_key(isolated_env, environ={}).source == "file"
    assert keyfile.read_key(isolated_env) == KEY
    no_key_anywhere(result.stdout, result.stderr)


@pytest.mark.parametrize("case", ["401", "wrong model", "unreachable"])
def test_a_failed_check_without_a_terminal_stores_nothing_unless_yes(
    case, sample_db, isolated_env, embed_server, monkeypatch
):
    monkeypatch.setattr("lancelot_cli.providers._clients", {})
    clock = install_clock(monkeypatch)
    url, model, expected = embed_server.url, MODEL, ""
    if case == "401":
        embed_server.api_key = OTHER_KEY
        expected = "rejected the API key (401)"
    elif case == "wrong model":
        model, expected = "no-such-model", "does not know the model 'no-such-model' (404)"
    else:
        url, expected = closed_url(), "cannot reach"
    args = ["--db", sample_db, "--api-key-stdin", "--base-url", url, "--embedding-model", model]
    result = cli(*args, input=f"{KEY}\n")
    assert clock.slept == [] and client_retries() == {0}  # no retries, no waiting
    assert embed_server.requests == (0 if case == "unreachable" else 1)
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert line.startswith("lancelot: error: the key check failed") and expected in line
    assert "Nothing was stored" in line and "--yes" in line
    assert files_in(isolated_env) == {}
    no_key_anywhere(result.stdout, result.stderr)

    result = cli(*args, "--yes", input=f"{KEY}\n")
    assert result.exit_code == 0, result.stderr
    assert "warning: the key check failed" in result.stderr and expected in result.stderr
    assert keyfile.read_key(isolated_env) == KEY
    assert "EMBEDDING_DIMENSIONS" not in stored_settings(isolated_env)
    no_key_anywhere(result.stdout, result.stderr)


def test_stdin_key_problems_and_conflicting_flags(sample_db, isolated_env):
    result = cli("--db", sample_db, "--api-key-stdin", input="")
    assert result.exit_code == 1 and "stdin had no key" in result.stderr
    result = cli("--db", sample_db, "--api-key-stdin", input="sk-a sk-b\n")
    assert result.exit_code == 1 and "spaces" in result.stderr and "sk-a" not in result.stderr
    result = cli("--db", sample_db, "--api-key-stdin", input="sk-\u00fcnicode-key-0000\n")
    assert result.exit_code == 1 and "plain ASCII" in result.stderr and "nicode" not in result.stderr
    for args in (["--api-key-stdin", "--no-api-key"], ["--show", "--forget"], ["--forget", "--yes"]):
        result = cli(*args, input="")
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr.startswith("lancelot: error:")
    result = cli("--db", sample_db, "--no-api-key", "--base-url", "localhost:11434")
    assert result.exit_code == 1 and "http://" in result.stderr
    assert files_in(isolated_env) == {}


def test_base_url_and_model_flags_without_a_key(sample_db, isolated_env):
    (isolated_env / "settings.json").write_text(
        json.dumps({"OPENAI_BASE_URL": "http://old/v1", "EMBEDDING_DIMENSIONS": "1536"})
    )
    result = cli("--db", sample_db, "--no-api-key", "--base-url", "", "--embedding-model", "nomic-embed-text")
    assert result.exit_code == 0, result.stderr
    stored = stored_settings(isolated_env)
    assert "OPENAI_BASE_URL" not in stored  # "" puts it back to OpenAI
    assert stored["EMBEDDING_MODEL"] == "nomic-embed-text"
    assert "EMBEDDING_DIMENSIONS" not in stored  # measured for another model: no longer claimed


def test_a_broken_settings_file_is_replaced(sample_db, isolated_env):
    (isolated_env / "settings.json").write_text("{not json")
    result = cli("--db", sample_db, "--no-api-key")
    assert result.exit_code == 0, result.stderr
    assert "it will be replaced" in result.stderr
    assert stored_settings(isolated_env)["LANCEDB_PATH"] == str(sample_db)


def test_the_key_is_in_no_log_even_at_debug(sample_db, isolated_env, embed_server, caplog, monkeypatch):
    monkeypatch.setenv("LANCELOT_LOG_LEVEL", "debug")
    caplog.set_level(logging.DEBUG)
    embed_server.api_key = KEY
    result = cli(
        "--db",
        sample_db,
        "--api-key-stdin",
        "--base-url",
        embed_server.url,
        "--embedding-model",
        MODEL,
        input=f"{KEY}\n",
    )
    assert result.exit_code == 0, result.stderr
    assert caplog.records  # the openai client did log its request
    no_key_anywhere(caplog.text, result.stdout, result.stderr)


# -- 3. where the key goes ------------------------------------------------------------------------------


def test_no_keychain_means_the_encrypted_file(sample_db, isolated_env):
    result = cli("--db", sample_db, "--api-key-stdin", "--yes", input=f"{KEY}\n", OPENAI_BASE_URL=closed_url())
    assert result.exit_code == 0, result.stderr
    assert "No OS keychain works here (NoKeyringError)" in result.stderr
    key_file = isolated_env / keyfile.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((isolated_env / keyfile.SECRET_FILE).stat().st_mode) == 0o600
    assert KEY.encode() not in key_file.read_bytes()
    assert b"0123456789" not in key_file.read_bytes()
    assert keyfile.read_key(isolated_env) == KEY
    assert find_openai_key(isolated_env, environ={}).source == "file"
    for path in isolated_env.iterdir():
        no_key_anywhere(path.read_bytes().decode("utf-8", "replace"))


def test_a_working_keychain_gets_the_key_and_no_file_is_written(use_keyring, sample_db, isolated_env):
    backend = use_keyring(MemoryKeyring())
    keyfile.write_key(isolated_env, OTHER_KEY)  # an older key in the file: replaced, not left behind
    result = cli("--db", sample_db, "--api-key-stdin", "--yes", input=f"{KEY}\n", OPENAI_BASE_URL=closed_url())
    assert result.exit_code == 0, result.stderr
    assert "The key is in the OS keychain." in result.stderr
    assert backend.store == {(KEYRING_SERVICE, KEYRING_USER): KEY}
    assert not (isolated_env / keyfile.KEY_FILE).exists() and not (isolated_env / keyfile.SECRET_FILE).exists()
    assert find_openai_key(isolated_env, environ={}).source == "keychain"


def test_a_broken_keychain_backend_falls_back_to_the_file(use_keyring, sample_db, isolated_env):
    use_keyring(BrokenKeyring())
    result = cli("--db", sample_db, "--api-key-stdin", "--yes", input=f"{KEY}\n", OPENAI_BASE_URL=closed_url())
    assert result.exit_code == 0, result.stderr
    assert "(RuntimeError)" in result.stderr and "D-Bus" not in result.stderr
    assert keyfile.read_key(isolated_env) == KEY


def test_forget_removes_the_key_wherever_it_is(use_keyring, isolated_env, monkeypatch):
    result = cli("--forget")
    assert result.exit_code == 0 and "No stored OpenAI key was found" in result.stderr  # fail backend: fine

    keyfile.write_key(isolated_env, KEY)
    result = cli("--forget")
    assert result.exit_code == 0 and "from the key file" in result.stderr
    assert not (isolated_env / keyfile.KEY_FILE).exists() and not (isolated_env / keyfile.SECRET_FILE).exists()

    backend = use_keyring(MemoryKeyring())
    backend.set_password(KEYRING_SERVICE, KEYRING_USER, KEY)
    keyfile.write_key(isolated_env, OTHER_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-0000")
    result = cli("--forget")
    assert result.exit_code == 0, result.stderr
    assert "from the OS keychain and the key file" in result.stderr
    assert "OPENAI_API_KEY is still set" in result.stderr
    assert backend.store == {} and find_openai_key(isolated_env, environ={}) is None
    no_key_anywhere(result.stdout, result.stderr)


# -- 4. --show ------------------------------------------------------------------------------------------


def show_rows(stdout: str) -> dict[str, str]:
    rows = {}
    for line in stdout.splitlines():
        name, _, rest = line.partition("  ")
        if name.isupper() and "_" in name:
            rows[name] = " ".join(rest.split())
    return rows


def test_show_names_the_sources_and_masks_the_key(sample_db, isolated_env, monkeypatch):
    (isolated_env / "settings.json").write_text(
        json.dumps({"LANCEDB_PATH": "/from/file", "LANCEDB_TABLE": "notes", "EMBEDDING_MODEL": "m-file"})
    )
    keyfile.write_key(isolated_env, KEY)
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    monkeypatch.setenv("EMBEDDING_MODEL", "   ")  # blank: falls through to the file
    result = cli("--show")
    assert result.exit_code == 0, result.stderr
    rows = show_rows(result.stdout)
    assert rows["LANCEDB_PATH"] == f"{sample_db} environment (file has /from/file)"
    assert rows["LANCEDB_TABLE"] == "notes file"
    assert rows["EMBEDDING_MODEL"] == "m-file file"
    assert rows["LANCEDB_DEFAULT_LIMIT"] == "20 default"
    assert rows["OPENAI_API_KEY"].startswith("sk-…abcd file")
    assert str(isolated_env / "settings.json") in result.stdout and "LANCELOT_CONFIG_DIR" in result.stdout
    no_key_anywhere(result.stdout, result.stderr)

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment-9999")
    result = cli("--show", "--db", "/from/flag", "--table", "t-flag")
    rows = show_rows(result.stdout)
    assert rows["LANCEDB_PATH"] == "/from/flag flag (file has /from/file)"
    assert rows["LANCEDB_TABLE"] == "t-flag flag (file has notes)"
    assert rows["OPENAI_API_KEY"] == "sk-…9999 environment (also stored: file)"
    assert "sk-from-environment-9999" not in result.stdout


def test_show_with_nothing_stored(isolated_env):
    result = cli("--show")
    assert result.exit_code == 0, result.stderr
    rows = show_rows(result.stdout)
    assert rows["LANCEDB_PATH"] == "(not set) default"
    assert rows["OPENAI_API_KEY"].startswith("(none)")
    assert "(not written yet)" in result.stdout
    assert files_in(isolated_env) == {}  # --show writes nothing


# -- 5. the client configurations --------------------------------------------------------------------------


def test_client_configurations_are_exact_and_hold_no_key(tmp_path):
    db = str(tmp_path / "my docs" / "db")  # a space: the shell command must quote it
    configs = client_configs(db, "lancelot")
    server = {"command": "lancelot", "args": ["serve"], "env": {"LANCEDB_PATH": db}}
    assert shlex.split(configs["claude"]) == [
        "claude",
        "mcp",
        "add",
        "--env",
        f"LANCEDB_PATH={db}",
        "--transport",
        "stdio",
        "lancelot",
        "--",
        "lancelot",
        "serve",
    ]
    assert json.loads(configs["json"]) == {"mcpServers": {"lancelot": server}}
    prefix = "vscode:mcp/install?"
    assert configs["vscode"].startswith(prefix)
    assert json.loads(unquote(configs["vscode"][len(prefix) :])) == {"name": "lancelot", **server}
    assert " " not in configs["vscode"] and "{" not in configs["vscode"]
    prefix = "cursor://anysphere.cursor-deeplink/mcp/install?name=lancelot&config="
    assert configs["cursor"].startswith(prefix)
    assert json.loads(base64.b64decode(unquote(configs["cursor"][len(prefix) :]))) == server
    assert all(c not in configs["cursor"][len(prefix) :] for c in "+/=")  # URL-safe as a query value


def test_a_uvx_run_configures_clients_to_start_uvx(tmp_path, monkeypatch):
    """Issue 22: init run by uvx prints `uvx ... serve`, not the path of uvx's throwaway environment."""
    from lancelot_cli.cli.init.clients import server_launch
    from tests.test_install_hint import fake_dist

    throwaway = tmp_path / ".cache" / "uv" / "archive-v0" / "Xy1z"
    clone = tmp_path / "my clone"
    from_index = fake_dist(tmp_path / "index", None)
    from_clone = fake_dist(tmp_path / "clone", {"url": clone.as_uri(), "dir_info": {}})
    monkeypatch.setattr("shutil.which", lambda name: f"/opt/uv/bin/{name}" if name == "uvx" else None)
    assert server_launch(str(throwaway), {}, from_index) == ["/opt/uv/bin/uvx", "lancelot-cli"]
    assert server_launch(str(throwaway), {}, from_clone) == ["/opt/uv/bin/uvx", "--from", str(clone), "lancelot"]
    own_cache = tmp_path / "elsewhere"  # UV_CACHE_DIR moves the cache
    assert server_launch(str(own_cache / "archive-v0" / "a"), {"UV_CACHE_DIR": str(own_cache)}, from_index)[0] == (
        "/opt/uv/bin/uvx"
    )
    # Not uvx: a venv, pipx, or a folder that merely looks alike
    for prefix in (tmp_path / "venv", tmp_path / "archive-v0" / "x", tmp_path / "uv" / "archive-v0x"):
        assert server_launch(str(prefix), {}, from_index) == [server_command()]
    # The configurations start `uvx --from '/…/my clone' lancelot serve`, quoted in the shell form.
    command, *leading = server_launch(str(throwaway), {}, from_clone)
    configs = client_configs("/db", command, tuple(leading))
    server = json.loads(configs["json"])["mcpServers"]["lancelot"]
    assert server == {
        "command": command,
        "args": ["--from", str(clone), "lancelot", "serve"],
        "env": {"LANCEDB_PATH": "/db"},
    }
    assert shlex.split(configs["claude"])[-5:] == [command, "--from", str(clone), "lancelot", "serve"]
    prefix = "vscode:mcp/install?"
    assert json.loads(unquote(configs["vscode"][len(prefix) :]))["args"] == server["args"]


def test_printed_configurations_match_the_stored_database(sample_db, isolated_env):
    result = cli("--db", sample_db, "--no-api-key")
    configs = configs_in(result.stdout)
    server = configs["json"]["mcpServers"]["lancelot"]
    assert server["args"] == ["serve"] and server["env"] == {"LANCEDB_PATH": str(sample_db)}
    assert Path(server["command"]).is_absolute() and Path(server["command"]).name == "lancelot"
    expected = client_configs(str(sample_db), server["command"])
    assert json.loads(expected["json"]) == configs["json"]
    assert [configs[k] for k in ("claude", "vscode", "cursor")] == [expected[k] for k in ("claude", "vscode", "cursor")]


def test_all_five_configurations_use_the_absolute_script_path(sample_db, isolated_env):
    """Issue 14: no Codex TOML, no VS Code mcp.json, and a bare `lancelot` that GUI clients cannot find."""
    import tomllib

    result = cli("--db", sample_db, "--no-api-key")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    script = Path(sys.executable).with_name("lancelot")  # this venv's script, installed editable
    assert f"Server command: {script}" in out.splitlines()
    server = {"command": str(script), "args": ["serve"], "env": {"LANCEDB_PATH": str(sample_db)}}
    lines = out.splitlines()
    vscode_start = lines.index("VS Code (.vscode/mcp.json):") + 1
    vscode_end = lines.index("}", vscode_start)
    assert json.loads("\n".join(lines[vscode_start : vscode_end + 1])) == {
        "servers": {"lancelot": {"type": "stdio", **server}}
    }
    codex_start = lines.index("Codex (~/.codex/config.toml):") + 1
    codex = "\n".join(lines[codex_start : lines.index("", codex_start)])
    assert tomllib.loads(codex) == {"mcp_servers": {"lancelot": server}}
    configs = configs_in(out)
    assert shlex.split(configs["claude"])[-2:] == [str(script), "serve"]
    assert configs["json"]["mcpServers"]["lancelot"] == server
    assert unquote(configs["vscode"]).count(str(script)) == 1


def test_the_database_default_is_not_a_prefix_of_what_is_typed(tmp_path, sample_db, isolated_env):
    """Issue 14: a pre-filled /srv/db followed by typed /srv/newdb became /srv/db/srv/newdb."""
    (isolated_env / "settings.json").write_text(json.dumps({"LANCEDB_PATH": str(sample_db)}))
    other = tmp_path / "newdb"
    # typed without clearing anything first; it does not exist: "create it empty"; table: Enter
    plan = wizard(f"{other}{ENTER}" + DOWN + ENTER + ENTER, cwd=tmp_path, no_api_key=True)
    assert plan.db_uri == str(other) and plan.create_db
    plan = wizard(ENTER + "n" + ENTER, cwd=tmp_path, no_api_key=True)  # Enter alone takes it (then: index? no)
    assert plan.db_uri == str(other)


# -- 6. the real thing: a spawned server finds everything init stored ------------------------------------


@pytest.mark.slow
def test_spawned_server_uses_what_init_stored(tmp_path, vector_db, isolated_env, embed_server):
    embed_server.api_key = KEY  # the embeddings server answers only to the stored key
    result = cli(
        "--db",
        vector_db,
        "--api-key-stdin",
        "--base-url",
        embed_server.url,
        "--embedding-model",
        MODEL,
        input=f"{KEY}\n",
    )
    assert result.exit_code == 0, result.stderr
    assert (isolated_env / keyfile.KEY_FILE).exists()

    from mcp import Client, StdioServerParameters

    home = tmp_path / "home"
    home.mkdir()
    env = {
        "LANCELOT_CONFIG_DIR": str(isolated_env),
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PYTHONPATH": subprocess_env()["PYTHONPATH"],
    }
    command = lancelot_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve"], env=env)
    requests_before = embed_server.requests

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(params) as client:
            status = await client.call_tool("lancedb_status", {})
            search = await client.call_tool(
                "lancedb_search", {"query": "refund store credit", "searchType": "vector", "limit": 3}
            )
            return status.structured_content, search.structured_content

    status, search = anyio.run(run)
    assert status["connection"]["ok"] is True and status["connection"]["path"] == str(vector_db)
    assert status["embeddings"]["available"] is True and status["embeddings"]["keySource"] == "file"
    assert status["embeddings"]["model"] == MODEL and status["embeddings"]["dimensions"] == 32
    assert search["searchType"] == "vector" and search["count"] == 3
    assert embed_server.requests == requests_before + 1  # the query was embedded with the stored key


@pytest.mark.slow
def test_init_help_imports_no_heavy_library(tmp_path):
    probe = (
        "import json, sys\n"
        "sys.argv = ['lancelot', 'init', '--help']\n"
        "from lancelot_cli.cli.app import run\n"
        "run()\n"
        f"open({str(tmp_path / 'm.json')!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=subprocess_env(), timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "--api-key-stdin" in proc.stdout
    modules = json.loads((tmp_path / "m.json").read_text())
    heavy = ("questionary", "prompt_toolkit", "keyring", "openai", "lancedb", "cryptography")
    assert [m for m in modules if m.split(".")[0] in heavy] == []


# -- a stored key when vectors are turned off (issue 24) --------------------------------------------


def test_text_search_only_asks_whether_to_remove_the_stored_key(tmp_path, sample_db, isolated_env, capsys):
    keyfile.write_key(isolated_env, KEY)
    asked: list[str] = []
    # folder, table, then "Not at all: text search only" (two down), then "Remove it?" yes
    plan = wizard(f"{CLEAR}{sample_db}{ENTER}" + ENTER + DOWN * 2 + ENTER + "y", cwd=tmp_path, asked=asked)
    err = capsys.readouterr().err
    assert f"An OpenAI key is stored ({KEY[:3]}…{KEY[-4:]}, in the key file)." in err  # said before the choice
    assert any("would still use it. Remove it?" in question for question in asked)
    assert plan.key_action == "remove" and find_openai_key(isolated_env, environ={}) is None
    assert "The stored key was removed." in err


def test_no_api_key_without_a_terminal_says_the_stored_key_stays(sample_db, isolated_env):
    keyfile.write_key(isolated_env, KEY)
    result = cli("--db", sample_db, "--no-api-key")
    assert result.exit_code == 0, result.stderr
    assert f"The stored OpenAI key ({KEY[:3]}…{KEY[-4:]}, in the key file) stays" in result.stderr
    assert "lancelot init --forget" in result.stderr
    assert keyfile.read_key(isolated_env) == KEY
