"""Worker processes for `serve --http --workers N`: uvicorn's supervisor, told when a worker fails to
start, and workers that end when the parent does.

One HTTP server process is bound by the GIL (about 1.4 cores under 8 clients), so N processes share
the listening sockets, bound once in the parent; each worker has its own engine, caches and metrics.
uvicorn's ``Multiprocess`` starts them with the spawn method (the app comes from a picklable
factory), stops them on SIGINT/SIGTERM, and starts a new one when one dies while serving.

Added here:

* a worker that dies before it serves (exit code 3, uvicorn's STARTUP_FAILURE, or any other) stops
  the parent with an error instead of being started again and again;
* a worker ends when the parent dies, even by SIGKILL (Linux ``PR_SET_PDEATHSIG``; elsewhere a
  thread that looks at the parent id every second), so no orphan keeps the port;
* connections are shared out by load: each worker accepts one connection per turn of its event
  loop (uvicorn's ``backlog``, which asyncio also uses as its accept batch, is 1 in the workers),
  and the parent then sets the sockets' real listen queue (``BACKLOG``) once the workers listen.
  With asyncio's batch of 2,048, the first worker to wake took all 8 keep-alive connections of a
  benchmark and the second one idled (22.3 against 0.9 CPU seconds);
* glibc's malloc settings (``server.process.memory.SETTINGS``) reach the workers as environment variables,
  which their glibc reads at start: ``mallopt`` in a spawned worker would come after Python's and
  uvicorn's own threads made arenas.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from socket import socket

from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from lancelot_cli.server.process.memory import SETTINGS

BACKLOG = 2048  # the listen queue (uvicorn's default)
ACCEPT_BATCH = 1  # connections a worker accepts per turn of its event loop
# uvicorn kills a worker whose ping thread does not answer within this, and its requests in flight
# with it (issue 37 #1 saw that happen); its default, 5 s, is short for a worker busy importing and
# opening tables on a loaded 2-core machine with coverage on (the CI run that lost a request)
HEALTHCHECK_SECONDS = 30
STARTUP_SECONDS = 120.0  # for every worker to import the server and answer "started"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def malloc_environ(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The malloc variables to give the workers: ``SETTINGS`` the user did not set already."""
    return {name: str(value) for _, value, name in SETTINGS if name not in environ}


def watch_parent(parent_pid: int) -> None:
    """Make this worker get SIGTERM (a graceful stop) when ``parent_pid`` is gone."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0:
                if os.getppid() != parent_pid:  # it died before the call: nobody will send the signal
                    os.kill(os.getpid(), signal.SIGTERM)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_poll_parent, args=(parent_pid,), name="lancelot-parent-watch", daemon=True).start()


def _poll_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


class Supervisor(Multiprocess):
    """uvicorn's ``Multiprocess`` that waits for every worker to serve before it supervises them.

    ``failed`` is set when a worker ended before it served; ``run`` then returns and the caller exits
    non-zero. (uvicorn restarts such a worker unless its exit code is 3, so an import error in the
    child, say, would loop.)
    """

    def __init__(self, config: Config, sockets: list[socket]) -> None:
        super().__init__(config, sockets)
        self.failed: str | None = None
        self._listening: set[int | None] = set()  # workers known to serve (so their listen() is done)

    def init_processes(self) -> None:
        super().init_processes()
        deadline = time.monotonic() + STARTUP_SECONDS
        waiting = list(self.processes)
        while waiting and not self.should_exit.is_set():
            self.handle_signals()  # SIGINT/SIGTERM while the workers start: stop at once
            process = waiting[0]
            if process.is_ready(timeout=0.5):
                waiting.pop(0)
                self._listen(process)
            elif not process.process.is_alive():
                self.handle_signals()  # a Ctrl-C reaches the workers too: then it is no failure
                if not self.should_exit.is_set():
                    self._fail(process, f"exit code {process.exitcode}")
            elif time.monotonic() > deadline:
                self._fail(process, f"not serving after {STARTUP_SECONDS:g} s")
        if not waiting and not self.should_exit.is_set():
            # From here a worker that dies is replaced; before, its death stops the server (a start-up
            # failure). Said once, so that an operator (and the tests) can tell the two apart.
            sys.stderr.write(f"lancelot: all {len(self.processes)} worker processes are serving\n")
            sys.stderr.flush()

    def keep_subprocess_alive(self) -> None:
        super().keep_subprocess_alive()
        for process in self.processes:  # a replacement worker's listen() shrank the queue again
            if process.pid not in self._listening and process.is_ready(timeout=1):
                self._listen(process)
        if self.should_exit.is_set() and self.failed is None:
            # uvicorn stops the parent when a restarted worker exits with STARTUP_FAILURE
            for process in self.processes:
                if process.exitcode == STARTUP_FAILURE:
                    self.failed = f"HTTP worker {process.pid} failed to start (exit code {STARTUP_FAILURE})"

    def _listen(self, process: Process) -> None:
        """Give the sockets their real queue: a worker's asyncio ``listen(ACCEPT_BATCH)`` set it to 1."""
        self._listening = {p.pid for p in self.processes if p.pid in self._listening} | {process.pid}
        for sock in self.sockets:
            sock.listen(BACKLOG)

    def _fail(self, process: Process, why: str) -> None:
        self.failed = f"HTTP worker {process.pid} failed to start ({why})"
        self.should_exit.set()
