"""Giving rows their vectors after their text is in the table.

Vectors are reused by content hash, else embedded in batches and committed as they come, so a table
is searchable by text before the first vector is made and an interrupted run keeps every vector
committed so far. `Embedding` is what a run embeds with, chosen once the table's stored model is
known (indexer/pipeline.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage.schema import HASH, ID, TEXT

Embed = Callable[[list[str]], list[list[float]]]

# Inputs per embeddings request and characters per request: well under OpenAI's limits (2,048
# inputs, 300k tokens) and small enough for local servers (Ollama, LM Studio).
EMBED_BATCH = 64
EMBED_BATCH_CHARS = 100_000
# Longer chunks are cut to this many characters before embedding (the stored text is whole).
MAX_EMBED_CHARS = 8_000
# Vectors are committed every this many chunks or seconds, whichever comes first: each commit is
# a table version (about 10-50 ms), and what an interrupted run keeps.
COMMIT_CHUNKS = 2_048
COMMIT_SECONDS = 30.0


@dataclass(frozen=True)
class Embedding:
    """What a run embeds with: ``embed``, the function, and ``model``, the name its vectors are
    stored under; or neither (text only), with ``hint`` saying how to get vectors when that helps."""

    embed: Embed | None = None
    model: str | None = None
    hint: str | None = None

    @property
    def embeds(self) -> bool:
        return self.embed is not None and bool(self.model)


# Picks the `Embedding` of a run from the model the table's vectors were made with (None: no
# vectors yet). A function, not a value, because that model is known only once the writer has
# opened the table (indexer/run.py follows a table's local model; a fixed choice ignores it).
ChooseEmbedding = Callable[[str | None], Embedding]


def text_only(_stored_model: str | None) -> Embedding:
    return Embedding()


@dataclass
class Filled:
    """What ``fill_vectors`` did: chunks embedded (and of them cut at ``MAX_EMBED_CHARS``), of ``total``."""

    embedded: int = 0
    truncated: int = 0
    total: int = 0


def fill_vectors(
    writer: Any,
    embed: Embed,
    model: str,
    commit: Callable[[Callable[[], Any]], Any],
    on_embed: Callable[[int, int], None] | None = None,
    filled: Filled | None = None,
) -> Filled:
    """Embed the table's rows that have no vector of ``model`` yet (shortest first) and commit
    their vectors in steps (``commit`` runs a write so that a signal waits for it). The first
    batch says the vectors' size; a column of another model or size is replaced then. On an
    interruption or an error the vectors made since the last step are committed before it goes
    on up; ``filled`` (given by the caller) says how far it got."""
    filled = filled if filled is not None else Filled()
    # Shortest first: a model that pads a batch to its longest text pads least (an endpoint embeds
    # each text on its own either way).
    todo = sorted(writer.rows_without_vectors(model), key=lambda row: len(row[TEXT]))
    filled.total = len(todo)
    if not todo:
        return filled
    by_hash: dict[str, list[float]] = {}
    pending: dict[str, list[float]] = {}
    dimension: int | None = None
    last_commit = time.monotonic()

    def flush() -> None:
        nonlocal last_commit
        if pending:
            commit(lambda: writer.set_vectors(dict(pending)))
            pending.clear()
        last_commit = time.monotonic()

    try:
        for batch in _batches(todo):
            texts = [row[TEXT][:MAX_EMBED_CHARS] for row in batch if row[HASH] not in by_hash]
            vectors = iter(embed(texts)) if texts else iter(())
            for row in batch:
                if row[HASH] not in by_hash:
                    vector = next(vectors)
                    if dimension is None:
                        dimension = len(vector)
                        commit(partial(writer.use_vector_column, model, dimension))
                    if len(vector) != dimension:
                        raise IndexingError(
                            f"the embedder returned {len(vector)}-d and {dimension}-d vectors; check EMBEDDING_MODEL"
                        )
                    by_hash[row[HASH]] = vector
                    filled.truncated += len(row[TEXT]) > MAX_EMBED_CHARS
                pending[row[ID]] = by_hash[row[HASH]]
                filled.embedded += 1
            if on_embed:
                on_embed(filled.embedded, filled.total)
            if len(pending) >= COMMIT_CHUNKS or time.monotonic() - last_commit >= COMMIT_SECONDS:
                flush()
    finally:
        flush()
    return filled


def _batches(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows in embedding requests of at most ``EMBED_BATCH`` texts and ``EMBED_BATCH_CHARS`` characters."""
    batches: list[list[dict[str, Any]]] = []
    batch: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        length = min(len(row[TEXT]), MAX_EMBED_CHARS)
        if batch and (len(batch) >= EMBED_BATCH or size + length > EMBED_BATCH_CHARS):
            batches.append(batch)
            batch, size = [], 0
        batch.append(row)
        size += length
    if batch:
        batches.append(batch)
    return batches
