"""Worker processes for reading HTML pages and PDF, Word, PowerPoint and EPUB files, which never
outlive the run that started them.

Why not ``concurrent.futures.ProcessPoolExecutor``: a Ctrl-C could leave its parent and workers
waiting on each other in its queue threads, and ``kill -9`` of the parent left its workers idle
for good (docs/design.md#issue-12, docs/design.md#issue-16 item 4). Here each worker has one pipe to
the parent and no threads:

- Workers are *spawned* (a fresh interpreter, not a fork of a process that has loaded lancedb's
  runtime, which lancedb warns about). They ignore Ctrl-C: the terminal sends it to the whole
  process group, and only the parent decides what it means. Their stderr is /dev/null, so one
  hit by Ctrl-C while its interpreter starts dies without a traceback over the parent's output
  (results and errors come back through the pipe).
- A worker exits when its pipe ends (EOF: the parent is gone, whatever killed it) and, on Linux,
  is also sent SIGKILL by the kernel when the parent dies (``PR_SET_PDEATHSIG``), even mid-file;
  elsewhere a thread watches the parent's pid.
- When the run stops early (interrupt, error), the parent kills its workers and reaps them.
- A job may have a deadline: a worker still on it when the deadline passes is killed (a document
  bomb that PDFium would lay out for hours), the job reported as ended, and a new worker takes over.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from lancelot_cli.indexer.signals import deferred_signals

J = TypeVar("J")
R = TypeVar("R")

# Jobs in flight per worker: one being read, one waiting, so a worker never idles on the pipe.
AHEAD = 2


@dataclass(frozen=True)
class Ended:
    """How a worker ended in the middle of a job."""

    code: int | None  # its exit code (negative: the signal that ended it)
    seconds: float | None = None  # set when the parent killed it for running past the job's deadline


def imap(
    func: Callable[[J], R],
    jobs: Sequence[J],
    workers: int,
    crashed: Callable[[J, Ended], R],
    deadline: Callable[[J], float] | None = None,
) -> Generator[R, None, None]:
    """``func(job)`` for every job, in the order of ``jobs``, computed by ``workers`` processes.

    ``func`` must be a module-level function. A job whose worker died (a parser crash, the OOM
    killer), or was still on it ``deadline(job)`` seconds after starting it, gives
    ``crashed(job, how it ended)`` and a new worker takes over. An exception raised by ``func`` is
    raised here. Closing the iterator early kills the workers.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("spawn")
    pool: list[_Worker] = []
    results: dict[int, tuple[bool, Any]] = {}
    queue = deque(range(len(jobs)))
    done = 0
    finished = False

    def hand_on(worker: _Worker, ended: Ended) -> None:
        """The job ``worker`` was on when it ended is done (``crashed``); its others go back in line."""
        first, *others = worker.pending  # it read its jobs in order: the first one ended it
        results[first] = (True, crashed(jobs[first], ended))
        queue.extendleft(reversed(others))
        pool[pool.index(worker)] = replacement = _Worker(ctx, func)
        replacement.feed(jobs, queue)

    try:
        pool = [_Worker(ctx, func) for _ in range(max(1, min(workers, len(jobs))))]
        for worker in pool:
            worker.feed(jobs, queue)
        while done < len(jobs):
            if done in results:
                ok, value = results.pop(done)
                done += 1
                if not ok:
                    raise value
                yield value
                continue
            busy = [w for w in pool if w.pending]
            ready = wait([w.conn for w in busy], timeout=_time_left(busy, jobs, deadline))
            for worker in busy:
                if worker.conn in ready:
                    try:
                        index, ok, value = worker.conn.recv()  # the one `wait` found ready
                    except Exception:  # noqa: BLE001 - EOF or a torn message: the worker died
                        hand_on(worker, Ended(worker.kill()))
                        continue
                    worker.finished(index)
                    results[index] = (ok, value)
                    worker.feed(jobs, queue)
                elif deadline is not None and worker.overdue(deadline(jobs[worker.pending[0]])):
                    seconds = time.monotonic() - worker.started
                    hand_on(worker, Ended(worker.kill(), seconds))
        finished = True
    finally:
        with deferred_signals():  # a second Ctrl-C must not cut the clean-up short
            _stop(pool, graceful=finished)


def _time_left(busy: list[_Worker], jobs: Sequence[Any], deadline: Callable[[Any], float] | None) -> float | None:
    """Seconds until the first of the jobs being read runs past its deadline (None: no deadline)."""
    if deadline is None or not busy:
        return None
    now = time.monotonic()
    return max(0.0, min(w.started + deadline(jobs[w.pending[0]]) - now for w in busy))


class _Worker:
    def __init__(self, ctx: Any, func: Callable[[Any], Any]) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, os.getpid(), func), daemon=True, name="lancelot-reader")
        self.pending: deque[int] = deque()
        self.started = time.monotonic()  # when it began the first of its pending jobs
        with _stderr_to_devnull():
            self.process.start()
        child.close()  # the worker's end lives in the worker only: its death is EOF here

    def feed(self, jobs: Sequence[Any], queue: deque[int]) -> None:
        while queue and len(self.pending) < AHEAD:
            index = queue.popleft()
            if not self.pending:  # an idle worker starts on it now
                self.started = time.monotonic()
            self.pending.append(index)
            try:
                self.conn.send((index, jobs[index]))
            except OSError:  # the worker just died: its EOF is next, and the loop hands its jobs on
                return

    def finished(self, index: int) -> None:
        """The result of job ``index`` came back: the next pending job (if any) starts now."""
        self.pending.remove(index)
        self.started = time.monotonic()

    def overdue(self, seconds: float) -> bool:
        """Whether the job it is on has run ``seconds`` or more."""
        return time.monotonic() - self.started >= seconds

    def kill(self) -> int | None:
        self.process.kill()
        self.process.join(2)
        self.conn.close()
        return self.process.exitcode


def _stop(pool: list[_Worker], graceful: bool) -> None:
    """End every worker: politely after a complete run, by SIGKILL otherwise; reap them all."""
    for worker in pool:
        if graceful:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        else:
            worker.process.kill()
    deadline = time.monotonic() + 1.0
    for worker in pool:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(2)
        worker.conn.close()


def _serve(conn: Any, parent: int, func: Callable[[Any], Any]) -> None:
    """A worker's loop: read a job, send ``(index, ok, result)``; stop at None or EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; SIGTERM ends it
    _die_with(parent)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, job = message
        try:
            reply = (index, True, func(job))
        except Exception as exc:  # noqa: BLE001 - the job's failure goes back to the parent, which reports it
            reply = (index, False, exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
            conn.send((index, False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _die_with(parent: int) -> None:
    """Make this process end when ``parent`` does, even by SIGKILL, even in the middle of a file."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            pr_set_pdeathsig = 1  # <linux/prctl.h>
            if ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


@contextmanager
def _stderr_to_devnull() -> Iterator[None]:
    """Point file descriptor 2 at /dev/null for the moment a worker is started (it inherits it)."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)
