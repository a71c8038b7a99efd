"""The background server (background/, server/transports/unix.py): real `lancelot` processes, a real
`lancelot serve --socket` they start, real LanceDB folders in tmp; plus the whole-reply request over
the SDK's in-memory client.

Each setup gets its own short XDG_RUNTIME_DIR; every server a test starts is found by that folder in
its environment (/proc) and killed at teardown. That the server answered a command is read from the
command itself: it runs through a probe that reports the modules it imported, and a command the
server answered never imported lancedb.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

import pytest
from mcp import Client

from lancelot_cli.background import client as background_client
from lancelot_cli.background import daemon
from lancelot_cli.background.client import PROTOCOL_VERSION, WHOLE_REPLY
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import _LEAKY, REPO, hash_tree, lancelot_command
from tests.support.embed_server import MODEL, EmbedServer

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds servers through /proc")
START_TIMEOUT = 90.0  # importing lancedb on a loaded 2-core machine
ENGINE = ("lancedb", "pyarrow", "lancelot_cli.engine", "lancelot_cli.storage.read.database")  # in-process means these
HEAVY = (*ENGINE, "numpy", "pydantic", "mcp", "openai")

# Runs the CLI as the console script does, but reports the modules it imported (on stderr's last line).
PROBE = """
import json, sys
sys.argv = ["lancelot", *json.loads(sys.argv[1])]
from lancelot_cli.cli.app import run
code = run()
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

# The same, as the console script's `main` runs it: the quick path first (cli/quick.py), then the Typer app.
QUICK_PROBE = """
import json, sys
args = json.loads(sys.argv[1])
sys.argv = ["lancelot", *args]
from lancelot_cli.cli import quick
code = quick.run(args)
if code is quick.NOT_TAKEN:
    from lancelot_cli.cli.app import run
    code = run()
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


class Run(NamedTuple):
    code: int
    out: str
    err: str
    answered: bool  # by the background server: the command never loaded the engine
    modules: tuple[str, ...]


class Setup:
    """A private runtime folder and the environment that points `lancelot` at it."""

    def __init__(self, config: Path, minutes: str = "2", root: Path | None = None, **extra: str) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="lb-", dir="/tmp"))  # AF_UNIX paths must stay short
        self.folder = self.root / "lancelot"
        base = {k: v for k, v in os.environ.items() if k not in _LEAKY}
        base.update(
            {
                "LANCELOT_CONFIG_DIR": str(config),
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
                "COLUMNS": "120",
                "PYTHONPATH": str(REPO) + os.pathsep + base.get("PYTHONPATH", ""),
                "XDG_RUNTIME_DIR": str(self.root),
                **extra,
            }
        )
        self.cold_env = {**base, "LANCELOT_WARM": "0"}
        self.env = {**base, "LANCELOT_WARM": minutes}

    def lancelot(self, *args: str, warm: bool = True, cwd: Path | None = None, probe: str = PROBE) -> Run:
        """A command through the probe (it does not start a server: see ``start``)."""
        proc = subprocess.run(
            [sys.executable, "-c", probe, json.dumps(list(args))],
            capture_output=True,
            text=True,
            env=self.env if warm else self.cold_env,
            cwd=cwd,
            timeout=120,
            check=False,
        )
        *lines, report = proc.stderr.splitlines(keepends=True)
        found = json.loads(report)
        return Run(
            found["code"] or 0,
            proc.stdout,
            "".join(lines),
            not _among(found["modules"], ENGINE),
            tuple(found["modules"]),
        )

    def console(self, *args: str, warm: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """A command as a person runs it (the console script's `main`, which starts a missing server)."""
        return subprocess.run(
            [*lancelot_command(), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=self.env if warm else self.cold_env,
            stdin=subprocess.DEVNULL,
            check=False,
            cwd=cwd,
        )

    def start(self, db: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """One search in-process (it starts the server), then wait until the server answers."""
        first = self.console("search", "refund", "--db", str(db), *args)
        assert first.returncode == 0, first.stderr
        deadline = time.monotonic() + START_TIMEOUT
        while not self.lancelot("status", "--db", str(db), *args).answered:
            assert time.monotonic() < deadline, f"no server answered; log:\n{self.log()}"
            time.sleep(0.2)
        return first

    def socket_for(self, db: Path) -> Path:
        """Where the server for ``db`` (with this setup's environment) listens."""
        with mock.patch.dict(os.environ, self.env, clear=True):  # the folder and fingerprint read os.environ
            path = daemon.socket_path(load(flags={"LANCEDB_PATH": str(db)}))
        assert path is not None and path.startswith(str(self.folder))
        return Path(path)

    def sockets(self) -> list[Path]:
        return sorted(self.folder.glob("s*.sock")) if self.folder.exists() else []

    def log(self) -> str:
        return "".join(p.read_text(encoding="utf-8", errors="replace") for p in self.folder.glob("*.log"))

    def pids(self) -> list[int]:
        """Background servers started with this runtime folder (whatever their state)."""
        marker = f"XDG_RUNTIME_DIR={self.root}\0".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if b"--socket" in (entry / "cmdline").read_bytes() and marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def close(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


def _among(modules: list[str] | tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


def _wait(condition: Any, what: str, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def setup(isolated_env: Path) -> Iterator[Setup]:
    made = Setup(isolated_env)
    yield made
    made.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, sample_db: Path) -> Iterator[Setup]:
    """One background server over the session's sample database, for the comparisons."""
    made = Setup(tmp_path_factory.mktemp("bgconfig"))
    try:
        made.start(sample_db)
        yield made
    finally:
        made.close()


@pytest.fixture(scope="module")
def cold(shared: Setup, sample_db: Path) -> Any:
    """``cold(args)``: the command answered in-process (LANCELOT_WARM=0) over the sample database, run
    once for the module. The byte-identity and quick-path tests compare their answers with the same
    reference, so each in-process run (the costly one: it imports lancedb) is made once, not twice."""
    answers: dict[tuple[str, ...], Run] = {}

    def answer(args: list[str]) -> Run:
        if tuple(args) not in answers:
            answers[tuple(args)] = shared.lancelot(*args, "--db", str(sample_db), warm=False)
        return answers[tuple(args)]

    return answer


# -- the same bytes, answered in the background or not ---------------------------------------------

SAME = {
    "search": ["search", "refund policy"],
    "search --json": ["search", "refund policy", "--json", "--limit", "3"],
    "search --jsonl --path-prefix": ["search", "warranty", "--path-prefix", "policies/", "--jsonl"],
    "search --filter": ["search", "refund", "--filter", "chunk=0", "--json"],
    "query": ["query", "how long do refunds take"],
    "query --json": ["query", "how long do refunds take", "--json", "--budget", "1200"],
    "query --warm-start": ["query", "anything", "--warm-start", "--json"],
    "show": ["show", "policies/refunds.md"],
    "show --json SOURCE#N": ["show", "policies/refunds.md#0", "--json", "--before", "1", "--after", "0"],
    "status --json -v": ["status", "--json", "--verbose"],
    "error: missing table": ["search", "refund", "--table", "nope"],
    "error: bad filter column": ["search", "refund", "--filter", "colour=red"],
    "error: missing document": ["show", "policies/nothing.md", "--json"],
    "error: bad text column": ["search", "refund", "--text-column", "nope"],
}


@LINUX
@pytest.mark.slow
@pytest.mark.parametrize(("name", "args"), SAME.items(), ids=SAME.keys())
def test_background_output_is_byte_identical(
    shared: Setup, cold: Any, sample_db: Path, name: str, args: list[str]
) -> None:
    reference = cold(args)
    hot = shared.lancelot(*args, "--db", str(sample_db))
    assert (hot.out, hot.err, hot.code) == (reference.out, reference.err, reference.code)
    assert hot.answered and not reference.answered, shared.log()
    if name.startswith("error"):
        assert hot.code == 1 and hot.err.startswith("lancelot: error: ") and hot.err.count("\n") == 1
    else:
        assert hot.code == 0 and hot.out.strip()


@LINUX
@pytest.mark.slow
@pytest.mark.parametrize(("name", "args"), SAME.items(), ids=SAME.keys())
def test_the_quick_path_gives_the_same_bytes_without_typer(
    shared: Setup, cold: Any, sample_db: Path, name: str, args: list[str]
) -> None:
    """Issue 49: the console script answers these through cli/quick.py: the same output and exit
    code as in-process, and neither Typer, click nor pydantic is imported."""
    reference = cold(args)
    hot = shared.lancelot(*args, "--db", str(sample_db), probe=QUICK_PROBE)
    assert (hot.out, hot.err, hot.code) == (reference.out, reference.err, reference.code)
    assert not reference.answered
    assert hot.answered, shared.log()
    assert _among(hot.modules, ("typer", "click", "pydantic", "lancelot_cli.cli.commands")) == []


@LINUX
@pytest.mark.slow
def test_an_answered_search_imports_no_heavy_library(shared: Setup, sample_db: Path) -> None:
    run = shared.lancelot("search", "refund policy", "--db", str(sample_db))
    assert run.code == 0 and run.answered
    assert _among(run.modules, HEAVY) == []
    assert "lancelot_cli.background.client" in run.modules  # the probe did ask the server


@LINUX
@pytest.mark.slow
def test_status_names_the_background_server(shared: Setup, sample_db: Path) -> None:
    run = shared.lancelot("status", "--db", str(sample_db))
    assert run.answered and run.code == 0
    pid = int(Path(f"{shared.socket_for(sample_db)}.lock").read_text().split()[0])
    assert pid in shared.pids()
    said = run.out[run.out.index("Background server") :].split("\n\n")[0].replace("\n", "")
    assert said.startswith(f"Background server  running (lancelot serve --socket, pid {pid}, "), said
    assert f" MiB; databases open: {sample_db}; exits after 2 idle minutes" in said
    cold = shared.lancelot("status", "--db", str(sample_db), warm=False)
    assert "Background server  off (LANCELOT_WARM=0)" in cold.out


@LINUX
@pytest.mark.slow
def test_the_server_runs_in_the_settings_it_was_started_with(shared: Setup, sample_db: Path, tmp_path: Path) -> None:
    """Other settings (here a default limit) get a server of their own, and the answer follows them."""
    cold = shared.lancelot("search", "refund", "--json", "--db", str(sample_db), warm=False)
    other = Setup(tmp_path / "config", root=shared.root, LANCEDB_DEFAULT_LIMIT="2")  # another socket, same folder
    (before,) = shared.sockets()
    first = other.console("search", "refund", "--json", "--db", str(sample_db))
    assert json.loads(first.stdout)["count"] == 2 < json.loads(cold.out)["count"]
    _wait(lambda: shared.sockets() == [other.socket_for(sample_db)], f"not replaced; log:\n{shared.log()}")
    assert before != other.socket_for(sample_db)
    _wait(lambda: other.lancelot("status", "--db", str(sample_db)).answered, "the second server never answered")
    _wait(lambda: len(shared.pids()) == 1, "at most one server is alive")
    hot = other.lancelot("search", "refund", "--json", "--db", str(sample_db))
    assert hot.answered and hot.out == first.stdout
    mine = shared.lancelot("search", "refund", "--json", "--db", str(sample_db))
    assert mine.out == cold.out and not mine.answered  # never by the other settings' server
    shared.start(sample_db)  # back, for the tests after this one


@LINUX
@pytest.mark.slow
def test_vector_and_hybrid_search_in_the_background(
    isolated_env: Path, embed_server: EmbedServer, vector_db: Path
) -> None:
    """The key and the embeddings endpoint come from the environment the server was started with;
    the query is embedded there (through the real openai client), the hits are the same."""
    made = Setup(isolated_env, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=embed_server.url, EMBEDDING_MODEL=MODEL)
    try:
        made.start(vector_db)
        for args in (
            ["search", "refund policy", "--json"],
            ["search", "refund policy", "--type", "vector"],
            ["status", "--json"],
        ):
            cold = made.lancelot(*args, "--db", str(vector_db), warm=False)
            hot = made.lancelot(*args, "--db", str(vector_db))
            assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
            assert hot.code == 0 and hot.answered, made.log()
        assert json.loads(hot.out)["embeddings"]["keySource"] == "env"
        requests = embed_server.requests
        hybrid = made.lancelot("search", "warranty repair", "--json", "--db", str(vector_db))
        assert json.loads(hybrid.out)["searchType"] == "hybrid" and hybrid.answered
        assert embed_server.requests == requests + 1
    finally:
        made.close()


@LINUX
@pytest.mark.slow
def test_a_relative_db_is_the_one_in_the_commands_folder(setup: Setup, sample_db: Path, tmp_path: Path) -> None:
    """A relative --db names a server per working folder: the same name elsewhere is another database."""
    here = tmp_path / "here"
    here.mkdir()
    shutil.copytree(sample_db, here / "db")
    first = subprocess.run(
        [*lancelot_command(), "search", "refund", "--db", "db", "--json"],
        capture_output=True,
        text=True,
        env=setup.env,
        cwd=here,
        check=False,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    _wait(lambda: setup.sockets(), "no server started")
    _wait(lambda: setup.lancelot("search", "refund", "--db", "db", cwd=here).answered, "never answered")
    hot = setup.lancelot("search", "refund", "--db", "db", "--json", cwd=here)
    assert hot.answered and hot.out == first.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = setup.lancelot("search", "refund", "--db", "db", cwd=elsewhere)
    assert not missing.answered and missing.code == 1 and "db" in missing.err


@LINUX
@pytest.mark.slow
def test_the_server_never_imports_code_from_the_callers_folder(setup: Setup, sample_db: Path, tmp_path: Path) -> None:
    """Issue 46 #1: a `lancelot_cli/` folder where a person runs `lancelot search` ran as the background
    server on Python 3.10 (no `-P`). The server answers, and the planted package never ran."""
    here = tmp_path / "here"
    planted = here / "lancelot_cli"
    planted.mkdir(parents=True)
    marker = tmp_path / "planted-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    (planted / "__main__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    first = setup.console("search", "refund", "--db", str(sample_db), "--json", cwd=here)
    assert first.returncode == 0, first.stderr
    _wait(lambda: setup.sockets(), "no server started")
    _wait(lambda: setup.lancelot("search", "refund", "--db", str(sample_db)).answered, "never answered")
    assert not marker.exists(), "the background server imported the caller's lancelot_cli/"


@LINUX
@pytest.mark.slow
def test_background_calls_leave_the_database_unchanged(shared: Setup, sample_db: Path) -> None:
    before = hash_tree(sample_db)
    runs = [
        shared.lancelot(*args, "--db", str(sample_db))
        for args in (
            ["search", "refund"],
            ["query", "returns"],
            ["show", "faq.txt"],
            ["status", "-v"],
            ["search", "x", "--table", "nope"],
        )
    ]
    assert all(run.answered for run in runs), shared.log()
    assert hash_tree(sample_db) == before


@LINUX
@pytest.mark.slow
def test_a_local_client_may_speak_mcp_on_the_socket(shared: Setup, sample_db: Path) -> None:
    """Plain newline-delimited JSON-RPC: a bad line gets its error reply and the session goes on."""
    path = shared.socket_for(sample_db)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(str(path))
        lines = sock.makefile("rb")

        def ask(message: dict[str, Any] | bytes) -> dict[str, Any]:
            sock.sendall(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
            return json.loads(lines.readline())

        init = ask(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert init["result"]["serverInfo"]["name"] == "lancelot"
        assert ask(b"{not json\n")["error"]["code"] == -32700
        sock.sendall(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        listed = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert {t["name"] for t in listed["result"]["tools"]} >= {"lancedb_search", "lancedb_status"}
        found = ask(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "lancedb_query", "arguments": {"question": "refunds"}},
            }
        )
        assert "structuredContent" not in found["result"]  # an agent's reply: the context text only
        assert found["result"]["content"][0]["text"].startswith("# Context for: refunds")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(shared.folder.stat().st_mode) == 0o700


# -- one server for every database; a failed command starts none --------------------------------------

MAX_RSS_MIB = 300  # issue 39 #3: after 100 searches on three databases


def _three_databases(sample_db: Path, tmp_path: Path) -> list[Path]:
    """The sample database, a copy, and one of a single document with a word found nowhere else."""
    from lancelot_cli.indexer import index_folder

    copy = tmp_path / "copy"
    shutil.copytree(sample_db, copy)
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "zephyr.md").write_text("# Zephyr\n\nThe zephyrquartz manual.\n", encoding="utf-8")
    index_folder(tmp_path / "own", str(tmp_path / "third"))
    return [sample_db, copy, tmp_path / "third"]


def _rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


@LINUX
@pytest.mark.slow
def test_one_server_answers_for_every_database(setup: Setup, sample_db: Path, tmp_path: Path) -> None:
    """Started by a search on one database, the server answers the next commands on two others (the
    same output as in-process), `status` names it with its memory and databases, and after 100
    searches over the three it stays one process under MAX_RSS_MIB."""
    dbs = _three_databases(sample_db, tmp_path)
    setup.start(dbs[0])
    for db in dbs[1:]:
        cold = setup.lancelot("search", "zephyrquartz", "--json", "--db", str(db), warm=False)
        hot = setup.lancelot("search", "zephyrquartz", "--json", "--db", str(db))
        assert hot.answered and (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code), setup.log()
    assert [h["source"] for h in json.loads(hot.out)["hits"]] == ["zephyr.md"]  # the third's own answer
    (pid,) = setup.pids()
    assert setup.sockets() == [setup.socket_for(dbs[0])] == [setup.socket_for(dbs[2])]
    status = setup.lancelot("status", "--db", str(dbs[1]))
    said = status.out[status.out.index("Background server") :].split("\n\n")[0].replace("\n", "")
    assert f"pid {pid}, " in said and f"databases open: {dbs[0]}, {dbs[1]}, {dbs[2]};" in said, said
    with mock.patch.dict(os.environ, setup.env, clear=True):  # the CLI's own client, 100 searches
        settings = [load(flags={"LANCEDB_PATH": str(db)}) for db in dbs]
        words = ["refund policy", "warranty", "zephyrquartz", "shipping times", "returns", "manual"]
        for n in range(100):
            reply = background_client.call(settings[n % 3], "lancedb_search", {"query": words[n % len(words)]})
            assert reply is not None and "hits" in reply
    assert setup.pids() == [pid]
    assert _rss_mib(pid) < MAX_RSS_MIB


@LINUX
@pytest.mark.slow
def test_a_mistyped_database_is_answered_and_not_kept_open(setup: Setup, sample_db: Path, tmp_path: Path) -> None:
    setup.start(sample_db)
    wrong = str(tmp_path / "nope")
    cold = setup.lancelot("search", "refund", "--db", wrong, warm=False)
    hot = setup.lancelot("search", "refund", "--db", wrong)
    assert hot.answered and (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
    assert hot.code == 1 and "does not exist" in hot.err
    lock = Path(f"{setup.socket_for(sample_db)}.lock").read_text(encoding="utf-8")
    assert lock.splitlines()[1:] == [str(sample_db)]
    assert len(setup.pids()) == 1


FAILING = {
    "mistyped --db": ["search", "refund", "--db", "{tmp}/nope"],
    "missing table": ["search", "refund", "--db", "{db}", "--table", "nope"],
    "bad option": ["search", "refund", "--db", "{db}", "--limit", "0"],
    "unknown option": ["search", "refund", "--db", "{db}", "--colour"],
    "status of a missing database": ["status", "--db", "{tmp}/nope"],
    "missing document": ["show", "nothing.md", "--db", "{db}"],
}


@LINUX
@pytest.mark.slow
@pytest.mark.parametrize("args", FAILING.values(), ids=FAILING.keys())
def test_a_command_that_fails_starts_no_server(setup: Setup, sample_db: Path, tmp_path: Path, args: list[str]) -> None:
    run = setup.console(*(a.format(tmp=tmp_path, db=sample_db) for a in args))
    assert run.returncode != 0 and "started a background" not in run.stderr
    time.sleep(0.5)  # a start is a detached Popen before the command exits: there would be one by now
    assert setup.pids() == [] and setup.sockets() == []


# -- freshness, idling out, unsafe places --------------------------------------------------------------


@LINUX
@pytest.mark.slow
def test_the_server_sees_a_table_indexed_again(setup: Setup, docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    indexed = setup.console("index", str(docs), str(db), warm=False)
    assert indexed.returncode == 0, indexed.stderr
    setup.start(db)
    before = setup.lancelot("search", "zephyrquartz", "--db", str(db), "--json")
    assert before.answered and json.loads(before.out)["count"] == 0
    refunds = docs / "policies" / "refunds.md"
    refunds.write_text(
        refunds.read_text(encoding="utf-8").replace("unused items", "zephyrquartz items"), encoding="utf-8"
    )
    again = setup.console("index", str(docs), str(db), warm=False)
    assert again.returncode == 0, again.stderr
    after = setup.lancelot("search", "zephyrquartz", "--db", str(db), "--json")
    assert after.answered, setup.log()
    assert [hit["source"] for hit in json.loads(after.out)["hits"]] == ["policies/refunds.md"]


@LINUX
@pytest.mark.slow
def test_the_server_exits_when_idle(isolated_env: Path, sample_db: Path) -> None:
    made = Setup(isolated_env, minutes="0.02")  # 1.2 s
    try:
        assert made.console("search", "refund", "--db", str(sample_db)).returncode == 0
        _wait(lambda: made.sockets(), f"no server listened; log:\n{made.log()}")  # it idles at least 2 s
        _wait(lambda: not made.pids() and not made.sockets(), f"still running; log:\n{made.log()}", timeout=60)
        assert list(made.folder.glob("*.lock")) == []
    finally:
        made.close()


@LINUX
@pytest.mark.slow
def test_the_first_start_is_said_once(setup: Setup, sample_db: Path) -> None:
    cold = setup.console("search", "refund policy", "--db", str(sample_db), warm=False)
    first = setup.console("search", "refund policy", "--db", str(sample_db))
    assert first.stdout == cold.stdout
    said = first.stderr[len(cold.stderr) :]
    assert said.startswith("lancelot: started a background `lancelot serve` (pid ")
    assert said.endswith("it exits after 2 idle minutes. LANCELOT_WARM=0 turns it off.\n") and said.count("\n") == 1
    _wait(lambda: setup.pids(), "no server started")
    for pid in setup.pids():
        os.kill(pid, signal.SIGTERM)
    _wait(lambda: not setup.pids() and not setup.sockets(), "SIGTERM did not stop the server")
    second = setup.console("search", "refund policy", "--db", str(sample_db))
    assert second.stderr == cold.stderr  # started again, silently
    _wait(lambda: setup.pids(), "no second server")


@LINUX
@pytest.mark.slow
def test_a_stale_socket_file_is_replaced(setup: Setup, sample_db: Path) -> None:
    setup.folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(setup.socket_for(sample_db)))  # bound, never listening, closed: connecting is refused
    stale.close()
    cold = setup.lancelot("search", "refund policy", "--db", str(sample_db), warm=False)
    first = setup.console("search", "refund policy", "--db", str(sample_db))
    assert first.stdout == cold.out and first.returncode == 0
    _wait(
        lambda: setup.lancelot("search", "refund policy", "--db", str(sample_db)).answered,
        f"the stale socket was not replaced; log:\n{setup.log()}",
    )


@LINUX
@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o770, 0o705], ids=["group-writable", "other-readable"])
def test_a_runtime_folder_others_can_enter_is_not_used(setup: Setup, sample_db: Path, mode: int) -> None:
    setup.folder.mkdir()
    setup.folder.chmod(mode)
    cold = setup.console("search", "refund policy", "--db", str(sample_db), warm=False)
    hot = setup.console("search", "refund policy", "--db", str(sample_db))
    assert (hot.stdout, hot.stderr, hot.returncode) == (cold.stdout, cold.stderr, cold.returncode)
    assert setup.pids() == [] and os.listdir(setup.folder) == []
    assert stat.S_IMODE(setup.folder.stat().st_mode) == mode


def _squatter(setup: Setup, db: Path) -> socket.socket:
    """A socket listened on at the server's place that never answers (a stuck server)."""
    setup.folder.mkdir(mode=0o700)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.bind(str(setup.socket_for(db)))
    stuck.listen(4)
    return stuck


@LINUX
@pytest.mark.slow
def test_a_server_that_does_not_answer_is_not_waited_for(setup: Setup, sample_db: Path) -> None:
    """In-process after the wait for the handshake, same output, and no second server started."""
    with _squatter(setup, sample_db):
        cold = setup.console("search", "refund policy", "--db", str(sample_db), warm=False)
        hot = setup.console("search", "refund policy", "--db", str(sample_db))
        assert (hot.stdout, hot.stderr, hot.returncode) == (cold.stdout, cold.stderr, cold.returncode)
        assert setup.pids() == []


@LINUX
@pytest.mark.slow
def test_ctrl_c_while_waiting_for_the_server(setup: Setup, sample_db: Path) -> None:
    """A server that completes the handshake and then takes long: Ctrl-C ends the client with the usual line."""
    with _squatter(setup, sample_db) as slow:
        proc = subprocess.Popen(
            [*lancelot_command(), "search", "refund policy", "--db", str(sample_db)],
            env=setup.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            slow.settimeout(60)
            conn, _ = slow.accept()
            with conn:
                lines = conn.makefile("rb")
                init = json.loads(lines.readline())
                conn.sendall(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": init["id"],
                            "result": {
                                "protocolVersion": "2025-11-25",
                                "capabilities": {},
                                "serverInfo": {"name": "lancelot", "version": "0"},
                            },
                        }
                    ).encode()
                    + b"\n"
                )
                lines.readline()  # notifications/initialized
                assert json.loads(lines.readline())["method"] == "tools/call"  # no reply will come
                proc.send_signal(signal.SIGINT)
                out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert (proc.returncode, out) == (130, "")
    assert err == "lancelot: error: interrupted; nothing was changed by the unfinished step\n"


@LINUX
@pytest.mark.slow
def test_warm_zero_starts_nothing(setup: Setup, sample_db: Path) -> None:
    run = setup.console("search", "refund policy", "--db", str(sample_db), warm=False)
    assert run.returncode == 0
    assert not setup.folder.exists() and setup.pids() == []


# -- in-process: the handshake version, the whole reply, the wire form back --------------------------


def test_the_clients_protocol_version_is_one_the_sdk_handshakes() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert PROTOCOL_VERSION in HANDSHAKE_PROTOCOL_VERSIONS


def test_the_settings_fingerprint_follows_what_changes_an_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    base = load(flags={"LANCEDB_PATH": str(tmp_path)})
    same = daemon.fingerprint(base)
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": str(tmp_path)})) == same
    monkeypatch.setenv("LANCEDB_TABLE", "other")
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": str(tmp_path)})) != same
    monkeypatch.delenv("LANCEDB_TABLE")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another")
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": str(tmp_path)})) != same
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("TERM", "something-else")  # says nothing about an answer
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": str(tmp_path)})) == same
    monkeypatch.chdir(tmp_path)
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": str(tmp_path)})) == same  # absolute: any folder
    relative = daemon.fingerprint(load(flags={"LANCEDB_PATH": "db"}))
    monkeypatch.chdir(tmp_path.parent)
    assert daemon.fingerprint(load(flags={"LANCEDB_PATH": "db"})) != relative


@pytest.mark.anyio
async def test_a_whole_reply_is_the_json_form_and_agents_get_theirs_unchanged(sample_db: Path) -> None:
    from lancelot_cli import requests
    from lancelot_cli.engine import Engine
    from lancelot_cli.wire import to_json, to_wire

    settings = load(environ={**os.environ, "LANCEDB_PATH": str(sample_db)})
    engine = Engine(settings)
    asked: list[requests.Request[Any]] = [
        requests.Search("refund policy", limit=3),
        requests.Query("refunds", context_budget=900),
        requests.Read(id="policies/refunds.md#0", before=0, after=1),
        requests.Status(verbose=True),
    ]
    cases = [(str(r.tool), r.arguments(), r.ask(engine), r.reply_from_wire) for r in asked]
    async with Client(build_server(settings)) as client:
        for tool, arguments, local, from_wire in cases:
            whole = await client.call_tool(tool, arguments, meta=WHOLE_REPLY)
            assert not whole.is_error
            assert json.dumps(whole.structured_content, ensure_ascii=False, separators=(",", ":")) == to_json(local)
            assert to_wire(from_wire(whole.structured_content)) == whole.structured_content
            agent = await client.call_tool(tool, arguments)
            if tool in ("lancedb_query", "lancedb_document"):
                assert agent.structured_content is None and agent.content[0].text == local.context
            elif tool == "lancedb_status":
                assert "usage" in agent.structured_content and "usage" not in whole.structured_content
        failed = await client.call_tool("lancedb_search", {"query": "x", "table": "nope"}, meta=WHOLE_REPLY)
        plain = await client.call_tool("lancedb_search", {"query": "x", "table": "nope"})
    assert failed.is_error and plain.is_error
    assert failed.content[0].text == plain.content[0].text  # the agent's wording, both times
    kind = failed.meta["lancelot/error"]
    assert kind["kind"] == "TableNotFoundError" and "not found" in kind["message"]
    assert plain.meta is None or "lancelot/error" not in plain.meta
    error = background_client._error(kind)
    assert type(error).__name__ == "TableNotFoundError" and error.exit_code == 1 and str(error) == kind["message"]


@pytest.mark.anyio
async def test_only_the_socket_server_answers_for_another_database(sample_db: Path, tmp_path: Path) -> None:
    """The `_meta` database key is honoured by `serve --socket` (any_database) alone: an agent over
    stdio or HTTP gets its server's own database whatever it sends. Engines for more than MAX_OPEN
    databases are not kept; a folder that does not exist gets its error and is not kept either."""
    from lancelot_cli.server.databases import DATABASE_KEY, MAX_OPEN

    settings = load(environ={**os.environ, "LANCEDB_PATH": str(sample_db)})
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "zephyr.md").write_text("# Zephyr\n\nThe zephyrquartz manual.\n", encoding="utf-8")
    from lancelot_cli.indexer import index_folder

    index_folder(tmp_path / "own", str(tmp_path / "other"))
    meta = {**WHOLE_REPLY, DATABASE_KEY: str(tmp_path / "other")}
    async with Client(build_server(settings)) as client:
        own = await client.call_tool("lancedb_search", {"query": "zephyrquartz"}, meta=meta)
    assert own.structured_content["count"] == 0  # the sample database's answer
    recorded: list[list[str]] = []
    async with Client(build_server(settings, any_database=True, on_databases=recorded.append)) as client:
        other = await client.call_tool("lancedb_search", {"query": "zephyrquartz"}, meta=meta)
        missing = await client.call_tool(
            "lancedb_search", {"query": "x"}, meta={**meta, DATABASE_KEY: str(tmp_path / "nope")}
        )
        for n in range(MAX_OPEN + 1):
            shutil.copytree(sample_db, tmp_path / f"copy{n}")
            await client.call_tool("lancedb_status", {}, meta={**meta, DATABASE_KEY: str(tmp_path / f"copy{n}")})
    assert [h["source"] for h in other.structured_content["hits"]] == ["zephyr.md"]
    assert missing.is_error and missing.meta["lancelot/error"]["kind"] == "DatabaseNotFoundError"
    assert all(str(tmp_path / "nope") not in opened for opened in recorded)
    assert str(tmp_path / "other") in recorded[0]  # (with the server's own, once its warm-up opened it)
    last = recorded[-1]
    assert len(last) == MAX_OPEN and str(tmp_path / f"copy{MAX_OPEN}") in last and str(tmp_path / "copy0") not in last


def test_init_stops_every_background_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "rt"
    (runtime / "lancelot").mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    for name in ("s1.sock", "s2.sock", "s1.log", "announced"):
        (runtime / "lancelot" / name).write_text("")
    assert daemon.stop_all() == 2
    assert sorted(os.listdir(runtime / "lancelot")) == ["announced", "s1.log"]


# -- issue 46: the socket's line cap, a server stuck mid-request, SIGTERM ---------------------------


@pytest.mark.anyio
async def test_the_socket_takes_lines_no_longer_than_stdio_does() -> None:
    """A line over stdio's cap ends the connection unread (the socket took 64 MB lines: a 16 MB
    call cost 86 s and 2.64 GiB); one at the cap is read."""
    import anyio
    from anyio.streams.stapled import StapledObjectStream

    from lancelot_cli.server.transports.stdin_lines import MAX_LINE
    from lancelot_cli.server.transports.unix import _Lines

    async def lines_of(*lines: bytes) -> list[int]:
        data = b"".join(lines)
        chunks = [data[at : at + 65536] for at in range(0, len(data), 65536)]  # as a socket delivers them
        send, receive = anyio.create_memory_object_stream[bytes](len(chunks))
        for chunk in chunks:
            send.send_nowait(chunk)
        send.close()
        return [len(line) async for line in _Lines(StapledObjectStream(send, receive))]

    at_cap = b"x" * (MAX_LINE - 1) + b"\n"
    assert await lines_of(at_cap, b"ping\n") == [MAX_LINE - 1, 4]
    assert await lines_of(b"x" * MAX_LINE + b"y\n", b"ping\n") == []


def _stuck_server(path: str, seen: list[str]) -> socket.socket:
    """A socket at ``path`` that answers the handshake and then never replies (a server stopped mid-request)."""
    import threading

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            lines = conn.makefile("rb")
            init = json.loads(lines.readline())
            result = {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "serverInfo": {"name": "x"},
            }
            conn.sendall(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": result}).encode() + b"\n")
            for line in lines:  # notifications/initialized, tools/call: read, never answered
                seen.append(json.loads(line)["method"])

    threading.Thread(target=serve, daemon=True).start()
    return listener


def test_a_server_stuck_mid_request_is_not_waited_for_ever(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 46: `kill -STOP` a second into a request hung `lancelot search` for ever. After
    REPLY_TIMEOUT the command answers in-process, says so in one line, and removes the socket."""
    from lancelot_cli.cli.answer import answer
    from lancelot_cli.requests import Search

    runtime = Path(tempfile.mkdtemp(prefix="lb-", dir="/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        monkeypatch.setattr(background_client, "REPLY_TIMEOUT", 0.5)
        settings = load(environ={**os.environ, "LANCEDB_PATH": str(sample_db), "LANCELOT_WARM": "2"})
        path = daemon.socket_path(settings)
        assert path is not None
        (runtime / "lancelot").mkdir(mode=0o700)
        seen: list[str] = []
        with _stuck_server(path, seen):
            request = Search("refund policy")
            reply, _ = answer(settings, "lancedb_search", request.arguments(), request.ask, request.reply_from_wire)
        assert seen == ["notifications/initialized", "tools/call"]
        assert reply.hits and reply.hits[0].source.startswith("policies/")  # answered in-process
        assert capsys.readouterr().err == (
            "lancelot: the background server gave no answer in 0.5 s; answering here (it was told to exit)\n"
        )
        assert not os.path.exists(path)  # a stuck server exits once it runs again; the next command starts one
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


@LINUX
@pytest.mark.slow
def test_sigterm_removes_the_socket_and_its_lock(setup: Setup, sample_db: Path) -> None:
    """Issue 46: SIGTERM left the socket file behind (its lock was removed)."""
    setup.start(sample_db)
    (pid,) = setup.pids()
    assert setup.sockets() == [setup.socket_for(sample_db)]
    os.kill(pid, signal.SIGTERM)
    _wait(lambda: not setup.pids(), "SIGTERM did not stop the server", timeout=60)
    assert sorted(p.name for p in setup.folder.iterdir() if not p.name.endswith(".log")) == ["announced"]
