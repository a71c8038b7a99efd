"""The server's malloc settings (server/memory.py): glibc really keeps to one arena once they are
applied (counted with ``malloc_info`` in a fresh interpreter whose threads all allocate at once,
against a control run without them), a variable the user set wins, and `lancelot serve` applies
them on both transports before anything else. The memory figures themselves are a benchmark
(tests/benchmarks/server_memory.py), not a test."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from lancelot_cli.server.memory import tune_malloc
from tests.conftest import lancelot_command, subprocess_env

glibc = pytest.mark.skipif(not (hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")),
                           reason="the malloc settings are glibc's; nothing is applied elsewhere")

# Eight threads each hold a block while all of them allocate (a barrier), so glibc would give
# them arenas of their own; then malloc_info's XML is read back and its heaps counted.
ARENAS = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from lancelot_cli.server.memory import tune_malloc
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
    done = subprocess.run([sys.executable, "-c", ARENAS, mode], capture_output=True, text=True, timeout=60,
                          env=subprocess_env(**env))
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
    proc = subprocess.Popen([*lancelot_command(), *transport], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=subprocess_env(LANCELOT_LOG_LEVEL="debug", LANCEDB_PATH=str(tmp_path),
                                               MALLOC_TRIM_THRESHOLD_="1048576"))
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
