"""The warm process (lancelot_cli.warm, issue 13): real `lancelot` processes, a real warm process, real
LanceDB folders in tmp.

Each warm setup gets its own short XDG_RUNTIME_DIR; every warm process a test starts is found by that
folder in its environment (/proc) and killed at teardown. That the warm process answered a command
is read from its log, which names the client by the pid the kernel gave for the connection
(SO_PEERCRED): the test knows that pid from Popen. The import probe shows the other side: the
client process answered that way never imported lancedb.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
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
from typing import NamedTuple

import pytest

from lancelot_cli.warm import protocol, runtime
from tests.conftest import _LEAKY, REPO, hash_tree, lancelot_command
from tests.support.embed_server import MODEL, EmbedServer

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peer pids from SO_PEERCRED, /proc")]

START_TIMEOUT = 90.0  # importing lancedb on a loaded 2-core machine
HEAVY = ("lancedb", "pyarrow", "numpy", "pydantic", "lancelot_cli.engine", "lancelot_cli.storage.reader")


class Run(NamedTuple):
    pid: int
    code: int
    out: str
    err: str


class Warm:
    """A private runtime folder and the environment that points `lancelot` at it."""

    def __init__(self, config: Path, minutes: str = "2", **extra: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lw-", dir="/tmp"))  # AF_UNIX paths must stay short
        self.folder = self.root / "lancelot"
        base = {k: v for k, v in os.environ.items() if k not in _LEAKY}
        base.update({"LANCELOT_CONFIG_DIR": str(config), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
                     "COLUMNS": "120", "PYTHONPATH": str(REPO) + os.pathsep + base.get("PYTHONPATH", ""),
                     "XDG_RUNTIME_DIR": str(self.root), **extra})
        self.cold_env = {**base, "LANCELOT_WARM": "0"}
        self.env = {**base, "LANCELOT_WARM": minutes}
        self.started: Path | None = None  # the database `start` searched

    @property
    def place(self) -> runtime.Place:
        found = runtime.place(str(self.folder), runtime.fingerprint())
        assert found is not None
        return found

    def log(self) -> str:
        try:
            return Path(self.place.log).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def answered(self, run: Run) -> bool:
        """True when the warm process's log names this client's pid."""
        return re.search(rf" for pid {run.pid}: (ok|error)$", self.log(), flags=re.MULTILINE) is not None

    def lancelot(self, *args: str, warm: bool = True, cwd: Path | None = None, ensure: bool = True) -> Run:
        if not (warm and ensure):
            return _finish(self._spawn(args, warm, cwd))
        for _ in range(3):
            code = self.ensure()
            run = _finish(self._spawn(args, warm, cwd))
            if self.answered(run) or runtime.fingerprint() == code:
                break  # else someone edited a module meanwhile: ask the warm process for the new code
        return run

    def cold_and_warm(self, *args: str, cwd: Path | None = None) -> tuple[Run, Run]:
        """The same command with LANCELOT_WARM=0 and answered warm, run side by side (it saves time)."""
        for _ in range(3):
            code = self.ensure()
            cold, hot = self._spawn(args, False, cwd), self._spawn(args, True, cwd)
            runs = _finish(cold), _finish(hot)
            if self.answered(runs[1]) or runtime.fingerprint() == code:
                break  # as in `lancelot`
        return runs

    def ensure(self) -> str:
        """The code's fingerprint, with a warm process for it listening once `start` has run."""
        if self.started is not None and not os.path.exists(self.place.socket):
            self.start(self.started)  # the code changed since (its fingerprint did): the old one is not asked
        return runtime.fingerprint()

    def _spawn(self, args: tuple[str, ...], warm: bool, cwd: Path | None) -> subprocess.Popen[str]:
        return subprocess.Popen([*lancelot_command(), *args], env=self.env if warm else self.cold_env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=cwd)

    def start(self, db: Path) -> None:
        """One search in-process (it starts the warm process), then wait until it listens."""
        self.started = db
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            place = self.place
            first = self.lancelot("search", "refund", "--db", str(db), ensure=False)
            assert first.code == 0, first.err
            while not os.path.exists(place.socket) and place == self.place:
                assert time.monotonic() < deadline, f"no warm process listened; log:\n{self.log()}"
                time.sleep(0.05)
            if place == self.place:
                return
            # the code changed meanwhile (someone edited a module): start one for the code as it is now

    def pids(self) -> list[int]:
        """Warm processes started with this runtime folder (whatever their state)."""
        marker = f"XDG_RUNTIME_DIR={self.root}\0".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if b"lancelot_cli.warm.daemon" in (entry / "cmdline").read_bytes() \
                        and marker in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def close(self) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


def _finish(proc: subprocess.Popen[str]) -> Run:
    out, err = proc.communicate(timeout=120)
    return Run(proc.pid, proc.returncode, out, err)


@pytest.fixture
def warm(isolated_env: Path) -> Iterator[Warm]:
    setup = Warm(isolated_env)
    yield setup
    setup.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, sample_db: Path) -> Iterator[Warm]:
    """One warm process over the session's sample database, for the comparisons."""
    setup = Warm(tmp_path_factory.mktemp("warmconfig"))
    try:
        setup.start(sample_db)
        yield setup
    finally:
        setup.close()


# -- the same bytes, warm or not ------------------------------------------------------------------

SAME = {
    "search": ["search", "refund policy"],
    "search --json": ["search", "refund policy", "--json", "--limit", "3"],
    "search --filter": ["search", "warranty", "--path-prefix", "policies/", "--jsonl"],
    "query": ["query", "how long do refunds take"],
    "query --json": ["query", "how long do refunds take", "--json", "--budget", "1200"],
    "show": ["show", "policies/refunds.md"],
    "show --json SOURCE#N": ["show", "policies/refunds.md#0", "--json", "--before", "1", "--after", "0"],
    "status": ["status"],
    "status --json -v": ["status", "--json", "--verbose"],
    "error: missing table": ["search", "refund", "--table", "nope"],
    "error: bad filter column": ["search", "refund", "--filter", "colour=red"],
    "error: missing document": ["show", "policies/nothing.md", "--json"],
}


@pytest.mark.parametrize(("name", "args"), SAME.items(), ids=SAME.keys())
def test_warm_output_is_byte_identical(shared: Warm, sample_db: Path, name: str, args: list[str]) -> None:
    cold, hot = shared.cold_and_warm(*args, "--db", str(sample_db))
    assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
    assert shared.answered(hot), shared.log()
    assert not shared.answered(cold)
    if name.startswith("error"):
        assert hot.code == 1 and hot.err.startswith("lancelot: error: ") and hot.err.count("\n") == 1
    else:
        assert hot.code == 0 and hot.out.strip()


def test_vector_and_hybrid_search_through_the_warm_process(isolated_env: Path, embed_server: EmbedServer,
                                                         vector_db: Path) -> None:
    """The key and the embeddings endpoint come from the client's environment; the query is embedded
    by the warm process (through the real openai client), the hits are the same."""
    setup = Warm(isolated_env, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=embed_server.url, EMBEDDING_MODEL=MODEL)
    try:
        setup.start(vector_db)
        for args in (["search", "refund policy", "--json"], ["search", "refund policy", "--type", "vector"],
                     ["status", "--json"]):
            cold, hot = setup.cold_and_warm(*args, "--db", str(vector_db))
            assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
            assert hot.code == 0 and setup.answered(hot), setup.log()
        assert json.loads(hot.out)["embeddings"]["keySource"] == "env"
        requests = embed_server.requests
        hybrid = setup.lancelot("search", "warranty repair", "--json", "--db", str(vector_db))
        assert json.loads(hybrid.out)["searchType"] == "hybrid" and setup.answered(hybrid)
        assert embed_server.requests == requests + 1
    finally:
        setup.close()


def test_relative_db_resolves_in_the_clients_folder(shared: Warm, sample_db: Path) -> None:
    cold, hot = shared.cold_and_warm("search", "refund policy", "--db", sample_db.name, cwd=sample_db.parent)
    assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
    assert hot.code == 0 and shared.answered(hot)


PROBE = """
import json, sys
sys.argv = ["lancelot", *json.loads(sys.argv[1])]
from lancelot_cli.cli.app import run
code = run()
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_a_warm_answered_client_imports_no_heavy_library(shared: Warm, sample_db: Path) -> None:
    args = ["search", "refund policy", "--db", str(sample_db)]
    proc = subprocess.Popen([sys.executable, "-c", PROBE, json.dumps(args)], env=shared.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    report = json.loads(err.strip().splitlines()[-1])
    assert report["code"] == 0
    assert shared.answered(Run(proc.pid, 0, out, err)), shared.log()
    assert out == shared.lancelot(*args, warm=False).out
    heavy = [m for m in report["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []
    assert "lancelot_cli.warm.client" in report["modules"]  # the probe did take the warm path


def test_malformed_requests_get_no_answer_but_a_fallback(shared: Warm, sample_db: Path) -> None:
    """The warm process reads only JSON of its protocol and runs only the four read methods; after
    nonsense it still answers real clients."""
    def ask(payload: bytes) -> tuple[str, object] | None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(shared.place.socket)
            assert sock.recv(1) == protocol.ACK
            protocol.send_frame(sock, payload)
            try:
                return protocol.load_reply(protocol.recv_frame(sock, protocol.MAX_REPLY))
            except EOFError:
                return None

    valid = {"protocol": runtime.PROTOCOL, "method": "search", "options": {"query": "refund"},
             "environ": dict(shared.env), "cwd": "/", "settings": {"db_uri": str(sample_db)}}
    assert ask(pickle.dumps(os.system)) is None  # not JSON: dropped, never unpickled
    assert ask(b"[1, 2]")[0] == "fallback"
    for method in ("database", "_table", "__init__", "agent_text"):
        assert ask(json.dumps({**valid, "method": method}).encode())[0] == "fallback"
    assert ask(json.dumps({**valid, "cwd": "relative"}).encode())[0] == "fallback"
    assert ask(json.dumps(valid).encode())[0] == "fallback"  # settings without Settings' fields
    run = shared.lancelot("search", "refund", "--db", str(sample_db))
    assert run.code == 0 and shared.answered(run)


def test_warm_calls_leave_the_database_unchanged(shared: Warm, sample_db: Path) -> None:
    before = hash_tree(sample_db)
    runs = [shared.lancelot(*args, "--db", str(sample_db))
            for args in (["search", "refund"], ["query", "returns"], ["show", "faq.txt"], ["status", "-v"],
                         ["search", "x", "--table", "nope"])]
    assert all(shared.answered(run) for run in runs), shared.log()
    assert hash_tree(sample_db) == before


# -- freshness, idling out, unsafe places ------------------------------------------------------------

def test_the_warm_process_sees_a_table_indexed_again(warm: Warm, docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    indexed = warm.lancelot("index", str(docs), str(db), warm=False)
    assert indexed.code == 0, indexed.err
    warm.start(db)
    before = warm.lancelot("search", "zephyrquartz", "--db", str(db), "--json")
    assert warm.answered(before) and json.loads(before.out)["count"] == 0
    refunds = docs / "policies" / "refunds.md"
    refunds.write_text(refunds.read_text(encoding="utf-8").replace("unused items", "zephyrquartz items"),
                       encoding="utf-8")
    again = warm.lancelot("index", str(docs), str(db), warm=False)
    assert again.code == 0, again.err
    after = warm.lancelot("search", "zephyrquartz", "--db", str(db), "--json")
    assert warm.answered(after), warm.log()
    assert [hit["source"] for hit in json.loads(after.out)["hits"]] == ["policies/refunds.md"]
    gone = warm.lancelot("search", "unused", "--db", str(db), "--json")
    assert warm.answered(gone)
    assert "policies/refunds.md" not in [hit["source"] for hit in json.loads(gone.out)["hits"]]


def test_the_warm_process_exits_when_idle(isolated_env: Path, sample_db: Path) -> None:
    setup = Warm(isolated_env, minutes="0.02")  # 1.2 s
    try:
        setup.start(sample_db)
        deadline = time.monotonic() + 30
        while setup.pids() or os.path.exists(setup.place.socket):
            assert time.monotonic() < deadline, setup.log()
            time.sleep(0.1)
        assert "exiting: idle" in setup.log()
        assert not os.path.exists(setup.place.lock)
    finally:
        setup.close()


def test_a_stale_socket_file_is_replaced(warm: Warm, sample_db: Path) -> None:
    warm.folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(warm.place.socket)  # bound, never listening, closed: connecting is refused
    stale.close()
    cold = warm.lancelot("search", "refund policy", "--db", str(sample_db), warm=False)
    first = warm.lancelot("search", "refund policy", "--db", str(sample_db))
    assert (first.out, first.err, first.code) == (cold.out, cold.err, cold.code)
    assert not warm.answered(first)
    deadline = time.monotonic() + START_TIMEOUT
    while "listening" not in warm.log():
        assert time.monotonic() < deadline, "the client started no warm process"
        time.sleep(0.05)
    second = warm.lancelot("search", "refund policy", "--db", str(sample_db))
    assert second.out == cold.out and warm.answered(second), warm.log()


@pytest.mark.parametrize("mode", [0o770, 0o705], ids=["group-writable", "other-readable"])
def test_a_runtime_folder_others_can_enter_is_not_used(warm: Warm, sample_db: Path, mode: int) -> None:
    warm.folder.mkdir()
    warm.folder.chmod(mode)
    cold = warm.lancelot("search", "refund policy", "--db", str(sample_db), warm=False)
    hot = warm.lancelot("search", "refund policy", "--db", str(sample_db))
    assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
    assert warm.pids() == [] and os.listdir(warm.folder) == []
    assert stat.S_IMODE(warm.folder.stat().st_mode) == mode


def test_a_warm_process_that_does_not_answer_is_not_waited_for(warm: Warm, sample_db: Path) -> None:
    """A socket that is listened on but never accepted (a stuck or busy warm process): in-process
    after the one-second wait for its greeting, same output, and no second warm process started."""
    warm.folder.mkdir(mode=0o700)
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        stuck.bind(warm.place.socket)
        stuck.listen(4)
        cold = warm.lancelot("search", "refund policy", "--db", str(sample_db), warm=False)
        hot = warm.lancelot("search", "refund policy", "--db", str(sample_db))
        assert (hot.out, hot.err, hot.code) == (cold.out, cold.err, cold.code)
        assert warm.pids() == []
    finally:
        stuck.close()


def test_ctrl_c_while_waiting_for_the_warm_process(warm: Warm, sample_db: Path) -> None:
    """A warm process that greets and then takes long: Ctrl-C ends the client with the usual line."""
    warm.folder.mkdir(mode=0o700)
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.bind(warm.place.socket)
    slow.listen(4)
    proc = subprocess.Popen([*lancelot_command(), "search", "refund policy", "--db", str(sample_db)], env=warm.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        slow.settimeout(60)
        conn, _ = slow.accept()
        conn.sendall(protocol.ACK)
        conn.settimeout(60)
        assert conn.recv(4)  # the request is on its way; no reply will come
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        conn.close()
    finally:
        proc.kill()
        slow.close()
    assert (proc.returncode, out) == (130, "")
    assert err == "lancelot: error: interrupted; nothing was changed by the unfinished step\n"


def test_warm_zero_starts_nothing(warm: Warm, sample_db: Path) -> None:
    run = warm.lancelot("search", "refund policy", "--db", str(sample_db), warm=False)
    assert run.code == 0
    assert not warm.folder.exists() and warm.pids() == []


# -- the protocol, in-process ---------------------------------------------------------------------

def test_settings_cross_as_json_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    from lancelot_cli.settings import load

    monkeypatch.setenv("LANCELOT_ALLOWED_ORIGINS", "https://a.example,https://b.example")
    monkeypatch.setenv("LANCELOT_STORAGE_OPTIONS", '{"region": "eu-west-1"}')
    monkeypatch.setenv("LANCELOT_READ_CONSISTENCY", "2.5")
    monkeypatch.setenv("LANCELOT_WARM", "0.25")
    settings = load(flags={"LANCEDB_PATH": "./db"})
    sent = json.loads(json.dumps(protocol.settings_to_json(settings)))
    assert protocol.settings_from_json(sent) == settings
    with pytest.raises(ValueError):
        protocol.settings_from_json({**sent, "extra": 1})


def test_a_reply_may_hold_only_models_errors_and_plain_values() -> None:
    from datetime import datetime, timezone

    from lancelot_cli.errors import TableNotFoundError
    from lancelot_cli.models import Hit, SearchResult

    hit = Hit(id="a.md#0", score=1.5, matched=1.0, title="A", source="a.md", snippet="…",
              metadata={"date": datetime(2026, 1, 1, tzinfo=timezone.utc), "tags": ["x"]}, text="t")
    model = SearchResult(query="q", table="documents", search_type="text", ranking="bm25", hits=(hit,))
    assert protocol.load_reply(protocol.dump_reply("ok", model)) == ("ok", model)
    kind, error = protocol.load_reply(protocol.dump_reply("error", TableNotFoundError("no table", hint="x")))
    assert (kind, type(error), str(error), error.hint) == ("error", TableNotFoundError, "no table", "x")
    for hostile in (os.system, Path("/etc"), subprocess.Popen):
        with pytest.raises(pickle.UnpicklingError):
            protocol.load_reply(pickle.dumps(("ok", hostile)))
