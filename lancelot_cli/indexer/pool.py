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
- When the run stops early (interrupt, error), the parent kills its workers and reaps them; after
  a complete run it lets them end and reaps them too (``_stop``). With the last pool of the
  process, multiprocessing's resource tracker (a process every spawn starts) is stopped and reaped
  as well: left alone it ends only on the EOF of the parent's exit, so it outlived ``lancelot
  index`` in the same process group (issue 45 item 9).
- A job may have a deadline: a worker that runs past it is killed (a document bomb that PDFium
  would lay out for hours), the job reported as ended, and a new worker takes over.

A deadline counts the CPU time the worker spent on the job (its utime + stime, from
/proc/<pid>/stat), not the time on the wall: on a machine busy with other work (a load of 10 on
2 cores) a reader gets a fifth of a core or less, and an honest file was skipped as too slow
(issue 45 item 1). A worker stuck without using the CPU (waiting on a hung file system, say) is
still killed, once ``WALL_FACTOR`` times the deadline has passed on the wall clock, less the time
the worker waited for a CPU (/proc/<pid>/schedstat, where the kernel keeps it): so a busy machine
slows a reader down without ever making it look stuck. Where a process's CPU time cannot be read
(no /proc: macOS, Windows), the deadline is wall-clock time, as before. While jobs with deadlines
are in flight the parent looks at its workers at least every ``POLL`` seconds, since CPU time
runs slower than the wall clock (or faster, for a reader with threads).
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
# A job's deadline is CPU time; a worker that has not used it up after this many times as long on
# the wall clock, not counting its waits for a CPU, spent most of that time blocked: it is stuck.
WALL_FACTOR = 10.0
# The longest the parent waits between two looks at a worker's CPU time while a deadline runs.
POLL = 1.0
# After a complete run, how long the workers get to end on their own before they are killed; and
# how long the parent waits for a killed worker to be gone (SIGKILL cannot be caught: only a
# process stuck in the kernel, on a hung file system, takes longer, and is then left to the kernel's
# PR_SET_PDEATHSIG rather than hang the run). Both are bounds, not expected times.
GRACE = 5.0
REAP = 30.0

_pools_lock = threading.Lock()
_pools = 0  # pools running in this process; the resource tracker is stopped when none is left


@dataclass(frozen=True)
class Ended:
    """How a worker ended in the middle of a job."""

    code: int | None  # its exit code (negative: the signal that ended it)
    seconds: float | None = None  # set when the parent killed it for running past the job's deadline
    cpu: bool = False  # whether ``seconds`` is CPU time (else the wall clock's, less its waits for a CPU)


def imap(
    func: Callable[[J], R],
    jobs: Sequence[J],
    workers: int,
    crashed: Callable[[J, Ended], R],
    deadline: Callable[[J], float] | None = None,
) -> Generator[R, None, None]:
    """``func(job)`` for every job, in the order of ``jobs``, computed by ``workers`` processes.

    ``func`` must be a module-level function. A job whose worker died (a parser crash, the OOM
    killer), or spent ``deadline(job)`` seconds of CPU time on it (or was still on it after
    ``WALL_FACTOR`` times as long by the wall clock, its waits for a CPU aside: see the module's
    docstring), gives ``crashed(job, how it ended)`` and a new worker takes over. An exception
    raised by ``func`` is raised here. Closing the iterator early kills the workers.
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

    global _pools
    with _pools_lock:
        _pools += 1
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
                elif deadline is not None and (past := worker.past(deadline(jobs[worker.pending[0]]))):
                    seconds, cpu = past
                    hand_on(worker, Ended(worker.kill(), seconds, cpu))
        finished = True
    finally:
        with deferred_signals():  # a second Ctrl-C must not cut the clean-up short
            try:
                _stop(pool, graceful=finished)
            finally:
                _left()


def _time_left(busy: list[_Worker], jobs: Sequence[Any], deadline: Callable[[Any], float] | None) -> float | None:
    """Seconds to wait before looking again whether a job being read is past its deadline (None:
    no deadline)."""
    if deadline is None or not busy:
        return None
    return min(w.time_left(deadline(jobs[w.pending[0]])) for w in busy)


class _Worker:
    def __init__(self, ctx: Any, func: Callable[[Any], Any]) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, os.getpid(), func), daemon=True, name="lancelot-reader")
        self.pending: deque[int] = deque()
        self.started = time.monotonic()  # when it began the first of its pending jobs
        self.cpu_started: float | None = None  # its CPU time then (None: not known, the wall clock rules)
        self.queued_started: float | None = None  # the time it had waited for a CPU by then
        with _stderr_to_devnull():
            self.process.start()
        child.close()  # the worker's end lives in the worker only: its death is EOF here

    def feed(self, jobs: Sequence[Any], queue: deque[int]) -> None:
        while queue and len(self.pending) < AHEAD:
            index = queue.popleft()
            if not self.pending:  # an idle worker starts on it now
                self._start()
            self.pending.append(index)
            try:
                self.conn.send((index, jobs[index]))
            except OSError:  # the worker just died: its EOF is next, and the loop hands its jobs on
                return

    def finished(self, index: int) -> None:
        """The result of job ``index`` came back: the next pending job (if any) starts now."""
        self.pending.remove(index)
        if self.pending:
            self._start()

    def _start(self) -> None:
        self.started = time.monotonic()
        self.cpu_started = _cpu_seconds(self.process.pid)
        self.queued_started = _queued_seconds(self.process.pid)

    def _spent(self) -> tuple[float | None, float]:
        """What the job it is on has taken: its CPU seconds (None: not known), and its seconds on the
        wall clock less those the worker spent waiting for a CPU (where the kernel says: Linux)."""
        pid = self.process.pid
        wall = time.monotonic() - self.started
        if self.queued_started is not None and (queued := _queued_seconds(pid)) is not None:
            wall -= queued - self.queued_started
        if self.cpu_started is not None and (cpu := _cpu_seconds(pid)) is not None:
            return cpu - self.cpu_started, wall
        return None, wall

    def _too_soon(self, seconds: float) -> float:
        """Seconds (> 0) until the job it is on could first be past ``seconds``, judged by the wall
        clock alone, or 0 from then on. A single-threaded reader spends no more CPU time than the
        wall clock runs, and the wall-clock bound is at least ``seconds``; a reader with threads is
        looked at once ``POLL`` seconds have passed, as ever. Before that, /proc is not read: the
        parent wakes for every result (hundreds a second on HTML pages), and reading each worker's
        CPU time and waits at every wake read /proc/<pid>/stat 4,666 times for the 1,167 pages of
        the PostgreSQL manual (1,183 now: once as each job starts), the parent's CPU time over the
        reading 1.63 s (1.37 s now)."""
        return max(0.0, min(seconds, POLL) - (time.monotonic() - self.started))

    def _wall_bound(self, seconds: float) -> float:
        """How long the job may run by the wall clock: the backstop, or the deadline itself where the
        worker's CPU time is not known."""
        return seconds * WALL_FACTOR if self.cpu_started is not None else seconds

    def past(self, seconds: float) -> tuple[float, bool] | None:
        """``(seconds spent, whether they are CPU time)`` if the job it is on has spent ``seconds`` of
        CPU time, or run past ``_wall_bound(seconds)`` on the wall clock (less its waits for a CPU);
        None while it has not."""
        if self._too_soon(seconds) > 0:
            return None
        cpu, wall = self._spent()
        if cpu is not None and cpu >= seconds:
            return cpu, True
        return (wall, False) if wall >= self._wall_bound(seconds) else None

    def time_left(self, seconds: float) -> float:
        """Seconds (on the wall clock) to wait before looking again whether ``past(seconds)``."""
        if (soon := self._too_soon(seconds)) > 0:
            return soon
        cpu, wall = self._spent()
        left = self._wall_bound(seconds) - wall
        if self.cpu_started is not None:
            # CPU time runs no faster than the wall clock for one thread: sooner than this the
            # deadline cannot be reached by a single-threaded reader; POLL covers one with threads.
            left = min(left, POLL, seconds - cpu if cpu is not None else POLL)
        return max(0.0, left)

    def kill(self) -> int | None:
        self.process.kill()
        self.process.join(REAP)
        self.conn.close()
        return self.process.exitcode


def _cpu_seconds(pid: int | None) -> float | None:
    """The CPU time (user + system, all its threads) process ``pid`` has used so far, from
    /proc/<pid>/stat; None where that cannot be read (not Linux, or the process is gone)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            line = stat.read()
        # after "pid (comm) ", whose comm may hold spaces and parentheses: field 3 (state) on;
        # utime and stime are fields 14 and 15, in clock ticks
        fields = line[line.rindex(b")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # AttributeError: no os.sysconf (Windows)
        return None


def _queued_seconds(pid: int | None) -> float | None:
    """The time process ``pid`` (its main thread) has spent runnable but waiting for a CPU, from
    /proc/<pid>/schedstat; None where that cannot be read (not Linux, a kernel without schedstats,
    or the process is gone)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as schedstat:
            return int(schedstat.read().split()[1]) / 1e9  # on a CPU, waiting for one, timeslices (ns)
    except (OSError, ValueError, IndexError):
        return None


def _stop(pool: list[_Worker], graceful: bool) -> None:
    """End every worker: politely after a complete run, by SIGKILL otherwise; reap them all."""
    for worker in pool:
        if graceful:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        else:
            worker.process.kill()
    deadline = time.monotonic() + GRACE
    for worker in pool:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(REAP)
        worker.conn.close()


def _left() -> None:
    """A pool has stopped: with the last one, once every child is reaped, stop multiprocessing's
    resource tracker and reap it (the next pool's first worker starts a new one)."""
    global _pools
    with _pools_lock:
        _pools -= 1
        import multiprocessing
        from multiprocessing import resource_tracker

        if _pools or multiprocessing.active_children():  # a child not reaped still holds its pipe
            return
        stop = getattr(resource_tracker._resource_tracker, "_stop", None)  # private: none, none stopped
        if stop is not None:
            with contextlib.suppress(OSError):
                stop()


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
