"""`lancelot serve` over stdio when the client closes stdin with calls still running: every request
read before the end of input is answered, then the server exits 0 (a real process, raw lines)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import lancelot_command, subprocess_env

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def _calls(count: int) -> list[dict[str, object]]:
    tools = [
        ("lancedb_search", {"query": "refund policy"}),
        ("lancedb_query", {"question": "how do refunds work"}),
        ("lancedb_status", {}),
        ("lancedb_document", {"source": "policies/refunds.md"}),
        ("lancedb_search", {"query": "warranty", "table": "missing"}),
    ]
    return [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": tools[n % len(tools)][0], "arguments": tools[n % len(tools)][1]},
        }
        for n in range(1, count + 1)
    ]


@pytest.mark.parametrize("count", [1, 8])
def test_calls_read_before_stdin_closes_are_all_answered(sample_db: Path, tmp_path: Path, count: int) -> None:
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *_calls(count)]
    stdin = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    env = subprocess_env(
        LANCEDB_PATH=str(sample_db),
        LANCELOT_CONFIG_DIR=str(tmp_path),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    # All requests at once, then end of input: the first tool call still waits for lancedb to load.
    proc = subprocess.run(
        [*lancelot_command(), "serve"], input=stdin, capture_output=True, env=env, timeout=180, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    replies = {reply["id"]: reply for reply in map(json.loads, proc.stdout.splitlines())}
    assert sorted(replies) == list(range(count + 1)), proc.stderr.decode(errors="replace")[-2000:]
    for n in range(1, count + 1):
        result = replies[n]["result"]
        assert result["content"][0]["text"]
        assert result.get("isError", False) is (n % 5 == 4)  # the missing table: a tool error, still an answer
