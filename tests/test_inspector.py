"""Interop with a client nobody here wrote: the MCP Inspector's CLI mode, fetched from the npm
registry by ``npx``, drives ``lancelot serve`` over stdio.

The Inspector version is pinned so CI is reproducible. The first run downloads it (about 200 MB
into npm's cache, ~/.npm by default, which also works for root); later runs start in about 1-2 s.
The test skips only when ``npx`` is missing; a failed download or a failed call is a failure.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.expected import TOOLS

pytestmark = [pytest.mark.inspector, pytest.mark.slow]

# Verified with Node 20 and npm 11 (npm prints EBADENGINE warnings because the package asks for
# Node >= 22.19, but the CLI runs fine over stdio).
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
# Generous: the first call may download the package.
TIMEOUT = 300

NPX = shutil.which("npx")
needs_npx = pytest.mark.skipif(NPX is None, reason="npx is not on PATH (install Node.js to run the MCP Inspector test)")


@pytest.fixture(scope="module")
def inspector_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents indexed into a database of this module's own."""
    from lancelot_cli.indexer import index_folder

    db = tmp_path_factory.mktemp("inspector") / "db"
    index_folder(SAMPLE_DOCS, str(db))
    return db


# The Inspector's replies by (database, method arguments, tool_error): a call the module already made
# (the first surface call is the search test's call, argument for argument) is not made again; each
# run is npx, node and a `lancelot serve`, several seconds on a loaded machine.
_REPLIES: dict[tuple[str, tuple[str, ...], bool], dict[str, Any]] = {}


def inspector(db: Path, tmp_path: Path, *method_args: str, tool_error: bool = False) -> dict[str, Any]:
    """`run_inspector`, once per database, arguments and ``tool_error`` in this module."""
    key = (str(db), method_args, tool_error)
    if key not in _REPLIES:
        _REPLIES[key] = run_inspector(db, tmp_path, *method_args, tool_error=tool_error)
    return copy.deepcopy(_REPLIES[key])


def run_inspector(db: Path, tmp_path: Path, *method_args: str, tool_error: bool = False) -> dict[str, Any]:
    """Run the Inspector CLI against `lancelot serve` and return the ``result`` of its JSON output.

    With ``tool_error``, the call must come back as a tool error: the Inspector prints the result
    (parsed and checked by the TypeScript SDK) and then exits 5 with a ``tool_is_error`` envelope;
    any other failure (a reply the SDK rejects, a crash) is a failure here.

    The Inspector gives the server only HOME, PATH, SHELL, TERM and the ``-e`` variables, so
    everything the server needs is passed with ``-e``. Options come first and the server command
    after ``--``, so a command such as ``python -m lancelot_cli`` is not read as Inspector options.
    """
    assert NPX is not None
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    server_env = {
        "LANCEDB_PATH": str(db),
        "LANCELOT_CONFIG_DIR": str(config),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PYTHONPATH": str(REPO),
    }
    args = [NPX, "-y", INSPECTOR, "--cli"]
    for key, value in server_env.items():
        args += ["-e", f"{key}={value}"]
    args += [*method_args, "--format", "json", "--", *lancelot_command(), "serve"]

    env = subprocess_env(
        # Keep the Inspector's own files out of the home folder.
        MCP_CATALOG_PATH=str(tmp_path / "inspector-catalog.json"),
        MCP_CLIENT_CONFIG_PATH=str(tmp_path / "inspector-client.json"),
        npm_config_update_notifier="false",
        npm_config_prefer_offline="true",  # the cached package as it is (~1 s a call); fetched if absent
        npm_config_fund="false",
        npm_config_audit="false",
    )
    try:
        proc = subprocess.run(
            args,
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(f"MCP Inspector ({INSPECTOR}) did not finish within {TIMEOUT} s: {args}\nstderr:\n{stderr[-4000:]}")
    if tool_error:
        lines = proc.stdout.splitlines()
        envelope = json.loads(proc.stderr.strip().splitlines()[-1]) if proc.stderr.strip() else {}
        assert proc.returncode == 5 and envelope.get("error", {}).get("code") == "tool_is_error", (
            f"expected a tool error (exit 5), got exit {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
        result = json.loads(lines[0])["result"]
        assert result["isError"] is True, result
        return result
    if proc.returncode != 0:
        pytest.fail(
            f"MCP Inspector ({INSPECTOR}) exited with {proc.returncode} (a failed npm download "
            f"or a failed MCP call): {args}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
        )
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"MCP Inspector printed no JSON object:\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
        )
    assert "result" in out, out
    return out["result"]


def call_text(result: dict[str, Any]) -> str:
    """The single text block of a successful tools/call result."""
    assert result.get("isError") is not True, result
    texts = [block["text"] for block in result["content"] if block.get("type") == "text"]
    assert len(texts) == 1, result
    return texts[0]


@needs_npx
def test_tools_list_has_the_four_read_only_tools(inspector_db: Path, tmp_path: Path) -> None:
    result = inspector(inspector_db, tmp_path, "--method", "tools/list")
    tools = result["tools"]
    names = [tool["name"] for tool in tools]
    assert sorted(names) == sorted(TOOLS)
    for tool in tools:
        annotations = tool.get("annotations") or {}
        assert annotations.get("readOnlyHint") is True, tool["name"]
        # destructiveHint only means something when readOnlyHint is false (MCP spec): absent is fine.
        assert annotations.get("destructiveHint") in (False, None), tool["name"]


@needs_npx
def test_search_call_returns_json_hits(inspector_db: Path, tmp_path: Path) -> None:
    result = inspector(
        inspector_db,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "lancedb_search",
        "--tool-arg",
        "query=refund",
        "--tool-arg",
        "limit=2",
    )
    reply = json.loads(call_text(result))
    assert reply["query"] == "refund"
    sources = [hit["source"] for hit in reply["hits"]]
    assert "policies/refunds.md" in sources, reply
    assert 1 <= len(sources) <= 2
    assert reply["count"] == len(sources)


@needs_npx
def test_query_call_returns_markdown(inspector_db: Path, tmp_path: Path) -> None:
    result = inspector(
        inspector_db,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "lancedb_query",
        "--tool-arg",
        "question=How do refunds work?",
        "--tool-arg",
        "contextBudget=2000",
    )
    text = call_text(result)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert text.startswith("# "), text[:200]
    assert "\n## " in text, text[:500]
    assert "policies/refunds.md" in text
    assert len(text) <= 2000


# One good and one bad call per tool, through the TypeScript SDK's client: every reply must parse
# (the SDK validates structuredContent against the tool's outputSchema and fails the call when it
# does not match), and a bad argument must come back as a tool error whose text is one line naming
# the parameter. The Inspector coerces --tool-arg values by the schema ("ten" for an integer is sent
# as null, any boolean value as true/false), so the bad calls use values it passes through;
# lancedb_status and lancedb_version get an argument they do not take.
SURFACE_CALLS: list[tuple[str, list[str], list[str], str]] = [
    (
        "lancedb_search",
        ["query=refund", "limit=2"],
        ["query=refund", "searchType=fuzzy"],
        'searchType must be one of auto, text, vector, hybrid; got "fuzzy"',
    ),
    (
        "lancedb_search",
        ["query=refund", 'filters={"path": "policies/refunds.md"}'],
        ["query=refund", "limit=ten"],
        "limit must be an integer from 1 to 200; got null",
    ),
    (
        "lancedb_query",
        ["question=How do refunds work?", "contextBudget=700"],
        ["question=refunds", "contextBudget=5"],
        "contextBudget must be an integer of at least 200; got 5",
    ),
    (
        "lancedb_document",
        ["source=policies/refunds.md", "contextBudget=300"],
        ["source=policies/refunds.md", "id=policies/refunds.md#0"],
        "not both",
    ),
    ("lancedb_status", ["verbose=true"], ["verbosity=2"], "unknown parameter verbosity; this tool takes: verbose"),
    ("lancedb_version", [], ["extra=1"], "unknown parameter extra; this tool takes: no parameters"),
]


def _tool_args(pairs: list[str]) -> list[str]:
    return [arg for pair in pairs for arg in ("--tool-arg", pair)]


@needs_npx
@pytest.mark.parametrize(
    ("tool", "good", "bad", "message"), SURFACE_CALLS, ids=[f"{c[0]}-{n}" for n, c in enumerate(SURFACE_CALLS)]
)
def test_every_tool_reply_and_error_passes_the_typescript_sdk(
    inspector_db: Path, tmp_path: Path, tool: str, good: list[str], bad: list[str], message: str
) -> None:
    result = inspector(inspector_db, tmp_path, "--method", "tools/call", "--tool-name", tool, *_tool_args(good))
    text = call_text(result)
    if "structuredContent" in result:  # validated by the SDK against outputSchema when there is one
        assert result["structuredContent"] == json.loads(text)
    failed = inspector(
        inspector_db, tmp_path, "--method", "tools/call", "--tool-name", tool, *_tool_args(bad), tool_error=True
    )
    (error,) = [block["text"] for block in failed["content"] if block.get("type") == "text"]
    assert message in error and "\n" not in error and "pydantic" not in error, error


@needs_npx
def test_tool_schemas_pass_the_inspectors_strict_lint(inspector_db: Path, tmp_path: Path) -> None:
    """`--strict` lints the schemas for portability (e.g. a ``type`` list, which single-type dialects
    such as Gemini's reject) and fails on errors; lancelot's schemas give no finding at all."""
    assert NPX is not None
    args = [
        NPX,
        "-y",
        INSPECTOR,
        "--cli",
        "-e",
        f"LANCEDB_PATH={inspector_db}",
        "-e",
        f"PYTHONPATH={REPO}",
        "-e",
        "PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring",
        "--method",
        "tools/list",
        "--strict",
        "--format",
        "json",
        "--",
        *lancelot_command(),
        "serve",
    ]
    proc = subprocess.run(
        args,
        env=subprocess_env(npm_config_update_notifier="false"),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    envelope = json.loads(proc.stdout.splitlines()[0])
    assert "schemaFindings" not in envelope, envelope.get("schemaFindings")
