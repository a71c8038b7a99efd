"""The server's malloc settings (server/process/memory.py): glibc really keeps to one arena once they are
applied (counted with ``malloc_info`` in a fresh interpreter whose threads all allocate at once,
against a control run without them), a variable the user set wins, and `lancelot serve` applies
them on both transports before anything else. Memory freed inside the heap goes back to the
system after a tool call: at once when much lies free, else once the process is idle. The memory
figures themselves are a benchmark (tests/benchmarks/server_memory.py), not a test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from lancelot_cli.server.process.memory import tune_malloc
from tests.conftest import lancelot_command, subprocess_env

pytestmark = pytest.mark.slow  # every test here runs a fresh interpreter

glibc = pytest.mark.skipif(
    not (hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")),
    reason="the malloc settings are glibc's; nothing is applied elsewhere",
)

# Eight threads each hold a block while all of them allocate (a barrier), so glibc would give
# them arenas of their own; then malloc_info's XML is read back and its heaps counted.
ARENAS = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from lancelot_cli.server.process.memory import tune_malloc
    applied = tune_malloc() if sys.argv[1] == "tuned" else []
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()
        blocks = [libc.malloc(4096) for _ in range(200)]
        barrier.wait()
        for block in blocks:
            libc.free(block)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    path = os.path.join(tempfile.mkdtemp(), "info.xml")
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(open(path).read().count("<heap nr="), ",".join(applied))
""")


def _arenas(mode: str, **env: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", ARENAS, mode], capture_output=True, text=True, timeout=60, env=subprocess_env(**env)
    )
    assert done.returncode == 0, done.stderr
    count, _, applied = done.stdout.strip().partition(" ")
    return int(count), applied


@glibc
def test_tuned_process_keeps_to_one_arena_where_threads_would_make_several() -> None:
    control, _ = _arenas("control")
    tuned, applied = _arenas("tuned")
    assert control > 1  # the test can fail: without the settings the threads get arenas of their own
    assert tuned == 1
    assert applied.split(",") == ["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]


@glibc
def test_a_variable_the_user_set_is_left_alone() -> None:
    count, applied = _arenas("tuned", MALLOC_ARENA_MAX="3")
    assert "MALLOC_ARENA_MAX" not in applied.split(",")
    assert 1 < count <= 3
    assert tune_malloc({"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "1", "MALLOC_TRIM_THRESHOLD_": "1"}) == []


@glibc
@pytest.mark.parametrize("transport", [["serve"], ["serve", "--http", "0"]])
def test_serve_applies_the_settings_on_both_transports(transport: list[str], tmp_path: object) -> None:
    proc = subprocess.Popen(
        [*lancelot_command(), *transport],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(LANCELOT_LOG_LEVEL="debug", LANCEDB_PATH=str(tmp_path), MALLOC_TRIM_THRESHOLD_="1048576"),
    )
    try:
        line = ""
        assert proc.stderr is not None
        for _ in range(200):  # the line comes before the server serves anything
            line = proc.stderr.readline()
            if "malloc set" in line or not line:
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert "malloc set for a long-running server: MALLOC_ARENA_MAX=1, MALLOC_MMAP_THRESHOLD_=33554432" in line
    assert "MALLOC_TRIM_THRESHOLD_" not in line  # set by the user


# Blocks of 1 MiB (below the 32 MiB mmap threshold: heap memory) written to, each followed by a
# 64 KiB block that stays allocated (untouched), so the freed blocks are holes glibc never trims by itself.
RELEASE = textwrap.dedent("""
    import ctypes, json, sys, time
    from lancelot_cli.server.process import memory
    memory.tune_malloc()
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def rss():
        return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20

    def churn(mib):
        blocks = [(libc.malloc(1 << 20), libc.malloc(64 << 10)) for _ in range(mib)]
        for big, _ in blocks:
            ctypes.memset(big, 1, 1 << 20)
        for big, _ in blocks:
            libc.free(big)
        return [fence for _, fence in blocks]

    start = rss()
    fences = churn(int(sys.argv[1]))
    held = rss()
    called = time.monotonic()
    trimmed_now = memory.release_freed()
    after_call = rss()
    # Until most of it is back (or long past the idle second): the trim comes from a thread.
    while rss() > start + (held - start) // 4 and time.monotonic() < called + memory.IDLE_SECONDS + 20:
        time.sleep(0.02)
    print(json.dumps({"start": start, "held": held, "trimmed_now": trimmed_now, "after_call": after_call,
                      "idle": rss()}))
""")


def _release(mib: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", RELEASE, str(mib)], capture_output=True, text=True, timeout=60, env=subprocess_env()
    )
    assert done.returncode == 0, done.stderr
    import json

    return json.loads(done.stdout)


@glibc
def test_much_freed_memory_goes_back_right_after_the_call() -> None:
    seen = _release(200)
    assert seen["held"] - seen["start"] >= 150  # the test can fail: the holes stay resident without a trim
    assert seen["trimmed_now"] is True
    assert seen["held"] - seen["after_call"] >= 150


@glibc
def test_a_little_freed_memory_waits_for_the_idle_second() -> None:
    seen = _release(40)
    assert seen["held"] - seen["start"] >= 30
    assert seen["trimmed_now"] is False  # 40 MiB is below RELEASE_ABOVE: no trim on the call's path
    assert seen["held"] - seen["after_call"] < 10
    assert seen["held"] - seen["idle"] >= 30  # handed back once idle
