"""How a function's time grows with its input: the check behind every "must be linear" test
(issue 37: a regular expression that is quadratic on one crafted line stalls a server or an index run).

``growth(work, make, start)`` doubles the input size from ``start`` until one call takes at least
``FLOOR`` seconds (so timer noise is small against it), then times ``work(make(n))`` and
``work(make(2 * n))``, the best of ``REPEATS`` runs each, and returns the ratio. Linear work gives
about 2; quadratic about 4; cubic 8. Tests assert a ratio under 3, as the issue asks.

The doubling stops at ``cap`` characters: a pass that is still under the floor there is fast
enough at any size a file or request can have, and counts as linear (ratio 1).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

FLOOR = 0.03  # seconds: one call at least this long before the ratio is taken
REPEATS = 5
LIMIT = 3.0  # what the issue allows for a doubling


def _best(work: Callable[[Any], object], value: Any) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        work(value)
        best = min(best, time.perf_counter() - started)
    return best


def growth(work: Callable[[Any], object], make: Callable[[int], Any], start: int = 1024, cap: int = 1 << 22) -> float:
    """The time ratio of ``work`` on an input of size 2n against size n (see the module doc)."""
    n = start
    while True:
        started = time.perf_counter()
        work(make(n))
        if time.perf_counter() - started >= FLOOR:
            break
        if n >= cap:
            # Under the floor at the largest input a file or request can have: fast enough whatever
            # its shape (a quadratic pass takes minutes there). A ratio taken here measures the
            # memory caches, not the code: a 1.6 MB string that no longer fits in a cache shared
            # with a busy machine's other processes gave 4-8 for a pass that is linear (issue 45 #1:
            # tests hold at load 10).
            return 1.0
        n *= 2
    return _best(work, make(2 * n)) / max(_best(work, make(n)), 1e-9)


def assert_linear(work: Callable[[Any], object], make: Callable[[int], Any], start: int = 1024) -> None:
    """Fails when doubling the input more than triples the time (three times over before failing: a
    machine busy for one measurement is not a finding; a quadratic pass gives 4 every time)."""
    ratios = []
    for _ in range(3):
        ratio = growth(work, make, start)
        if ratio < LIMIT:
            return
        ratios.append(ratio)
    raise AssertionError(f"doubling the input multiplied the time by {', then '.join(f'{r:.1f}' for r in ratios)}")
