"""Process-wide set-up happens at start-up, through one switch (lancelot_cli.startup; issue 48 #4),
never as a side effect of an import; a stdio server imports only what its transport needs (issue 49 #4)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

# Imports every module of the package (those whose optional extra is missing excepted) and reports
# what changed in the process's environment and import machinery.
IMPORT_ALL = r"""
import importlib, json, os, pkgutil, sys
environ, meta_path, path_hooks = dict(os.environ), list(sys.meta_path), list(sys.path_hooks)
import lancelot_cli
imported, missing = [], []
for info in pkgutil.walk_packages(lancelot_cli.__path__, "lancelot_cli."):
    if info.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(info.name)
        imported.append(info.name)
    except ImportError as exc:  # an optional extra (mangum, fastembed...) not installed here
        missing.append(f"{info.name}: {exc}")
changed = sorted(k for k in {*environ, *os.environ} if environ.get(k) != os.environ.get(k))
print(json.dumps({"imported": imported, "missing": missing, "environ": changed,
                  "meta_path": [repr(f) for f in sys.meta_path if f not in meta_path],
                  "path_hooks": len(sys.path_hooks) - len(path_hooks), "lancedb": "lancedb" in sys.modules}))
"""


def _run(code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_importing_any_module_changes_no_process_state() -> None:
    proc = _run(IMPORT_ALL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert "lancelot_cli.storage" in report["imported"] and "lancelot_cli.server.transports.stdio" in report["imported"]
    assert len(report["imported"]) > 100, report["missing"]
    assert report["environ"] == [], "an import wrote os.environ"
    assert report["meta_path"] == [] and report["path_hooks"] == 0, "an import installed an import hook"
    assert report["lancedb"] is False, "an import loaded lancedb"


START = r"""
import json, os, sys
from lancelot_cli import startup
before = list(sys.meta_path)
assert not startup.started()
startup.start()
startup.start()  # once per process
added = [type(f).__name__ for f in sys.meta_path if f not in before]
import lancedb
from lancelot_cli.storage import lancedb_import
print(json.dumps({"added": added, "first": type(sys.meta_path[0]).__name__, "started": startup.started(),
                  "log": os.environ.get("LANCEDB_LOG"), "deferred": sorted(lancedb_import.deferred)}))
"""


@pytest.mark.slow
def test_start_sets_up_the_process_once() -> None:
    report = json.loads(_run(START).stdout.splitlines()[-1])
    assert report["added"] == ["_Finder"] and report["first"] == "_Finder" and report["started"] is True
    assert report["log"] == "error"
    assert "lance_namespace_urllib3_client" in report["deferred"]  # it is in place before lancedb loads


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "log", "finder"),
    [
        ({"LANCELOT_LOG_LEVEL": "debug"}, None, ["_Finder"]),  # lancedb's own warnings shown
        ({"LANCEDB_LOG": "warn"}, "warn", ["_Finder"]),  # set by hand: kept
        ({"LANCELOT_NO_FAST_IMPORT": "1"}, "error", []),  # the deferral switched off
    ],
)
def test_start_respects_the_user_s_switches(env: dict[str, str], log: str | None, finder: list[str]) -> None:
    report = json.loads(_run(START, **env).stdout.splitlines()[-1])
    assert report["log"] == log and report["added"] == finder


GC_PROBE = r"""
import gc, json, sys
from lancelot_cli import startup
startup.start(json.loads(sys.argv[1]))
print(json.dumps(gc.isenabled()))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "collecting"),
    [(["serve"], False), (["--db", "x", "serve"], False), (["serve", "--http"], True), (["search", "serve"], True)],
)
def test_start_pauses_the_collector_for_a_stdio_server_only(argv: list[str], collecting: bool) -> None:
    """The one switch also makes the garbage-collector pause of a stdio server's start-up
    (server/process/collector.py), decided from the command line it is given."""
    proc = _run(GC_PROBE, json.dumps(argv))
    assert json.loads(proc.stdout.splitlines()[-1]) is collecting, proc.stderr[-2000:]


START_SERVER = r"""
import json, sys
from lancelot_cli import startup
tuned = startup.start_server()
print(json.dumps({"tuned": tuned, "started": startup.started(), "finder": type(sys.meta_path[0]).__name__}))
"""


@pytest.mark.slow
@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_start_server_adds_the_malloc_settings() -> None:
    report = json.loads(_run(START_SERVER).stdout.splitlines()[-1])
    assert report["started"] is True and report["finder"] == "_Finder"
    assert report["tuned"] == ["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]
    # a variable the user set was read by glibc at start and wins: left alone, not reported
    report = json.loads(_run(START_SERVER, MALLOC_ARENA_MAX="4").stdout.splitlines()[-1])
    assert "MALLOC_ARENA_MAX" not in report["tuned"]


@pytest.mark.slow
@pytest.mark.parametrize(("off", "loaded"), [("0", False), ("1", True)])
def test_the_command_sets_up_the_deferral(sample_db: Path, off: str, loaded: bool) -> None:
    """The `lancelot` console script (``cli.app.main``; `python -m lancelot_cli`, how the background
    server starts, runs the same) loads lancedb with the deferral: the namespace REST client's API
    modules are never imported. Switched off, they are, which shows the check can see them."""
    script = Path(sys.executable).with_name("lancelot")
    proc = subprocess.run(
        [str(script), "status", "--db", str(sample_db)],
        env=subprocess_env(LANCELOT_NO_FAST_IMPORT=off, LANCELOT_WARM="0", PYTHONPROFILEIMPORTTIME="1"),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "lancedb" in modules
    assert ("lance_namespace_urllib3_client.api.table_api" in modules) is loaded


HELLO = """\
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("hello")


@mcp.tool()
def hello() -> str:
    return "hi"


mcp.run()
"""
# Packages of a network transport: the HTTP server, client and streaming stacks.
HTTP_STACK = ("starlette", "uvicorn", "sse_starlette", "httpx", "httpcore", "h11", "httptools", "websockets")


def _imported_by_a_stdio_session(
    args: list[str], env: dict[str, str], tool: str, arguments: dict, log: Path
) -> set[str]:
    """The modules a stdio server imported by the time it answered one tool call (`-X importtime`
    on its stderr, which the client writes to ``log``)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-X", "importtime", *args], env=env)

    async def session() -> None:
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content

    anyio.run(session)
    lines = log.read_text().splitlines()
    return {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}


@pytest.mark.slow
def test_a_stdio_server_imports_no_more_of_the_http_stack_than_the_sdk_itself(sample_db: Path, tmp_path: Path) -> None:
    """`lancelot serve` on stdio, up to its first search result, imports no network-transport module
    that a hello-world MCPServer does not import too (the SDK's own package imports some: see
    tests/benchmarks/README.md, "serve start-up"); our HTTP transport, its server and clients stay out."""
    hello = tmp_path / "hello.py"
    hello.write_text(HELLO)
    env = subprocess_env(LANCEDB_PATH=str(sample_db))
    ours = _imported_by_a_stdio_session(
        ["-m", "lancelot_cli", "serve"], env, "lancedb_search", {"query": "refund", "limit": 3}, tmp_path / "serve.err"
    )
    sdk = _imported_by_a_stdio_session([str(hello)], env, "hello", {}, tmp_path / "hello.err")
    assert "lancedb" in ours and "lancelot_cli.server.transports.stdio" in ours
    assert "lance_namespace_urllib3_client.api.table_api" not in ours  # loaded with the deferral set up

    def network(modules: set[str]) -> set[str]:
        return {m for m in modules if m.split(".")[0] in HTTP_STACK}

    assert network(ours) <= network(sdk), sorted(network(ours) - network(sdk))
    assert not {m for m in ours if m.startswith("lancelot_cli.server.") and m.split(".")[2] in ("http", "workers")}
    assert not {m for m in ours if m.split(".")[0] in ("httpx", "httpcore", "uvicorn.protocols", "mangum")}
