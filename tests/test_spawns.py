"""The count behind the rule that a test which starts a process is marked ``slow``
(tests/support/spawns.py, enforced in tests/conftest.py): every way the tests start one is seen,
so the rule cannot go quiet when Python's subprocess internals change; the quick tools are not."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pty
import subprocess
import sys

import pytest

from tests.support import spawns

pytestmark = pytest.mark.slow  # it starts processes, by design


def _counted(start: object) -> list[str]:
    before = spawns.started()
    start()  # type: ignore[operator]
    return spawns.programs(before)


def _pty() -> None:
    pid, leader = pty.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(leader)


async def _asyncio() -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()


def _multiprocessing() -> None:
    worker = multiprocessing.get_context("spawn").Process(target=int)
    worker.start()
    worker.join(60)


@pytest.mark.parametrize(
    ("start", "program"),
    [
        (lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), os.path.basename(sys.executable)),
        (
            lambda: subprocess.run([sys.executable, "-c", "pass"], check=True, close_fds=False),  # posix_spawn
            os.path.basename(sys.executable),
        ),
        (lambda: subprocess.run("exit 0", shell=True, check=True), "sh"),
        (lambda: asyncio.run(_asyncio()), os.path.basename(sys.executable)),
        (_pty, "?"),
    ],
    ids=["subprocess", "posix-spawn", "shell", "asyncio", "pty"],
)
def test_every_way_of_starting_a_process_is_counted(start: object, program: str) -> None:
    assert _counted(start) == [program]


def test_multiprocessing_workers_are_counted() -> None:
    assert _counted(_multiprocessing)  # the worker (and multiprocessing's resource tracker)


def test_the_quick_tools_are_not_counted() -> None:
    assert _counted(lambda: subprocess.run(["git", "--version"], capture_output=True, check=True)) == []
