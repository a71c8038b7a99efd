"""Jobs for the worker pool's tests (indexer/pool.py): module-level, so that a spawned worker can
import them by name."""

from __future__ import annotations

import time


def burn(seconds: float) -> float:
    """Use ``seconds`` of this process's CPU time (no sleeping); the CPU seconds it used."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return time.process_time() - start
