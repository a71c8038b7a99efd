"""The ANN index of the ``vector`` column, built by the writer.

It is built when a table passes the size where a flat search stops paying (``VectorIndexPolicy``).
Write side only: the query parameters that go with it (partitions probed, refine factor) are the
reader's (storage/read/table.py, ``ANN_*``).

The index is IVF_PQ, L2 like the engine's search: k-means on a sample for the partitions, each
vector compressed to ``dimension / 8`` bytes (48 at 384-d: 4-bit codes of 4 dimensions each), so
the server holds ~50 MB of codes at a million rows; the reader re-ranks the candidates by their
stored vectors (refine), so its distances are exact and recall@10 against a flat search stays
>= 0.95. 4-bit codes train 16 centroids per sub-vector instead of 256: 14 s instead of 493 s at
200,000 rows for the same size and recall (tests/benchmarks/README.md, "Vector search at scale",
where IVF_FLAT, IVF_SQ and IVF_HNSW_SQ are measured too).
"""

from __future__ import annotations

from typing import Any

from lancelot_cli.storage.schema import VECTOR
from lancelot_cli.storage.write.policy import VectorIndexPolicy

VECTOR_INDEX_NAME = "vector_idx"
# Field metadata of the vector column: the row count the index was trained on (LanceDB's tag
# convention); the policy trains again when the table has grown well past it.
TRAINED_TAG = "lancedb:tag:ann-trained-rows"
_VECTOR_TYPES = ("IVF", "HNSW")


def is_vector_index(index: Any) -> bool:
    """Whether a ``list_indices()`` entry is the ANN index on the vector column."""
    return list(index.columns) == [VECTOR] and str(index.index_type).upper().startswith(_VECTOR_TYPES)


def vector_index(table: Any) -> Any | None:
    """The ANN index on the vector column (its list_indices entry), or None."""
    return next((index for index in table.list_indices() if is_vector_index(index)), None)


def trained_rows(table: Any, index: Any) -> int | None:
    """Rows the index was trained on: the tag, else (a build interrupted before its tag) the rows it
    covers; None without an index."""
    if index is None:
        return None
    raw = (table.schema.field(VECTOR).metadata or {}).get(TRAINED_TAG.encode())
    try:
        if raw is not None:
            return int(raw)
    except (TypeError, ValueError):  # not a number
        pass
    return int(index.num_indexed_rows or 0)  # no tag, or not a number


def index_config(dimension: int, policy: VectorIndexPolicy) -> Any:
    from lancedb.index import IvfPq

    if dimension % 4:  # (no 4-dimension split: LanceDB's default codes)
        return IvfPq(distance_type="l2", num_partitions=policy.partitions)
    return IvfPq(distance_type="l2", num_sub_vectors=dimension // 4, num_bits=4, num_partitions=policy.partitions)


def maintain(table: Any, policy: VectorIndexPolicy, rows: int) -> bool:
    """Build the index, or train it again, when ``policy`` says so for a table of ``rows`` rows
    (one commit for the index, one for its tag; readers keep the previous index until then). True
    if it did. Rows without a vector yet are left out of the index and found by nothing, as in a
    flat search."""
    schema = table.schema
    if VECTOR not in schema.names or rows < policy.min_rows:
        return False
    index = vector_index(table)
    if not policy.due(rows, trained_rows(table, index), int(getattr(index, "num_segments", 1) or 1)):
        return False
    dimension = int(schema.field(VECTOR).type.list_size)
    table.create_index(VECTOR, config=index_config(dimension, policy), name=VECTOR_INDEX_NAME, replace=True)
    table.update_field_metadata({"path": VECTOR, "metadata": {TRAINED_TAG: str(rows)}})
    return True
