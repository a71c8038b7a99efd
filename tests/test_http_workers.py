"""`serve --http --workers N` against real processes: the SDK's Streamable HTTP client from several
concurrent clients served by distinct worker processes (their pids, from `lancelot://stats` and the
metrics log), the Guard rules and the header deadline inside a worker, SIGTERM stopping every
worker with exit 0, SIGKILL of the parent taking the workers with it, a worker that cannot start
stopping the parent in one line, and bad --workers values.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import lancelot_command, subprocess_env
from tests.support.servers import Served, free_port, spawn_serve
from tests.test_http import _closed_after, _head, assert_error, assert_tool_reply, request, rpc

pytestmark = pytest.mark.slow

GONE_WITHIN = 10.0  # seconds for workers to end after their parent did


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux /proc)."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def workers_of(served: Served, count: int, timeout: float = 60.0) -> list[int]:
    """The worker pids of ``served`` once ``count`` of them exist (the parent also starts
    multiprocessing's resource tracker: the workers are the children that run spawn_main)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = []
        for pid in children(served.proc.pid):
            try:
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        if len(found) == count:
            return found
        time.sleep(0.1)
    pytest.fail(f"expected {count} workers under {served.proc.pid}: {children(served.proc.pid)}\n{served.stderr}")


def run_serve(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`lancelot serve ARGS` to its end (these runs are expected to stop by themselves)."""
    command = [*lancelot_command(), "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)


def start(tmp_path: Path, db: Path, *args: str, **env: str) -> Served:
    port = free_port()
    environ = subprocess_env(
        LANCEDB_PATH=str(db),
        LANCELOT_CONFIG_DIR=str(tmp_path / "config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        # The SDK clients of these tests keep connections alive between requests; under coverage on
        # a loaded 2-core CI machine they took over the 5 s idle limit to send the next one, and a
        # connection the server closed just then failed with ReadError (twice in CI, never here).
        # The header deadline is a second idle limit: it is armed again after every reply
        # (server/connections.py), so with its 10 s default a kept-alive connection was still closed
        # after 10 s idle, and a request sent as it closed failed the same way (the parent-kill test,
        # once in CI). Both are far above any gap between two requests of one client.
        **{"LANCELOT_HTTP_IDLE_TIMEOUT": "60", "LANCELOT_HTTP_HEADER_TIMEOUT": "60", **env},
    )
    return spawn_serve(lancelot_command(), ["--http", str(port), *args], port, tmp_path / "server", environ)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory, sample_db: Path) -> Any:
    tmp = tmp_path_factory.mktemp("http-workers")
    # No short idle or header deadline here (see `start`): on a loaded CI machine an SDK client's
    # kept-alive connection sat idle over 1 s between two requests and was closed as the next one
    # went out (ReadError); the header deadline, armed again after each reply, would do the same.
    served = start(tmp, sample_db, "--workers", "2", "--metrics-log", str(tmp / "metrics.jsonl"))
    try:
        served.workers = workers_of(served, 2)  # type: ignore[attr-defined]
        served.metrics = tmp / "metrics.jsonl"  # type: ignore[attr-defined]
        yield served
    finally:
        served.stop(signal.SIGTERM)


async def _one_client(url: str, query: str) -> int:
    async with Client(url) as client:
        result = await client.call_tool("lancedb_search", {"query": query, "limit": 3})
        assert not result.is_error
        assert json.loads(result.content[0].text)["hits"]  # type: ignore[union-attr]
        read = await client.read_resource("lancelot://stats")
    stats = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert stats["tools"]["lancedb_search"]["calls"] >= 1
    return int(stats["pid"])


@pytest.mark.anyio
async def test_concurrent_sdk_clients_are_served_by_distinct_workers(two_workers: Any) -> None:
    seen: set[int] = set()
    for _ in range(10):  # connections go to whichever worker accepts first: a few rounds see both
        try:
            pids = await asyncio.gather(*(_one_client(two_workers.url, q) for q in ["refund", "gift cards"] * 4))
        except Exception as exc:  # noqa: BLE001 (any failure: say what the server said with it)
            pytest.fail(f"{exc!r}\n{two_workers.stderr}")
        seen.update(pids)
        if len(seen) == 2:
            break
    assert seen == set(two_workers.workers)
    lines = [json.loads(line) for line in two_workers.metrics.read_text().splitlines()]
    assert lines and all(line["tool"] == "lancedb_search" for line in lines)  # whole lines, none interleaved
    assert {line["pid"] for line in lines} == set(two_workers.workers)


def test_the_guard_rules_hold_in_a_worker(two_workers: Any) -> None:
    port = two_workers.port
    assert_tool_reply(request(port))
    assert_error(request(port, headers={"Host": "evil.example"}), 403)
    assert_error(request(port, path="/other"), 404)
    reply = request(port, method="GET")
    assert reply.status == 405 and reply.headers["Allow"] == "POST"
    assert_error(request(port, body=b"{" + b" " * (64 * 1024) + b"}"), 413)
    assert_error(request(port, headers={"Content-Type": "text/plain"}), 415)
    assert assert_error(request(port, body=b"{not json"), 400)["code"] == -32700


def test_the_header_deadline_holds_in_a_worker(tmp_path: Path, sample_db: Path) -> None:
    """The protocol's limits come from the Config pickled into the worker (LANCELOT_HTTP_HEADER_TIMEOUT=2).
    A server of its own: a 2 s header deadline is also a 2 s idle limit on kept-alive connections,
    which the SDK clients of `two_workers` must not have."""
    served = start(tmp_path, sample_db, "--workers", "2", LANCELOT_HTTP_HEADER_TIMEOUT="2")
    try:
        workers_of(served, 2)
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            received = _closed_after(sock, 8.0, trickle=_head(served.port)[:-4])
    finally:
        served.stop(signal.SIGTERM)
    assert received.startswith(b"HTTP/1.1 408"), received


def test_sigterm_stops_every_worker_and_exits_0(tmp_path: Path, sample_db: Path) -> None:
    served = start(tmp_path, sample_db, "--workers", "2")
    workers = workers_of(served, 2)
    assert_tool_reply(request(served.port, body=rpc("lancedb_search", {"query": "refund"})))
    code, _ = served.stop(signal.SIGTERM, timeout=30)
    assert code == 0, served.stderr
    assert not any(alive(pid) for pid in workers)
    assert not listening(served.port)
    assert served.stdout == b""
    assert "2 worker processes" in served.stderr and "Traceback" not in served.stderr, served.stderr


def test_killing_the_parent_ends_the_workers(tmp_path: Path, sample_db: Path) -> None:
    served = start(tmp_path, sample_db, "--workers", "2")
    workers = workers_of(served, 2)
    # Serving first: a worker still importing when its parent dies learns it only once it has loaded
    # the app (server/transports/workers.py watch_parent), which a loaded CI machine took over 10 s to reach.
    serving(served, workers)
    served.proc.kill()
    served.proc.wait(timeout=10)
    deadline = time.monotonic() + GONE_WITHIN
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in workers), "workers outlived their parent"
    assert not listening(served.port)


def serving(served: Served, workers: list[int], timeout: float = 60.0) -> None:
    """Return once each of ``workers`` has answered a client: until then the parent is still
    starting them, and a worker that dies then is a start-up failure (the parent exits 1)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while seen != set(workers) and time.monotonic() < deadline:
        try:
            seen.update(asyncio.run(_clients(served.url, 8)))
        except Exception as exc:  # noqa: BLE001 (any failure: say what the server said with it)
            pytest.fail(f"{exc!r}\n{served.stderr}")
    assert seen == set(workers), (seen, workers, served.stderr)
    # The parent still takes a worker's death for a start-up failure until it has seen every
    # worker serve (server/transports/workers.py); a loaded CI machine took over the 1 s once waited here.
    while "worker processes are serving" not in served.stderr and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "worker processes are serving" in served.stderr, served.stderr


async def _clients(url: str, count: int) -> list[int]:
    return list(await asyncio.gather(*(_one_client(url, "refund") for _ in range(count))))


def test_a_worker_that_dies_while_serving_is_replaced(tmp_path: Path, sample_db: Path) -> None:
    served = start(tmp_path, sample_db, "--workers", "2")
    try:
        first, second = workers_of(served, 2)
        serving(served, [first, second])
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = workers_of(served, 2)
            if first not in now:
                break
            time.sleep(0.2)
        assert first not in now and second in now, now
        for _ in range(6):  # new connections: whichever worker takes them answers
            assert_tool_reply(request(served.port, body=rpc("lancedb_search", {"query": "refund"})))
    finally:
        code, _ = served.stop(signal.SIGTERM, timeout=30)
    assert code == 0, served.stderr


def test_a_worker_that_cannot_start_stops_the_parent_in_one_line(tmp_path: Path, sample_db: Path) -> None:
    """A worker that dies before it serves is not started again and again: the parent exits 1."""
    site = tmp_path / "site"
    site.mkdir()
    # Only the spawned workers run with --multiprocessing-fork: the parent starts normally.
    (site / "sitecustomize.py").write_text(
        'import sys\nif "--multiprocessing-fork" in sys.argv:\n    raise SystemExit("worker refused")\n'
    )
    env = subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path / "config"))
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
    done = run_serve(["--http", str(free_port()), "--workers", "2"], env)
    assert done.returncode == 1, done
    ours = [line for line in done.stderr.splitlines() if line.startswith("lancelot: error:")]
    assert len(ours) == 1 and "failed to start" in ours[0], done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--http", "0", "--workers", "0"], "greater than or equal to 1"),
        (["--http", "0", "--workers", "65"], "less than or equal to 64"),
        (["--http", "0", "--workers", "two"], "valid integer"),
        (["--workers", "2"], "--workers needs --http"),
        (["--socket", "/tmp/x.sock", "--workers", "2"], "--workers needs --http"),
    ],
)
def test_bad_workers_values_are_one_line_and_exit_2(
    tmp_path: Path, sample_db: Path, args: list[str], says: str
) -> None:
    env = subprocess_env(LANCEDB_PATH=str(sample_db), LANCELOT_CONFIG_DIR=str(tmp_path))
    done = run_serve(args, env)
    assert done.returncode == 2, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "--workers" in lines[0] and says in lines[0], done.stderr
