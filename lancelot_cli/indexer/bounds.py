"""What reading one PDF, Word, PowerPoint or EPUB file may cost in memory, time and text (issue 37
item 4: document bombs). A file past a bound is skipped with a one-line reason, and the run goes on.

A 2 KB PDF of nested forms made PDFium abort the whole run; a 36 KB Word file took 4 GB and four
minutes; a 4 KB deck became 501,001 chunks. Such files are therefore read in a worker process
(indexer/reading.py, indexer/pool.py) under three bounds:

- memory: the worker's address space may grow by ``memory_for(size)`` while it reads the file
  (``RLIMIT_AS``, Linux only: elsewhere the bound is not enforced). Past it, Python raises
  MemoryError or PDFium aborts: either way the file is skipped and the run goes on;
- time: ``seconds_for(size)`` of CPU time, after which the parent kills the worker; or ten times
  as long by the wall clock (its waits for a CPU aside), for a worker stuck without using the CPU
  (indexer/pool.py). CPU time, because the wall clock also counts what other programs do: at a
  load of 10 on 2 cores a reader gets a fifth of a core or less, and a Word file that needs 20 s of
  CPU took minutes (issue 45 item 1). Where a worker's CPU time cannot be read (no /proc: macOS,
  Windows) the bound is ``seconds_for(size)`` by the wall clock;
- text: ``TEXT_CHARS`` characters at most, counted as the reader goes (``TextBudget``).

Each leaves an honest file far inside it: gnuplot's 1.3 MB PDF manual (847,815 characters) takes
0.4 s and 71 MB of address space to read; Debian's live manual (a 121 KB EPUB) 0.1 s and 60 MB.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

GIB = 1 << 30
MB = 1 << 20
# The memory one file may take: 1 GiB, plus 4 bytes per byte of the file (PDFium keeps the file in
# memory and parses it there; a --max-file-size raised for a 200 MB manual raises the bound too).
MEMORY_BYTES = GIB
MEMORY_PER_BYTE = 4
# The CPU time one file may take: a minute, plus 10 s per MB (PDFium reads about 1-2 MB of PDF a
# second on one core).
SECONDS = 60.0
SECONDS_PER_MB = 10.0
# The text one file may give: about 30,000 pages; 55,000 chunks of the default size.
TEXT_CHARS = 64 * MB


class Exceeded(Exception):
    """Reading the file would cost more than one file may; the message says which bound."""


def memory_for(size: int) -> int:
    """The bytes of address space reading a file of ``size`` bytes may add."""
    return MEMORY_BYTES + MEMORY_PER_BYTE * size


def seconds_for(size: int) -> float:
    """The seconds of CPU time reading a file of ``size`` bytes may take."""
    return SECONDS + SECONDS_PER_MB * size / MB


def memory_words(size: int) -> str:
    """``memory_for(size)`` as a reader says it: "1.0 GiB"."""
    return f"{memory_for(size) / GIB:.1f} GiB"


def too_much_memory(size: int) -> str:
    return f"reading it needs more than {memory_words(size)} of memory, the most one file may use"


def too_slow(seconds: float, cpu: bool = False) -> str:
    """Why a file whose reader was stopped after ``seconds`` is skipped: seconds of CPU time, or
    (``cpu`` false) on the wall clock. Rounded down, so that "more than" stays true."""
    if cpu:
        return f"reading it took more than {int(seconds)} s of CPU time, the most one file may take"
    return f"reading it took longer than {int(seconds)} s, the longest one file may take"


class TextBudget:
    """Counts the text a reader gives as it goes, so that a file whose text runs past ``TEXT_CHARS``
    is stopped early (a deck that lists one slide a thousand times), not after building it all."""

    def __init__(self, chars: int | None = None) -> None:
        self.chars = TEXT_CHARS if chars is None else chars  # (looked up now: a test may lower it)
        self.left = self.chars

    def take(self, text: str) -> str:
        """``text``, counted; raises ``Exceeded`` once the file's text passes the bound."""
        self.left -= len(text)
        if self.left < 0:
            raise Exceeded(f"its text runs past {self.chars:,} characters, the most one file may give")
        return text


@contextmanager
def address_space(extra: int) -> Iterator[None]:
    """Let this process's address space grow by at most ``extra`` bytes inside the block (its soft
    ``RLIMIT_AS``, put back after). Only where the limit holds and the current size is known (Linux);
    elsewhere, and when a lower limit is already set, the block runs as it is.

    The block may end in a MemoryError whose traceback still holds what was allocated: the limit is
    put back by a call made ready beforehand, so that putting it back allocates nothing."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _address_space_now() + extra
        for given in (soft, hard):
            if given != resource.RLIM_INFINITY:
                limit = min(limit, given)
        put_back = functools.partial(resource.setrlimit, resource.RLIMIT_AS, (soft, hard))
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError, AttributeError):  # not Linux, or no /proc
        yield
        return
    try:
        yield
    finally:
        put_back()


def _address_space_now() -> int:
    """This process's address space in bytes (VmSize). Raises OSError where /proc has no answer."""
    with open("/proc/self/status", encoding="ascii", errors="replace") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmSize in /proc/self/status")
