"""Interop with a client nobody here wrote: the MCP Inspector's CLI mode, fetched from the npm
registry by ``npx``, drives ``lancelot serve`` over stdio.

The Inspector version is pinned so CI is reproducible. The first run downloads it (about 200 MB
into npm's cache, ~/.npm by default, which also works for root); later runs start in about 1-2 s.
The test skips only when ``npx`` is missing; a failed download or a failed call is a failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SAMPLE_DOCS, lancelot_command, subprocess_env

pytestmark = pytest.mark.inspector

# Verified with Node 20 and npm 11 (npm prints EBADENGINE warnings because the package asks for
# Node >= 22.19, but the CLI runs fine over stdio).
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
# Generous: the first call may download the package.
TIMEOUT = 300

from tests.support.expected import TOOLS

NPX = shutil.which("npx")
needs_npx = pytest.mark.skipif(NPX is None, reason="npx is not on PATH (install Node.js to run the MCP Inspector test)")


@pytest.fixture(scope="module")
def inspector_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents indexed into a database of this module's own."""
    from lancelot_cli.indexer import index_folder

    db = tmp_path_factory.mktemp("inspector") / "db"
    index_folder(SAMPLE_DOCS, str(db))
    return db


def inspector(db: Path, tmp_path: Path, *method_args: str) -> dict[str, Any]:
    """Run the Inspector CLI against `lancelot serve` and return the ``result`` of its JSON output.

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
        npm_config_fund="false",
        npm_config_audit="false",
    )
    try:
        proc = subprocess.run(
            args, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(f"MCP Inspector ({INSPECTOR}) did not finish within {TIMEOUT} s: {args}\nstderr:\n{stderr[-4000:]}")
    if proc.returncode != 0:
        pytest.fail(f"MCP Inspector ({INSPECTOR}) exited with {proc.returncode} (a failed npm download "
                    f"or a failed MCP call): {args}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}")
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"MCP Inspector printed no JSON object:\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}")
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
        inspector_db, tmp_path,
        "--method", "tools/call", "--tool-name", "lancedb_search", "--tool-arg", "query=refund", "--tool-arg", "limit=2",
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
        inspector_db, tmp_path,
        "--method", "tools/call", "--tool-name", "lancedb_query",
        "--tool-arg", "question=How do refunds work?", "--tool-arg", "contextBudget=2000",
    )
    text = call_text(result)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert text.startswith("# "), text[:200]
    assert "\n## " in text, text[:500]
    assert "policies/refunds.md" in text
    assert len(text) <= 2000
