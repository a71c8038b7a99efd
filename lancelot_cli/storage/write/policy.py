"""When a write is followed by ``optimize()`` (compaction and index folding): OptimizePolicy; when the
vector column gets an ANN index: VectorIndexPolicy; how long the versions a run replaces are kept:
keep_versions_for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class OptimizePolicy:
    """When a write is followed by ``optimize()``, which costs about as much as indexing the whole
    table's text again (0.85 s for the index and 0.7 s of compaction at 25,000 chunks, against 14 ms
    for the commit itself). Until then the rows an index does not cover are found by a scan of
    those rows on every search, which costs about 9 ms once there are any, then 0.1-0.4 ms per row
    for a long query (measured on 2 cores, tests/benchmarks/README.md), and their BM25 scores match
    what the index gives them (the statistics shift by up to ~2 % on other rows). So it runs when:
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
        return (
            unindexed > 0 and (unindexed >= self.unindexed_rows or unindexed >= self.unindexed_share * rows)
        ) or fragments >= self.fragments


@dataclass(frozen=True)
class VectorIndexPolicy:
    """When the writer builds (or trains again) the ANN index of the ``vector`` column (storage/write/ann.py).
    A flat search reads every vector: 33 ms at 20,000 rows of 384-d, 185 ms at 50,000, 1.1-1.8 s at
    200,000 (2 shared cores), so it passes ~60 ms near ``min_rows``; the index answers in ~12 ms
    with recall@10 >= 0.99 and builds in 5-7 s at that size (tests/benchmarks/README.md, "Vector
    search at scale"). Rows added later are searched flat until ``optimize()`` folds them into the
    index with its trained centroids and codes (~0.1 s, no training); when the table has grown
    ``retrain_growth`` times since the index was trained, those no longer fit the data and the
    index is built again from all rows. So it is when the index has ``max_segments`` segments: each
    ``optimize()`` adds one for the rows it folds in (LanceDB 0.40's ``optimize()`` does not merge
    them), and a search reads every segment.
    ``partitions`` (None: LanceDB's default, ~rows / 8192) is lowered only by tests."""

    min_rows: int = 25_000
    retrain_growth: float = 2.0
    max_segments: int = 16
    partitions: int | None = None

    def due(self, rows: int, trained_rows: int | None, segments: int = 1) -> bool:
        """True when a table of ``rows`` rows, whose index was trained on ``trained_rows`` (None:
        it has none) and has ``segments`` segments, should get a newly trained index."""
        return rows >= self.min_rows and (
            trained_rows is None or rows >= self.retrain_growth * trained_rows or segments >= self.max_segments
        )


def keep_versions_for(environ: Mapping[str, str] | None = None) -> timedelta:
    """How long after its commit a version other than the latest is kept (``LANCELOT_KEEP_VERSIONS_FOR``,
    10 minutes by default; LanceDB's own default is 7 days): the writer gives older ones up each time
    its ``optimize()`` runs (storage/write/guard.py, ``keep_bounded``). 17 quick re-indexes of a 3 MB
    source otherwise kept 37 versions and 107 MB on disk for a week (issue 46), and a disk they
    filled made every later run fail. A reader is on an older version only for one search (a
    folder's server looks for the latest version on every read, an object store's every 5 s); a
    search under way when its files go fails, and the next one reads the latest. Minutes are plenty.
    Read here, where the writer prunes, from the same layers as every setting (settings.load)."""
    from lancelot_cli.settings import load

    return timedelta(minutes=load(environ=environ).keep_versions_minutes)


OPTIMIZE_POLICY = OptimizePolicy()
VECTOR_INDEX_POLICY = VectorIndexPolicy()
