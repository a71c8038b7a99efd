"""What Ctrl-C and SIGTERM do to `lancelot index` (docs/design.md#issue-12): end the run at once, with one line
and exit 130 or 143, and leave the table as it was; while the table is being written, wait for
the commit (cutting it would make the message wrong about what the table holds).

SIGTERM is raised as ``Terminated``, a ``KeyboardInterrupt``, so that no ``except Exception`` on
the way (a parser's) takes it for an error of one file. The run decides about SIGTERM only when
it runs in the main thread and nobody else (the watcher, which finishes its batch first) has.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lancelot_cli.errors import IndexingError

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C."""


class Interrupted(IndexingError):
    """The run was stopped by a signal; exits 128 + the signal's number (130 Ctrl-C, 143 SIGTERM).
    ``report`` is the run's report when the signal came after its commit (what the table now holds)."""

    def __init__(self, message: str, signum: int, report: Any = None) -> None:
        super().__init__(message)
        self.exit_code = 128 + int(signum)
        self.report = report


def owns_signals() -> bool:
    """True when the run may decide what SIGTERM does (see the module doc)."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


class StopSignals:
    """Ctrl-C and SIGTERM while a run owns them: each raises where it lands (KeyboardInterrupt,
    ``Terminated``) and is remembered. Python swallows an exception raised inside a garbage
    collector's callback (it prints "Exception ignored in ..." and goes on), so a signal that lands
    there would let the run finish and exit 0; ``raise_pending`` raises it again at the run's next
    safe point (before a commit, before the report)."""

    def __init__(self, owns: bool) -> None:
        self.owns = owns
        self.signum: int | None = None

    def landed(self, signum: int, frame: Any) -> None:
        self.signum = signum
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    def raise_pending(self) -> None:
        if self.signum is not None:
            raise Terminated if self.signum == signal.SIGTERM else KeyboardInterrupt


@contextmanager
def stop_signals_raise(owns: bool) -> Iterator[StopSignals]:
    """With ``owns``, Ctrl-C and SIGTERM end the block (``StopSignals``) and SIGTERM leaves it as
    ``Interrupted`` (exit 143); Ctrl-C leaves as KeyboardInterrupt, which the CLI says as such.
    A SIGINT handler someone else installed (an embedding program's) is left alone."""
    stops = StopSignals(owns)
    if not owns:
        yield stops
        return
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, stops.landed)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, stops.landed)
    try:
        yield stops
    except Terminated:
        raise Interrupted("terminated (SIGTERM); nothing was changed", signal.SIGTERM) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def signal_name(signum: int) -> str:
    return "interrupted (Ctrl-C)" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"


class Deferred:
    """The stop signal that arrived while signals were deferred (``signum`` None if none)."""

    signum: int | None = None


@contextmanager
def deferred_signals(redeliver: bool = True) -> Iterator[Deferred]:
    """Hold Ctrl-C and SIGTERM until the block ends (a commit or a cleanup that must not be cut
    short), then act on them as usual (or leave that to the caller: ``redeliver`` False). Main
    thread only; elsewhere the block runs as it is."""
    got = Deferred()
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

    def hold(signum: int, frame: Any) -> None:
        got.signum = got.signum or signum

    for sig in STOP_SIGNALS:
        signal.signal(sig, hold)
    try:
        yield got
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if got.signum is not None and redeliver:
            _redeliver(got.signum, previous[signal.Signals(got.signum)])


def _redeliver(signum: int, handler: Any) -> None:
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)
