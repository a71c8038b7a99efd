"""`lancelot index` hands its run to a `lancelot index --watch` of the same table (issue 49 #2;
cli/handoff.py, indexer/handoff.py, index_socket.py): real watcher and client processes.

The client of a handed-off run never loads lancedb or the indexer (``python -X importtime`` shows
what it imported) and prints the summary a run of its own prints; the watcher's errors, a Ctrl-C in
the client, a watcher killed while the client waits, a socket file nobody listens on, a plan the
watcher does not run, garbage on the socket and a path too long for a Unix socket each behave as
the module docs say.
"""

from __future__ import annotations

import json
import os
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

import pytest

from lancelot_cli.index_socket import SUN_PATH_MAX, socket_path
from tests.conftest import lancelot_command, subprocess_env
from tests.test_freshness import Watcher, folder_rows, lock_held, table_rows

SOCKET = ".lancelot-index-documents.sock"
DECLINED = {"not a request", "another protocol", "another plan"}
HEAVY_FILES = 1500  # new files whose batch keeps the watcher busy for seconds


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a short path: a Unix socket's path has at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="lh-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def watching(docs: Path, short_tmp: Path) -> Iterator[tuple[Watcher, Path]]:
    """A watcher of ``docs`` into a database in ``short_tmp``, ready (file events subscribed)."""
    db = short_tmp / "db"
    watcher = Watcher(docs, db, short_tmp)
    try:
        watcher.wait_ready(docs)
        _wait_for_socket(db, watcher)
        yield watcher, db
    finally:
        watcher.close()


def _wait_for_socket(db: Path, watcher: Watcher) -> None:
    """Until the watcher listens (it does before its first pass); a watcher that never does is for
    the tests to find out, each by what it checks."""
    deadline = time.monotonic() + 10
    while not (db / SOCKET).exists() and time.monotonic() < deadline and watcher.proc.poll() is None:
        time.sleep(0.05)


def _client(docs: Path, db: Path, config: Path, *extra: str, importtime: bool = True) -> subprocess.Popen[str]:
    """`lancelot index DOCS DB` (under ``python -X importtime``: its imports are on stderr)."""
    head = [sys.executable, "-X", "importtime", "-m", "lancelot_cli"] if importtime else lancelot_command()
    return subprocess.Popen(
        [*head, "index", str(docs), str(db), *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(LANCELOT_CONFIG_DIR=str(config), COLUMNS="400"),
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, list[str], list[str]]:
    """Exit code, stdout, the stderr lines that are not import times, and the modules imported."""
    out, err = proc.communicate(timeout=120)
    lines = err.splitlines()
    said = [line for line in lines if not line.startswith("import time:")]
    imported = [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")]
    return proc.returncode, out, said, imported


def _run_here_imports(imported: list[str]) -> bool:
    """Whether the process ran the index itself (it loaded lancedb or the indexer)."""
    return any(name == "lancedb" or name.startswith("lancelot_cli.indexer") for name in imported)


def _without_timing(lines: list[str]) -> list[str]:
    return [re.sub(r" in \d+\.\d s\.$", " in _ s.", line) for line in lines]


def _heavy_change(docs: Path) -> None:
    """Enough new files that the watcher's batch for them takes seconds."""
    more = docs / "more"
    more.mkdir()
    for number in range(HEAVY_FILES):
        body = f"# Note {number}\n\n" + " ".join(f"word{(number * 7 + k) % 997}" for k in range(300)) + "\n"
        (more / f"note-{number}.md").write_text(body)


def _wait_connected(path: str, client: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Until a connection to the socket at ``path`` exists: an entry in state 03 (connected) in
    /proc/net/unix under the name the listener was bound to (the watcher binds a private name in
    the same folder and renames it into place: indexer/handoff.py ``_bound``)."""
    folder = os.path.dirname(path)
    names = (path, os.path.join(folder, ".lancelot-sock-"))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[-1].startswith(names) and fields[5] == "03":
                return
        assert client.poll() is None, "the client ended before it connected"
        time.sleep(0.005)
    raise AssertionError(f"no connection to {path} within {timeout} s")


def _connected_client(docs: Path, db: Path, config: Path) -> subprocess.Popen[str]:
    """A client whose run the watcher has a pass of new files to make for, once it is connected."""
    _heavy_change(docs)
    client = _client(docs, db, config, importtime=False)
    _wait_connected(str(socket_path(str(db), "documents")), client)
    return client


# -- handed off ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_plain_rerun_is_handed_to_the_watcher_and_prints_the_same_summary(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    watcher, db = watching
    (docs / "handed.md").write_text("# Handed\n\nA note the watcher indexes for the client.\n")
    code, _out, said, imported = _finish(_client(docs, db, short_tmp))
    assert code == 0, said
    assert not _run_here_imports(imported), [n for n in imported if "lancedb" in n or "indexer" in n]
    assert said[0].startswith("Indexed ") and "chunk(s) in table 'documents' of " in said[0], said
    code, _out, said, imported = _finish(_client(docs, db, short_tmp))  # nothing new: as the run below
    assert code == 0 and not _run_here_imports(imported), said
    handed_json = _finish(_client(docs, db, short_tmp, "--json"))
    assert handed_json[0] == 0 and not _run_here_imports(handed_json[3])
    assert "Traceback" not in watcher.stderr and watcher.proc.poll() is None
    assert stat.S_IMODE(os.stat(db / SOCKET).st_mode) == 0o600

    watcher.stop(signal.SIGTERM)
    assert not (db / SOCKET).exists()  # the watcher removes its socket as it stops
    own = _finish(_client(docs, db, short_tmp))  # no watcher: the run is its own
    own_json = _finish(_client(docs, db, short_tmp, "--json"))
    assert own[0] == 0 and _run_here_imports(own[3])
    assert _without_timing(said) == _without_timing(own[2])  # the same summary, line for line
    handed_report, own_report = json.loads(handed_json[1]), json.loads(own_json[1])
    for report in (handed_report, own_report):
        report.pop("seconds"), report.pop("textSeconds")
    assert handed_report == own_report
    assert table_rows(db) == folder_rows(docs)


# cli/quick_index.py alone (what cli/app.py ``main`` tries for `index` before the Typer app), its
# NOT_TAKEN as exit 3; and the Typer app alone, without the quick paths main tries first.
QUICK_MAIN = """
import os, sys
from lancelot_cli.startup import start
start(sys.argv[1:])
from lancelot_cli.cli import quick_index
code = quick_index.run(sys.argv[1:])
sys.stdout.flush(); sys.stderr.flush()
os._exit(3 if code is quick_index.NOT_TAKEN else code)
"""
TYPER_MAIN = """
import os, sys
from lancelot_cli.startup import start
start(sys.argv[1:])
from lancelot_cli.cli import commands
code = commands.run()
sys.stdout.flush(); sys.stderr.flush()
os._exit(code or 0)
"""


@pytest.mark.slow
def test_the_quick_path_prints_what_the_typer_path_prints(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    """cli/quick_index.py: the same summary and JSON as the Typer command, without Typer or rich's
    tables (and without lancedb); a command line it does not take is left to the Typer app."""
    _watcher, db = watching
    quick = [sys.executable, "-X", "importtime", "-c", QUICK_MAIN]
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(short_tmp), COLUMNS="400")
    outcomes = []
    # `lancelot` itself (cli/app.py main takes the quick path), then the Typer command alone
    lancelot = [sys.executable, "-X", "importtime", "-m", "lancelot_cli"]
    for head in (lancelot, [sys.executable, "-X", "importtime", "-c", TYPER_MAIN]):
        for extra in ([], ["--json"]):
            proc = subprocess.Popen(
                [*head, "index", str(docs), str(db), *extra],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            outcomes.append(_finish(proc))
    for code, _out, said, imported in outcomes:
        assert code == 0 and not _run_here_imports(imported), said
    for _code, _out, _said, imported in outcomes[:2]:
        assert "typer" not in imported and "click" not in imported
    assert _without_timing(outcomes[0][2]) == _without_timing(outcomes[2][2])
    quick_json, typer_json = json.loads(outcomes[1][1]), json.loads(outcomes[3][1])
    for report in (quick_json, typer_json):
        report.pop("seconds"), report.pop("textSeconds")
    assert quick_json == typer_json
    declined = subprocess.run(
        [*quick, "index", str(docs), str(db), "--rebuild"], capture_output=True, text=True, env=env, timeout=60
    )
    assert declined.returncode == 3 and "lancelot" not in declined.stderr.replace("lancelot_cli", "")


@pytest.mark.slow
def test_the_watchers_error_is_the_clients_one_line(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    """Another process holds the writer lock: the watcher's pass is refused, and the client prints
    the refusal a run of its own prints (naming the holder), exit 1; lock behaviour unchanged."""
    _watcher, db = watching
    with lock_held(db) as holder:
        code, _out, said, imported = _finish(_client(docs, db, short_tmp))
    assert code == 1 and len(said) == 1, said
    assert said[0].startswith("lancelot: error: another `lancelot index` (pid ")
    assert f"(pid {holder.pid})" in said[0]
    assert not _run_here_imports(imported)


@pytest.mark.slow
def test_another_plan_runs_in_the_client_as_before(watching: tuple[Watcher, Path], docs: Path, short_tmp: Path) -> None:
    """--rebuild (like another --ext or --embed-model) is not the watcher's run: the client runs it."""
    _watcher, db = watching
    code, _out, said, imported = _finish(_client(docs, db, short_tmp, "--rebuild"))
    assert code == 0, said
    assert _run_here_imports(imported)
    assert table_rows(db) == folder_rows(docs)


# -- interrupted, killed, stale ------------------------------------------------------------------


@pytest.mark.slow
def test_ctrl_c_in_the_client_leaves_the_watchers_pass_to_finish(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    watcher, db = watching
    # Ctrl-C once the client is connected (no sleep to guess: the quick client connects within a
    # tenth of a second and the pass may last about as long).
    client = _connected_client(docs, db, short_tmp)
    client.send_signal(signal.SIGINT)
    code, _out, said, _imported = _finish(client)
    assert code == 130, said
    assert len(said) == 1 and said[0].startswith("lancelot: error: interrupted (Ctrl-C); the watching"), said
    assert "finishes and commits" in said[0]  # with the watcher's pid once it had answered
    deadline = time.monotonic() + 120
    while table_rows(db) != folder_rows(docs):  # the watcher's passes commit everything
        assert time.monotonic() < deadline, watcher.stderr
        assert watcher.proc.poll() is None, watcher.stderr
        time.sleep(0.5)
    assert "Traceback" not in watcher.stderr
    again = _finish(_client(docs, db, short_tmp))  # and it still serves
    assert again[0] == 0 and not _run_here_imports(again[3]), again[2]


@pytest.mark.slow
def test_a_watcher_killed_while_the_client_waits_is_one_line(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    watcher, db = watching
    client = _connected_client(docs, db, short_tmp)
    time.sleep(0.5)  # the watcher greets at once; its pass over the new files lasts longer
    watcher.proc.kill()
    code, _out, said, _imported = _finish(client)
    assert code == 1, said
    assert len(said) == 1, said
    assert said[0].startswith(f"lancelot: error: the watching `lancelot index` (pid {watcher.proc.pid}) stopped")


@pytest.mark.slow
def test_a_watcher_stopped_while_the_client_waits_leaves_it_a_whole_run(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    """SIGTERM to the watcher: the pass in flight finishes; the client gets that pass's report if it
    was its pass, else the watcher declines and the client runs by itself. Either way: exit 0."""
    watcher, db = watching
    client = _connected_client(docs, db, short_tmp)
    time.sleep(0.5)  # as above
    assert watcher.stop(signal.SIGTERM) == 0, watcher.stderr
    code, _out, said, _imported = _finish(client)
    assert code == 0, said
    assert said[0].startswith("Indexed "), said
    assert table_rows(db) == folder_rows(docs)


@pytest.mark.slow
def test_a_socket_file_nobody_listens_on_is_passed_over(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    """A watcher killed with SIGKILL leaves its socket file: the client runs as before, and the next
    watcher replaces the file."""
    watcher, db = watching
    watcher.proc.kill()
    watcher.proc.wait(timeout=30)
    assert (db / SOCKET).exists()
    (docs / "later.md").write_text("# Later\n\nWritten after the watcher died.\n")
    code, _out, said, imported = _finish(_client(docs, db, short_tmp))
    assert code == 0, said
    assert _run_here_imports(imported)
    assert table_rows(db) == folder_rows(docs)
    second = Watcher(docs, db, short_tmp)
    try:
        second.wait_watching()
        deadline = time.monotonic() + 30
        while not _answers(db / SOCKET):
            assert time.monotonic() < deadline, second.stderr
            time.sleep(0.1)
    finally:
        second.close()


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


# -- hostile peers and long paths ------------------------------------------------------------------


@pytest.mark.slow
def test_garbage_on_the_socket_leaves_the_watcher_serving(
    watching: tuple[Watcher, Path], docs: Path, short_tmp: Path
) -> None:
    watcher, db = watching
    path = str(db / SOCKET)
    sends = [
        b"\xff\xfe garbage\n",
        b"[1, 2, 3]\n",
        b'{"lancelot": "index", "protocol": 1, "plan": "not a plan"}\n',
        b'{"lancelot": "index", "protocol": 99}\n',
        b"x" * (2 << 20),  # longer than a message may be, no newline
        b"",  # connect and hang up
    ]
    for data in sends:
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.settimeout(10)
        peer.connect(path)
        try:
            peer.sendall(data)
            peer.shutdown(socket.SHUT_WR)
            reply = peer.recv(1 << 16)
        except OSError:  # the watcher may hang up before it reads everything
            reply = b""
        finally:
            peer.close()
        assert reply == b"" or json.loads(reply)["declined"] in DECLINED, reply
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(path)  # says nothing: dropped after a while, others are served meanwhile or after
    try:
        code, _out, said, imported = _finish(_client(docs, db, short_tmp))
    finally:
        silent.close()
    assert code == 0, said
    assert not _run_here_imports(imported)
    assert watcher.proc.poll() is None and "Traceback" not in watcher.stderr


@pytest.mark.slow
def test_no_socket_for_a_path_too_long(docs: Path, short_tmp: Path) -> None:
    """The socket's path would not fit a sockaddr_un: the watcher listens on none, and `lancelot
    index` runs as before."""
    deep = short_tmp / ("d" * 60) / ("e" * 60)
    db = deep / "db"
    assert socket_path(str(db), "documents") is None
    watcher = Watcher(docs, db, short_tmp)
    try:
        watcher.wait_ready(docs)
        (docs / "long.md").write_text("# Long\n\nA database folder with a long path.\n")
        # its batch first: a run during a batch is refused by the writer lock, as always without a socket
        watcher.wait_for(lambda _lines: len(watcher.batches()) == 2, 60, "the batch line for long.md")
        code, _out, said, imported = _finish(_client(docs, db, short_tmp))
        assert code == 0, said
        assert _run_here_imports(imported)
        assert not (db / SOCKET).exists()
    finally:
        watcher.close()


def test_plain_options_are_the_commands_defaults() -> None:
    import dataclasses

    from lancelot_cli.cli.handoff import PLAIN
    from lancelot_cli.cli.index import index
    from lancelot_cli.indexer.job import Options

    assert dataclasses.asdict(Options()) == PLAIN
    assert index.__defaults__ is not None and PLAIN["max_file_size"] in index.__defaults__


def test_quick_index_takes_plain_command_lines_only() -> None:
    from lancelot_cli.cli.quick_index import parse

    assert parse(["index", "src"]) == (["src"], None, False)
    assert parse(["index", "src", "db", "-t", "notes", "--json"]) == (["src", "db"], "notes", True)
    assert parse(["index", "--table=notes", "src"]) == (["src"], "notes", False)
    for argv in (
        ["index"],
        ["index", "a", "b", "c"],
        ["index", "src", "--rebuild"],
        ["index", "src", "--watch"],
        ["index", "src", "--table", "--json"],
        ["index", "src", "--help"],
        ["index", "--", "src"],
        ["search", "src"],
        ["--db", "x", "index", "src"],
        ["index", "src\udcff"],
    ):
        assert parse(argv) is None, argv


def test_socket_paths() -> None:
    assert socket_path("s3://bucket/db", "documents") is None
    assert socket_path(None, "documents") is None
    assert socket_path("/tmp/db", "notes") == "/tmp/db/.lancelot-index-notes.sock"
    long = "/tmp/" + "x" * (SUN_PATH_MAX - len("/tmp//.lancelot-index-t.sock"))
    assert socket_path(long, "t") == f"{long}/.lancelot-index-t.sock"
    assert socket_path(long + "y", "t") is None
