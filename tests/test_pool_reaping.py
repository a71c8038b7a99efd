"""No process of `lancelot index` outlives it (issue 45 item 9): its reader workers and
multiprocessing's resource tracker (which every spawn starts) are reaped before it returns.
Linux only (/proc)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import lancelot_command, subprocess_env
from tests.test_index_interrupts import group_members, make_pages

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]


def _crashed(job: str, ended: object) -> int:
    return -1


def test_a_finished_pool_leaves_no_child_and_no_resource_tracker() -> None:
    import multiprocessing
    from multiprocessing import resource_tracker

    from lancelot_cli.indexer.pool import imap

    assert list(imap(len, ["ab", "c", "def", ""], 2, _crashed)) == [2, 1, 3, 0]
    assert multiprocessing.active_children() == []
    tracker = resource_tracker._resource_tracker
    assert tracker._pid is None and tracker._fd is None  # stopped and reaped, not left to our exit
    # a pool closed early (Ctrl-C, an error) too, and the next pool starts its own tracker
    results = imap(len, ["ab", "c", "def"], 2, _crashed)
    assert next(results) == 2
    results.close()
    assert multiprocessing.active_children() == []
    assert tracker._pid is None


def test_index_returns_with_no_process_of_its_group_left(tmp_path: Path) -> None:
    src = tmp_path / "pages"
    make_pages(src, 40)  # enough HTML pages for the worker pool
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    # files, not pipes: reading a pipe to its end would wait for every process that holds it
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [*lancelot_command(), "index", str(src), str(tmp_path / "db"), "--no-embed"],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path), LANCELOT_INDEX_WORKERS="2"),
        )
        try:
            assert proc.wait(timeout=300) == 0, err.read_text()
            left = group_members(proc.pid)  # start_new_session: the parent led its own group
            commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ") for pid in left]
            assert left == [], commands
        finally:
            for pid in group_members(proc.pid):
                os.kill(pid, 9)
