"""The `lancelot` command line (SPEC §2): JSON parity with the MCP tools, human output, `--db`,
one-line errors with exit codes, lazy imports, and an end-to-end run of the real console script.

In-process runs use Typer's CliRunner (stdout and stderr captured apart, not a TTY); the MCP side
of the parity checks runs the real server through the SDK's in-memory client. Subprocess checks
run the installed console script. Expected values come from the sample files, from the table read
with plain lancedb, or from the MCP tool; never from the CLI's own helpers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

import lancelot_cli
from lancelot_cli.cli.app import app
from lancelot_cli.wire import to_json
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.servers import free_port

COMMANDS = ("serve", "index", "init", "status", "search", "query", "show", "version")
# How `lancelot --help` lists them: `init` first, a newcomer's first command (issue 45 item 10).
HELP_ORDER = ("init", "index", "search", "query", "show", "status", "serve", "ls", "version", "bench")
HEAVY = ("lancedb", "mcp", "openai", "trafilatura", "questionary", "pyarrow", "keyring")
# Not heavy, but for help and completion each costs more than the rest of the run (help is drawn by
# cli/helpfmt.py without rich; cli/app.py keeps typer from building pydantic validators it does not use).
SLOW_FOR_HELP = ("pydantic", "rich")
SUBPROCESS_TIMEOUT = 60


# -- helpers --------------------------------------------------------------------------------------


def cli(*args: str | Path) -> Any:
    """Run `lancelot ARGS` in-process; stdout and stderr are captured apart."""
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


def mcp_tool(tool: str, arguments: dict[str, Any]) -> str:
    """The text the MCP tool returns, through the in-memory client, with settings from the environment."""
    from mcp import Client

    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async def call() -> str:
        async with Client(build_server(load())) as client:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content
            assert [part.type for part in result.content].count("text") == 1  # search adds resource links
            return text_of(result)

    return anyio.run(call)


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=subprocess_env(**env),
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )


def error_line(result: Any) -> str:
    """The CLI's error: exactly one line on stderr, `lancelot: error: ...`, and no traceback anywhere."""
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{result.stderr}"
    assert lines[0].startswith("lancelot: error: "), lines[0]
    return lines[0]


def table_columns(db: Path, table: str = "documents") -> list[str]:
    import lancedb

    return lancedb.connect(str(db)).open_table(table).schema.names


def table_rows(db: Path, table: str = "documents") -> int:
    import lancedb

    return lancedb.connect(str(db)).open_table(table).count_rows()


# -- 1. --json is byte-identical to the MCP tool's text ---------------------------------------------


@pytest.mark.parametrize(
    ("flags", "arguments"),
    [
        ([], {}),
        (["--limit", "3", "--type", "text"], {"limit": 3, "searchType": "text"}),
        (["--type", "vector"], {"searchType": "vector"}),  # no vectors: falls back with a note
        (
            ["-n", "2", "--table", "documents", "--text-column", "text"],
            {"limit": 2, "table": "documents", "textColumn": "text"},
        ),
    ],
    ids=["defaults", "limit-and-text", "vector-fallback-note", "short-limit-table-column"],
)
def test_search_json_is_the_mcp_tool_text(
    monkeypatch: pytest.MonkeyPatch, sample_db: Path, flags: list[str], arguments: dict[str, Any]
) -> None:
    result = cli("search", "refund policy", *flags, "--db", sample_db, "--json")
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    text = mcp_tool("lancedb_search", {"query": "refund policy", **arguments})
    assert result.stdout_bytes == (text + "\n").encode("utf-8")
    assert result.stderr == ""
    reply = json.loads(result.stdout)
    assert reply["count"] == len(reply["hits"]) > 0
    if "limit" in arguments:
        assert reply["count"] <= arguments["limit"]
    if arguments.get("searchType") == "vector":
        assert reply["searchType"] == "text" and "vector" in reply["note"]


def test_search_json_keeps_non_ascii_as_is(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> None:
    query = "déjà vu — remboursement"
    result = cli("search", query, "--db", sample_db, "--json")
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    assert result.stdout_bytes == (mcp_tool("lancedb_search", {"query": query}) + "\n").encode("utf-8")
    assert query.encode("utf-8") in result.stdout_bytes  # UTF-8 kept, not \u escapes
    assert json.loads(result.stdout)["query"] == query


@pytest.mark.parametrize("verbose", [False, True], ids=["plain", "verbose"])
def test_status_json_is_the_mcp_tool_text(monkeypatch: pytest.MonkeyPatch, sample_db: Path, verbose: bool) -> None:
    result = cli("status", "--db", sample_db, "--json", *(["--verbose"] if verbose else []))
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    text = mcp_tool("lancedb_status", {"verbose": verbose})
    if verbose:
        # The server adds its own usage metrics (the CLI has none); everything else is the same JSON.
        served = json.loads(text)
        assert set(served.pop("usage")) == {"since", "tools"}
        text = to_json(served)
    assert result.stdout_bytes == (text + "\n").encode("utf-8")
    reply = json.loads(result.stdout)
    assert reply["connection"] == {"path": str(sample_db), "ok": True, "store": "local", "consistencySeconds": 0.0}
    assert [t["name"] for t in reply["tables"]] == ["documents"]
    assert reply["tables"][0]["rows"] == table_rows(sample_db)
    assert ("columns" in reply["tables"][0]) is verbose


def test_status_json_on_a_missing_db_is_the_mcp_tool_text_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    result = cli("status", "--db", missing, "--json")
    assert result.exit_code == 1
    monkeypatch.setenv("LANCEDB_PATH", str(missing))
    assert result.stdout_bytes == (mcp_tool("lancedb_status", {}) + "\n").encode("utf-8")
    assert json.loads(result.stdout)["connection"]["ok"] is False
    assert not missing.exists()


def test_version_json_is_the_mcp_tool_text() -> None:
    result = cli("version", "--json")
    assert result.exit_code == 0, result.stderr
    text = mcp_tool("lancedb_version", {})
    assert result.stdout_bytes == (text + "\n").encode("utf-8")
    reply = json.loads(result.stdout)
    assert reply["name"] == "lancelot"
    assert reply["version"] == lancelot_cli.__version__
    assert reply["features"]["readOnly"] is True


@pytest.mark.parametrize(
    ("flags", "arguments"),
    [
        ([], {}),
        (["--budget", "1000", "--limit", "3"], {"contextBudget": 1000, "limit": 3}),
        (["--warm-start"], {"warmStart": True}),
    ],
    ids=["defaults", "budget-and-limit", "warm-start"],
)
def test_query_json_context_is_the_mcp_tool_text(
    monkeypatch: pytest.MonkeyPatch, sample_db: Path, flags: list[str], arguments: dict[str, Any]
) -> None:
    question = "how do refunds work?"
    result = cli("query", question, *flags, "--db", sample_db, "--json")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(result.stdout)
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    assert reply["context"] == mcp_tool("lancedb_query", {"question": question, **arguments})
    assert reply["question"] == question
    assert reply["budget"] == arguments.get("contextBudget", 8000)
    assert len(reply["context"]) <= reply["budget"]
    assert reply["mode"] == ("overview" if arguments.get("warmStart") else "question")


@pytest.mark.parametrize("flags", [[], ["--limit", "3", "--type", "text"]], ids=["defaults", "limit-3"])
def test_search_jsonl_is_one_hit_of_the_json_reply_per_line(sample_db: Path, flags: list[str]) -> None:
    result = cli("search", "refund policy", *flags, "--db", sample_db, "--jsonl")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    reply = json.loads(cli("search", "refund policy", *flags, "--db", sample_db, "--json").stdout)
    lines = result.stdout.splitlines()
    assert result.stdout.endswith("\n")
    assert [json.loads(line) for line in lines] == reply["hits"]
    assert len(lines) == reply["count"] > 0
    assert all("\n" not in line and line.startswith("{") for line in lines)


def test_search_jsonl_with_no_match_prints_nothing_and_exits_0(sample_db: Path) -> None:
    result = cli("search", "xylophonezzq", "--db", sample_db, "--jsonl")
    assert result.exit_code == 0
    assert result.stdout == "" and result.stderr == ""


def test_search_jsonl_puts_the_fallback_note_on_stderr(sample_db: Path) -> None:
    result = cli("search", "refund policy", "--db", sample_db, "--type", "vector", "--jsonl")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(cli("search", "refund policy", "--db", sample_db, "--type", "vector", "--json").stdout)
    assert [json.loads(line) for line in result.stdout.splitlines()] == reply["hits"]
    assert result.stderr.strip() == f"note: {reply['note']}"


# -- 2. human output -------------------------------------------------------------------------------


def test_search_prints_titles_and_sources_and_a_count_line_on_stderr(sample_db: Path) -> None:
    result = cli("search", "refund policy", "--db", sample_db)
    assert result.exit_code == 0, result.stderr
    hits = json.loads(cli("search", "refund policy", "--db", sample_db, "--json").stdout)["hits"]
    assert hits
    for hit in hits:
        assert hit["title"] in result.stdout
        assert hit["source"] in result.stdout
    # The refunds page is a hit; its title comes from its own first heading.
    first_line = (SAMPLE_DOCS / "policies" / "refunds.md").read_text(encoding="utf-8").splitlines()[0]
    assert first_line.lstrip("# ").strip() in result.stdout
    assert "policies/refunds.md" in result.stdout
    count_line = f"{len(hits)} hit{'s' if len(hits) != 1 else ''} in table 'documents'"
    assert count_line in result.stderr
    assert count_line not in result.stdout  # stdout is only the results
    assert "\x1b[" not in result.stdout  # not a terminal: no colour codes


def test_search_with_no_match_exits_0_and_says_so_on_stderr(sample_db: Path) -> None:
    result = cli("search", "xylophonezzq", "--db", sample_db)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "No matches" in result.stderr and "xylophonezzq" in result.stderr


def test_query_prints_the_markdown_block(sample_db: Path) -> None:
    question = "how do refunds work?"
    result = cli("query", question, "--db", sample_db, "--budget", "3000")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"# Context for: {question}"
    assert "source: policies/refunds.md" in result.stdout
    assert len(result.stdout) <= 3000
    # The same block as --json's context (plain text when piped), summary on stderr only.
    reply = json.loads(cli("query", question, "--db", sample_db, "--budget", "3000", "--json").stdout)
    assert result.stdout == reply["context"]
    assert f"{reply['included']} chunk(s)" in result.stderr


def test_status_shows_the_table_and_its_row_count(sample_db: Path) -> None:
    result = cli("status", "--db", sample_db)
    assert result.exit_code == 0, result.stderr
    rows = table_rows(sample_db)
    assert str(sample_db) in result.stdout
    assert re.search(rf"\bdocuments\b.*\b{rows}\b", result.stdout), result.stdout


def test_version_prints_one_line_with_the_version() -> None:
    result = cli("version")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"lancelot {lancelot_cli.__version__}")
    assert re.search(rf"(?<![\d.]){re.escape(lancelot_cli.__version__)}(?![\d.])", lines[0])


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag_prints_the_version_and_exits_0(flag: str) -> None:
    """Issue 12: `lancelot --version` was "No such option"."""
    result = cli(flag)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"lancelot {lancelot_cli.__version__}\n"
    assert cli(flag, "search").exit_code == 0  # eager: it wins over a command that would need more


# -- 3. --db, global and per command, over LANCEDB_PATH -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["search", "refund policy", "--json"], ["status", "--json"], ["query", "how do refunds work?", "--json"]],
    ids=["search", "status", "query"],
)
@pytest.mark.parametrize("where", ["global", "command"])
def test_db_flag_overrides_lancedb_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sample_db: Path, command: list[str], where: str
) -> None:
    wrong = tmp_path / "wrong-db"
    monkeypatch.setenv("LANCEDB_PATH", str(wrong))
    args = ["--db", str(sample_db), *command] if where == "global" else [*command, "--db", str(sample_db)]
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    reply = json.loads(result.stdout)
    if command[0] == "status":
        assert reply["connection"] == {"path": str(sample_db), "ok": True, "store": "local", "consistencySeconds": 0.0}
    else:
        assert reply["table"] == "documents"
        assert reply.get("count", reply.get("included")) > 0
    assert not wrong.exists()


def test_without_db_flag_lancedb_path_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sample_db: Path) -> None:
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    assert json.loads(cli("search", "refund policy", "--json").stdout)["count"] > 0
    wrong = tmp_path / "wrong-db"
    monkeypatch.setenv("LANCEDB_PATH", str(wrong))
    result = cli("search", "refund policy", "--json")
    assert result.exit_code == 1
    assert str(wrong) in error_line(result)


def test_command_db_wins_over_global_db(tmp_path: Path, sample_db: Path) -> None:
    wrong = tmp_path / "wrong-db"
    result = cli("--db", wrong, "search", "refund policy", "--db", sample_db, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["count"] > 0


# -- 4. errors: one line, exit code, no traceback ------------------------------------------------------

ERROR_CASES = {
    # id: (args, with {db} / {tmp} placeholders; exit code; words the line must contain)
    "no-lancedb-path": (["search", "refund"], 1, ["LANCEDB_PATH", "lancelot init"]),
    "missing-db-folder": (
        ["search", "refund", "--db", "{tmp}/nope"],
        1,
        ["{tmp}/nope", "does not exist", "lancelot index"],
    ),
    "missing-db-folder-global": (["--db", "{tmp}/nope", "query", "refund"], 1, ["{tmp}/nope", "does not exist"]),
    "missing-table": (["search", "refund", "--db", "{db}", "--table", "nosuch"], 1, ["'nosuch'", "documents"]),
    "missing-table-query": (["query", "refund", "--db", "{db}", "-t", "nosuch"], 1, ["'nosuch'", "documents"]),
    "wrong-text-column": (["search", "refund", "--db", "{db}", "--text-column", "body"], 1, ["'body'", "{columns}"]),
    "limit-0": (["search", "refund", "--db", "{db}", "--limit", "0"], 2, ["--limit", "--help"]),
    "limit-201": (["search", "refund", "--db", "{db}", "--limit", "201"], 2, ["--limit", "--help"]),
    "unknown-type": (
        ["search", "refund", "--db", "{db}", "--type", "fuzzy"],
        2,
        ["--type", "fuzzy", "auto", "text", "vector", "hybrid"],
    ),
    "budget-too-small": (["query", "refund", "--db", "{db}", "--budget", "10"], 2, ["--budget", "200"]),
    "missing-query": (["search", "--db", "{db}"], 2, ["QUERY", "--help"]),
    "unknown-command": (["serach", "refund"], 2, ["serach", "--help"]),
    "unknown-global-option": (["--dbb", "{db}", "status"], 2, ["--dbb", "--help"]),
    "index-missing-source": (["index", "{tmp}/no-such-src", "{tmp}/newdb"], 1, ["{tmp}/no-such-src", "does not exist"]),
    "index-embed-without-key": (
        ["index", "{docs}", "{tmp}/newdb", "--embed"],
        1,
        ["--embed", "OPENAI_API_KEY", "lancelot init"],
    ),
    "json-and-jsonl": (["search", "refund", "--db", "{db}", "--json", "--jsonl"], 2, ["--json", "--jsonl", "--help"]),
    "budget-not-a-number": (["query", "refund", "--db", "{db}", "--budget", "lots"], 2, ["--budget", "integer"]),
    "status-unknown-option": (["status", "--db", "{db}", "--tables"], 2, ["--tables", "lancelot status --help"]),
}


@pytest.mark.parametrize("case", list(ERROR_CASES), ids=list(ERROR_CASES))
def test_error_is_one_line_with_exit_code(tmp_path: Path, sample_db: Path, case: str) -> None:
    args, code, needles = ERROR_CASES[case]
    columns = table_columns(sample_db)

    def fill(text: str) -> str:
        return text.replace("{db}", str(sample_db)).replace("{tmp}", str(tmp_path)).replace("{docs}", str(SAMPLE_DOCS))

    result = cli(*[fill(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.stderr)
    line = error_line(result)
    assert result.stdout == ""
    for needle in needles:
        if needle == "{columns}":
            for column in columns:  # the table's real columns, read with lancedb
                assert column in line
        else:
            assert fill(needle) in line, (needle, line)
    # Nothing is created by a failed command.
    assert not (tmp_path / "nope").exists()
    assert not (tmp_path / "newdb").exists()


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    return free_port()


@pytest.fixture
def no_retry_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai client still retries, but without its backoff sleeps (up to ~25 s for `index --embed`)."""
    import openai._base_client

    monkeypatch.setattr(openai._base_client.BaseClient, "_calculate_retry_timeout", lambda *a, **k: 0.0)


def test_vector_search_with_an_unreachable_endpoint_falls_back_to_text(
    monkeypatch: pytest.MonkeyPatch, vector_env: Any, closed_port: int, no_retry_wait: None
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port}/v1")
    result = cli("search", "refund policy", "--type", "vector")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "policies/refunds.md" in result.stdout  # text search still answered
    note = next(line for line in result.stderr.splitlines() if line.startswith("note:"))
    assert "text" in note and f"127.0.0.1:{closed_port}" in note, note
    assert "(text search, ranked by bm25)" in result.stderr
    reply = json.loads(cli("search", "refund policy", "--type", "vector", "--json").stdout)
    assert reply["searchType"] == "text" and f"127.0.0.1:{closed_port}" in reply["note"]
    assert vector_env.requests == 0  # nothing reached the working embeddings server


def test_index_embed_with_an_unreachable_endpoint_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, closed_port: int, no_retry_wait: None
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = cli("index", SAMPLE_DOCS, tmp_path / "db", "--embed")
    assert result.exit_code == 1
    line = error_line(result)
    assert url in line and "OPENAI_BASE_URL" in line, line
    assert result.stdout == ""


def test_status_on_a_missing_db_exits_1_and_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = cli("status", "--db", missing)
    assert result.exit_code == 1
    assert "does not exist" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not missing.exists()


def test_status_without_any_db_exits_1_and_points_to_init() -> None:
    result = cli("status")
    assert result.exit_code == 1
    assert "LANCEDB_PATH" in result.stdout + result.stderr
    assert "lancelot init" in result.stdout + result.stderr


@pytest.fixture
def corrupt_db(tmp_path: Path) -> Path:
    """A database whose `documents` table has a garbage manifest: lancedb fails in an unplanned way."""
    db = tmp_path / "corrupt"
    (db / "documents.lance" / "_versions").mkdir(parents=True)
    (db / "documents.lance" / "_versions" / "1.manifest").write_bytes(b"junk\n")
    return db


def test_unexpected_error_is_one_line_without_debug(corrupt_db: Path) -> None:
    result = cli("search", "refund", "--db", corrupt_db)
    assert result.exit_code == 1
    line = error_line(result)
    assert "unexpected" in line and "LANCELOT_LOG_LEVEL=debug" in line


@pytest.mark.slow
def test_unexpected_error_shows_a_traceback_with_debug(corrupt_db: Path) -> None:
    proc = run([*lancelot_command(), "search", "refund", "--db", str(corrupt_db)], LANCELOT_LOG_LEVEL="debug")
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr


# -- 5. the console script, help and lazy imports ------------------------------------------------------


@pytest.mark.slow
def test_console_script_help_lists_the_commands() -> None:
    proc = run([*lancelot_command(), "--help"])
    assert proc.returncode == 0, proc.stderr
    for command in COMMANDS:
        assert re.search(rf"\b{command}\b", proc.stdout), command


def test_help_lists_init_first_then_the_everyday_commands() -> None:
    result = CliRunner().invoke(app, ["--help"], prog_name="lancelot", terminal_width=80)
    assert result.exit_code == 0, result.output
    box = result.output[result.output.index("Commands") :]
    listed = re.findall(r"^│ (\w+) ", box, re.M)
    assert tuple(listed) == HELP_ORDER


@pytest.mark.slow
def test_python_dash_m_help_works() -> None:
    proc = run([sys.executable, "-m", "lancelot_cli", "--help"])
    assert proc.returncode == 0, proc.stderr
    for command in COMMANDS:
        assert re.search(rf"\b{command}\b", proc.stdout), command


IMPORT_PROBE = """
import json, sys
target, args = sys.argv[1], json.loads(sys.argv[2])
sys.argv = ["lancelot", *args]
from lancelot_cli.cli.app import run
code = run()  # main() would end the process with os._exit before the modules are written
with open(target, "w", encoding="utf-8") as fh:
    json.dump({"code": code, "modules": sorted(sys.modules)}, fh)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["search", "--help"],
        ["index", "--help"],
        ["query", "--help"],
        ["status", "--help"],
        ["serve", "--help"],
        ["version", "--help"],
        ["init", "--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_help_imports_no_heavy_library(tmp_path: Path, args: list[str]) -> None:
    target = tmp_path / "modules.json"
    proc = run([sys.executable, "-c", IMPORT_PROBE, str(target), json.dumps(args)])
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout
    probe = json.loads(target.read_text(encoding="utf-8"))
    assert probe["code"] in (0, None)
    loaded = [m for m in probe["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY + SLOW_FOR_HELP)]
    assert loaded == []
    assert "lancelot_cli.cli.app" in probe["modules"]  # the probe did run our code


@pytest.mark.slow
@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("lancelot se", {"search", "serve"}),
        ("lancelot search x --table ", {"documents"}),
        ("lancelot search --type ", {"auto", "text", "vector", "hybrid"}),
    ],
    ids=["command", "table", "choice"],
)
def test_completion_imports_no_heavy_library(tmp_path: Path, words: str, expected: set[str]) -> None:
    db = tmp_path / "db"
    (db / "documents.lance").mkdir(parents=True)
    target = tmp_path / "modules.json"
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    proc = run(
        [sys.executable, "-c", IMPORT_PROBE, str(target), "[]"],
        COMP_WORDS=words,
        COMP_CWORD=str(cword),
        _LANCELOT_COMPLETE="complete_bash",
        LANCEDB_PATH=str(db),
    )
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) == expected
    probe = json.loads(target.read_text(encoding="utf-8"))
    loaded = [m for m in probe["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY + SLOW_FOR_HELP)]
    assert loaded == []


# -- 6. end to end with the real console script ---------------------------------------------------------


@pytest.mark.slow
def test_index_then_search_then_query(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    lancelot = lancelot_command()
    proc = run([*lancelot, "index", str(docs), str(db)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the summary is on stderr
    assert db.is_dir()
    assert table_rows(db) > 0

    proc = run([*lancelot, "search", "refund policy", "--db", str(db), "--json"])
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)
    assert reply["count"] > 0
    assert reply["hits"][0]["source"] in {"policies/refunds.md", "README.md"}
    assert "policies/refunds.md" in [hit["source"] for hit in reply["hits"]]

    question = "how do refunds work?"
    proc = run([*lancelot, "query", question, "--db", str(db), "--budget", "1000"])
    assert proc.returncode == 0, proc.stderr
    assert 0 < len(proc.stdout) <= 1000
    assert proc.stdout.startswith(f"# Context for: {question}")


def _tables(db: Path) -> set[str]:
    return {p.name[: -len(".lance")] for p in db.glob("*.lance")}


def test_index_defaults_to_the_stored_database_and_table(docs: Path, tmp_path: Path, isolated_env: Path) -> None:
    """Issue 14: after `init --table notes`, `index ./docs` wrote "documents" (and needed DB): serve never saw it."""
    from lancelot_cli.settings import write_stored

    db = tmp_path / "stored-db"
    write_stored(isolated_env, {"LANCEDB_PATH": str(db), "LANCEDB_TABLE": "notes"})
    result = cli("index", docs)
    assert result.exit_code == 0, result.stderr
    assert _tables(db) == {"notes"}
    other = tmp_path / "given-db"
    result = cli("index", docs, other)  # DB given: the stored table still applies
    assert result.exit_code == 0, result.stderr
    assert _tables(other) == {"notes"}
    search = cli("search", "refund policy", "--json")  # what the other commands read: the same table
    assert search.exit_code == 0 and json.loads(search.stdout)["count"] > 0


def test_index_table_precedence_flag_env_file(
    docs: Path, tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lancelot_cli.settings import write_stored

    db = tmp_path / "db"
    write_stored(isolated_env, {"LANCEDB_TABLE": "from_file"})
    monkeypatch.setenv("LANCEDB_TABLE", "from_env")
    assert cli("index", docs, db).exit_code == 0
    assert cli("index", docs, db, "--table", "from_flag").exit_code == 0
    assert _tables(db) == {"from_env", "from_flag"}


def test_index_without_any_database_says_how_to_name_one(docs: Path) -> None:
    result = cli("index", docs)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "lancelot index SRC DB" in result.stderr
    assert "lancelot init" in result.stderr


# -- 7. vector and hybrid search through the embeddings server -------------------------------------------


def test_search_json_auto_is_hybrid_with_vectors(vector_env: Any) -> None:
    result = cli("search", "refund policy", "--json")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(result.stdout)
    assert reply["searchType"] == "hybrid"
    assert reply["ranking"] == "rrf"
    assert "note" not in reply
    assert reply["count"] > 0
    assert vector_env.requests >= 1  # the query really went to the embeddings server


def test_search_json_type_text_stays_text_with_vectors(vector_env: Any) -> None:
    result = cli("search", "refund policy", "--type", "text", "--json")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(result.stdout)
    assert reply["searchType"] == "text"
    assert reply["ranking"] == "bm25"
    assert reply["count"] > 0
    assert vector_env.requests == 0  # text search needs no embedding


def test_search_json_vector_is_the_mcp_tool_text(vector_env: Any) -> None:
    result = cli("search", "refund policy", "--type", "vector", "--limit", "5", "--json")
    assert result.exit_code == 0, result.stderr
    reply = json.loads(result.stdout)
    assert reply["searchType"] == "vector" and reply["ranking"] == "distance"
    text = mcp_tool("lancedb_search", {"query": "refund policy", "searchType": "vector", "limit": 5})
    assert result.stdout_bytes == (text + "\n").encode("utf-8")


# -- show and filters (the lancedb_document tool and the tools' filters, on the command line) ---------


def test_show_prints_the_document_tool_text(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> None:
    result = cli("show", "policies/shipping.md", "--db", sample_db)
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    assert result.stdout == mcp_tool("lancedb_document", {"source": "policies/shipping.md"})
    assert "DEC-0054" in result.stdout
    window = cli("show", "policies/shipping.md#0", "--before", "0", "--after", "0", "--db", sample_db, "--json")
    assert json.loads(window.stdout)["first"] == 0 and json.loads(window.stdout)["source"] == "policies/shipping.md"


def test_show_of_an_unknown_document_is_one_line(sample_db: Path) -> None:
    result = cli("show", "nope.md", "--db", sample_db)
    assert result.exit_code == 1
    # a person is pointed at the command, not at the MCP tool (issue 15: terminal messages spoke MCP)
    assert result.stderr.count("\n") == 1 and "lancelot search" in result.stderr


def test_search_filters_match_the_tool_filters(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> None:
    result = cli("search", "refund", "--db", sample_db, "--path-prefix", "policies/", "-f", "chunk=0", "--json")
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
    assert (
        result.stdout
        == mcp_tool("lancedb_search", {"query": "refund", "pathPrefix": "policies/", "filters": {"chunk": "0"}}) + "\n"
    )
    assert all(hit["source"].startswith("policies/") for hit in json.loads(result.stdout)["hits"])
    bad = cli("search", "refund", "--db", sample_db, "--filter", "no-equals-sign")
    assert bad.exit_code == 2 and "COLUMN=VALUE" in bad.stderr
    missing = cli("query", "refund", "--db", sample_db, "-f", "kind=adr")
    assert missing.exit_code == 1 and "its columns are" in missing.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", [["status"], ["search", "refund", "-n", "20"]])
def test_a_closed_pipe_ends_a_command_quietly(sample_db: Path, command: list[str]) -> None:
    """`lancelot status | head -1`: the reader closed the pipe; no "unexpected BrokenPipeError"."""
    import subprocess

    from tests.conftest import lancelot_command, subprocess_env

    proc = subprocess.Popen(
        [*lancelot_command(), *command, "--db", str(sample_db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(5)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 1), err  # 1 when the write failed (rich's own rule), 0 when all fitted
    assert "BrokenPipe" not in err and "error" not in err, err


# -- issue 46: arguments that are not UTF-8 ---------------------------------------------------------

NOT_UTF8 = {  # as Python receives `$'\xff\xfe'` from a UTF-8 shell: surrogate escapes
    "QUERY": ["search", "\udcff\udcfe"],
    "--also": ["search", "refund", "--also", "caf\udce9"],
    "QUESTION": ["query", "\udcff"],
    "--table": ["search", "refund", "--table", "\udcff"],
    "--path-prefix": ["search", "refund", "--path-prefix", "\udcff/"],
    "--filter": ["search", "refund", "--filter", "kind=\udcff"],
    "SOURCE[#N]": ["show", "\udcff.md"],
}


@pytest.mark.parametrize(("name", "args"), NOT_UTF8.items(), ids=NOT_UTF8.keys())
def test_a_text_argument_that_is_not_utf8_is_a_one_line_usage_error(
    sample_db: Path, name: str, args: list[str]
) -> None:
    """It ended in "unexpected UnicodeEncodeError ... surrogates not allowed", exit 1."""
    result = cli(*args, "--db", sample_db)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"lancelot: error: Invalid value for '{name}")
    assert "not valid UTF-8: '" in result.stderr and result.stderr.count("\n") == 1
    assert "UnicodeEncodeError" not in result.stderr


def test_a_database_path_that_is_not_utf8_is_still_a_path(tmp_path: Path) -> None:
    """File and folder names may be any bytes: a missing one is reported as missing, not refused."""
    result = cli("search", "refund", "--db", f"{tmp_path}/\udcff")
    assert result.exit_code == 1 and "does not exist" in result.stderr


@pytest.mark.slow
def test_the_console_script_refuses_non_utf8_bytes_in_one_line(sample_db: Path) -> None:
    done = subprocess.run(
        [*lancelot_command(), "search", "refund", "--also", "\udcff\udcfe", "--db", str(sample_db)],
        capture_output=True,
        timeout=SUBPROCESS_TIMEOUT,
        env=subprocess_env(LANCELOT_WARM="0"),
        check=False,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(b"lancelot: error: Invalid value for '--also': not valid UTF-8: '\\xff\\xfe'")
    assert done.stderr.count(b"\n") == 1
