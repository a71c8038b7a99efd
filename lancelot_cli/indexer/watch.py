"""`lancelot index --watch`: keep the table in step with the folder.

After the first pass, file events (watchfiles, inotify on Linux) are collected into debounced
batches; each batch runs the incremental pass again. That pass compares every file's size and
mtime with what the table recorded, so whatever the events missed is still caught: directory
renames and moves (reported as the directory only), editors' atomic-rename saves, deletions.
A file that fails to parse is reported and retried on its next change; a failing batch is
reported and the watcher goes on. If the folder itself disappears, the table is left as it is
and the watcher waits for the folder to come back.

A batch commits its rows and leaves ``optimize()`` to the writer's policy (storage.write.policy.
OptimizePolicy: searches already find rows the full-text index does not cover yet). Once the folder
has been quiet for ``idle_optimize_s`` after a commit that was not optimized, the watcher optimizes
the table, so a quiet table ends up fully indexed and compacted.

Given the run's plan (``handoff_plan``, index_socket.plan), a watcher of a local table also runs
the `lancelot index` of its own plan that a light client hands it (indexer/handoff.py): a waiting
client gets the next pass, run as for a file event, and its report. To start that pass soon, the
loop looks for waiting clients every ``HANDOFF_POLL_MS`` while the folder is quiet (instead of
once a second); during a burst of events the batch's pass serves them.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lancelot_cli.errors import LancelotError
from lancelot_cli.indexer.job import IndexJob, folder_job
from lancelot_cli.indexer.pipeline import index_job
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.indexer.scanning import EXTENSIONS
from lancelot_cli.indexer.signals import Interrupted
from lancelot_cli.location import Location

if TYPE_CHECKING:
    from lancelot_cli.indexer.handoff import Handoff

# Events are gathered until the folder has been quiet this long (editors save in bursts)...
QUIET_MS = 150
# ...but a batch never waits longer than this.
MAX_WAIT_MS = 1600
# While the folder is missing, look for it this often.
MISSING_POLL_S = 0.5
# While the folder is quiet, look for waiting `lancelot index` clients this often (watchfiles wakes
# every ``quiet_ms`` anyway to look for events; this only returns to Python after it).
HANDOFF_POLL_MS = 50


def relevant(root: Path, path: str) -> bool:
    """Events worth a pass: no dot-named part below the root, and an indexed extension or no
    extension at all (a directory; after a deletion it cannot be checked any more)."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return True
    if any(part.startswith(".") for part in parts):
        return False
    suffix = Path(path).suffix.lower()
    return not suffix or suffix in EXTENSIONS


def watch_folder(
    source: Path | str,
    database: str,
    table: str = "documents",
    *,
    on_batch: Callable[[IndexReport], None],
    on_error: Callable[[str], None],
    stop: threading.Event | None = None,
    quiet_ms: int = QUIET_MS,
    idle_optimize_s: float | None = None,
    **index_options: Any,
) -> None:
    """`watch_job` of the job `index_folder` would run with ``index_options`` (its keywords)."""
    watch_job(
        folder_job(source, database, table, **index_options),
        on_batch=on_batch,
        on_error=on_error,
        stop=stop,
        quiet_ms=quiet_ms,
        idle_optimize_s=idle_optimize_s,
    )


def watch_job(
    job: IndexJob,
    *,
    on_batch: Callable[[IndexReport], None],
    on_error: Callable[[str], None],
    stop: threading.Event | None = None,
    quiet_ms: int = QUIET_MS,
    idle_optimize_s: float | None = None,
    handoff_plan: dict[str, Any] | None = None,
    handoff_summary: Callable[[IndexReport], dict[str, Any]] = IndexReport.as_dict,
) -> None:
    """Run ``job`` once, then after every batch of changes, until ``stop`` is set, SIGTERM or Ctrl-C.

    A batch in flight when the stop comes is finished (its commit is atomic either way), and so is
    an idle ``optimize()`` (after ``idle_optimize_s``; default ``OptimizePolicy.idle_seconds``).
    With ``handoff_plan``, `lancelot index` runs of that plan are taken too (the module doc); their
    clients get ``handoff_summary`` of the pass's report.
    """
    from lancelot_cli.storage.write.policy import OPTIMIZE_POLICY

    stop = stop or threading.Event()
    _stop_on_sigterm(stop)
    idle_s = OPTIMIZE_POLICY.idle_seconds if idle_optimize_s is None else idle_optimize_s
    watcher = _Watcher(replace(job, source=job.source.expanduser().resolve()), on_batch, on_error, stop, idle_s)
    watcher.summary = handoff_summary
    if handoff_plan is not None:
        from lancelot_cli.index_socket import socket_path
        from lancelot_cli.indexer.handoff import Handoff

        watcher.handoff = Handoff.listen(socket_path(job.database, job.table), handoff_plan)
    try:
        while not stop.is_set():
            if watcher.job.source.is_dir():
                watcher.follow(quiet_ms)
            else:
                watcher.wait_for_folder()
    finally:
        if watcher.handoff is not None:
            watcher.handoff.close()


class _Watcher:
    """The passes of one watch, and what it keeps between them."""

    def __init__(
        self,
        job: IndexJob,
        on_batch: Callable[[IndexReport], None],
        on_error: Callable[[str], None],
        stop: threading.Event,
        idle_s: float,
    ) -> None:
        self.job, self.on_batch, self.on_error, self.stop, self.idle_s = job, on_batch, on_error, stop, idle_s
        self.pending = False  # a pass committed rows that optimize() has not taken in yet
        self.last_pass = time.monotonic()
        self.first = True  # a pass is due as soon as file events are being collected
        self.handoff: Handoff | None = None  # where `lancelot index` clients wait (indexer/handoff.py)
        self.summary: Callable[[IndexReport], dict[str, Any]] = IndexReport.as_dict  # what they are sent

    def follow(self, quiet_ms: int) -> None:
        """A pass for each batch of file events, until the watch stops or the folder goes away."""
        import watchfiles

        root = self.job.source
        # watchfiles subscribes on the generator's first step and yields within rust_timeout (changes
        # or not), so the pass that follows runs while events are collected: a file saved during it
        # is an event for the next batch, never lost. Ctrl-C raises KeyboardInterrupt (the CLI stops).
        for changes in watchfiles.watch(
            root,
            watch_filter=lambda _change, path: relevant(root, path),
            debounce=MAX_WAIT_MS,
            step=quiet_ms,
            stop_event=self.stop,
            rust_timeout=1000 if self.handoff is None else HANDOFF_POLL_MS,
            yield_on_timeout=True,
            raise_interrupt=True,
        ):
            if changes or self.first or (self.handoff is not None and self.handoff.waiting()):
                self.first = False
                self.run_pass()
            elif root.is_dir():
                self.optimize_when_idle()
            if not root.is_dir():
                break  # the watched folder went away: go back to waiting for it

    def wait_for_folder(self) -> None:
        """Say that the folder is gone and wait until it is back or the watch stops."""
        root = self.job.source
        self.on_error(f"source folder {root} is gone; the table is kept as it is, waiting for the folder to return")
        while not root.is_dir() and not self.stop.wait(MISSING_POLL_S):
            pass
        self.first = True

    def run_pass(self) -> None:
        """One pass; its report (or error) also goes to the clients waiting when it starts."""
        asked = self.handoff.take() if self.handoff is not None else []
        answer: dict[str, Any]
        if not self.job.source.is_dir():  # the loop reports it and waits
            answer = {"error": f"source folder {self.job.source} is gone", "exit": 1}
        else:
            try:
                answer = self._pass()
            except BaseException as exc:  # the watch ends (an unexpected error): the clients hear it
                if asked and self.handoff is not None:
                    self.handoff.answer(asked, {"error": f"the watching `lancelot index` stopped: {exc!r}", "exit": 1})
                raise
        if asked and self.handoff is not None:
            self.handoff.answer(asked, answer)

    def _pass(self) -> dict[str, Any]:
        try:
            report = index_job(self.job)
        except Interrupted as exc:  # Ctrl-C or SIGTERM during the batch's commit, which finished:
            self.stop.set()  # its line as usual, then stop (no warning)
            if exc.report is not None:
                self.on_batch(exc.report)
            answer = {"report": self.summary(exc.report)} if exc.report is not None else _stopped(exc)
        except LancelotError as exc:
            self.on_error(str(exc))
            answer = {"error": str(exc), "exit": exc.exit_code}
        else:
            self.pending = (self.pending or report.committed) and not report.optimized
            self.on_batch(report)
            answer = {"report": self.summary(report)}
        self.last_pass = time.monotonic()
        return answer

    def optimize_when_idle(self) -> None:
        if not self.pending or time.monotonic() - self.last_pass < self.idle_s:
            return
        try:
            optimize_table(self.job)
            self.pending = False
        except LancelotError as exc:  # e.g. another `lancelot index` holds the table: try again later
            self.on_error(f"could not optimize the table while idle: {exc}")
        self.last_pass = time.monotonic()


def optimize_table(job: IndexJob) -> bool:
    """Fold unindexed rows into the full-text indexes and compact the job's table now (holding the
    writer lock, so it refuses while another `lancelot index` writes). True if there was anything to do."""
    from lancelot_cli.storage.write.lock import writer_lock
    from lancelot_cli.storage.write.table import TableWriter

    database = Location.parse(job.database).uri  # the folder every command means (location.py)
    with writer_lock(database, job.table):
        return TableWriter(database, job.table, job.storage_options).optimize(force=True)


def _stopped(exc: Interrupted) -> dict[str, Any]:
    """What a client hears when the watcher was stopped during its pass, before the commit."""
    return {"error": f"the watching `lancelot index` was stopped: {exc}", "exit": 1}


def _stop_on_sigterm(stop: threading.Event) -> None:
    """SIGTERM ends the watch like Ctrl-C: after the batch in flight (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum: int, frame: Any) -> None:
        stop.set()
        if callable(previous):  # SIG_DFL and SIG_IGN are Handlers members, not callables
            previous(signum, frame)

    signal.signal(signal.SIGTERM, handler)
