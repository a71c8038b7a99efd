"""When a write is followed by ``optimize()`` (compaction and full-text index folding): OptimizePolicy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OptimizePolicy:
    """When a write is followed by ``optimize()``, which costs about as much as indexing the whole
    table's text again (0.85 s for the index and 0.7 s of compaction at 25,000 chunks, against 14 ms
    for the commit itself). Until then the rows an index does not cover are found by a scan of
    those rows on every search, which costs about 9 ms once there are any, then 0.1-0.4 ms per row
    for a long query (measured on 2 cores, tests/benchmarks/README.md), and their BM25 scores match what the index gives them
    (the statistics shift by up to ~2 % on other rows). So it runs when:
    - the rows not in a full-text index pass ``unindexed_rows`` (a search's extra scan stays small),
      or ``unindexed_share`` of the table (a small table's index is cheap to rebuild), or
    - the table has ``fragments`` small data fragments or more (every commit adds one and reads slow
      down; compaction leaves fragments of up to a million rows, which do not count), or
    - ``lancelot index --watch`` has been idle for ``idle_seconds`` after a commit (watch.py).
    A new table and a full rewrite (``--rebuild``, new vectors) pass the share at once."""

    unindexed_rows: int = 200
    unindexed_share: float = 0.05
    fragments: int = 32
    idle_seconds: float = 30.0

    def due(self, rows: int, unindexed: int, fragments: int) -> bool:
        return (unindexed > 0 and (unindexed >= self.unindexed_rows or unindexed >= self.unindexed_share * rows)) \
            or fragments >= self.fragments


OPTIMIZE_POLICY = OptimizePolicy()
