"""What a search of a table will do, in one line (`status`, ``lancedb_status``): worked out by the
plan a search itself follows (``plan.auto_plan``), so status and search cannot disagree.

"hybrid: works, local all-MiniLM-L6-v2, 384-d" or "text only: the table has no vectors; run
`lancelot index SRC --embed`": the search that runs, then the model and size of the vectors it
uses (the table's, which may differ from EMBEDDING_MODEL), or why vectors are not used and what
to do about it.
"""

from __future__ import annotations

from lancelot_cli import local_embed
from lancelot_cli.engine import plan as planning
from lancelot_cli.storage.read.database import PinnedTable, ReadOnlyTable

NO_VECTORS = "text only: the table has no vectors; run `lancelot index SRC --embed`"


def model_name(model: str) -> str:
    """A model as a person reads it: ``local all-MiniLM-L6-v2``, ``local /models/e5``, or the API name."""
    if not local_embed.is_local(model):
        return model
    name = model[len(local_embed.PREFIX) :]
    return "local " + (name if name.startswith("/") else name.rsplit("/", 1)[-1])


def search_line(tbl: ReadOnlyTable, text_col: str, vector_col: str, embedding: planning.Embedding) -> str:
    """What `lancelot search QUERY` (type auto) does on ``tbl``, and why when it is text only; for a
    pinned table (``LANCELOT_TABLE_VERSION``), first the version it reads and the latest one."""
    line = _search_line(tbl, text_col, vector_col, embedding)
    return f"{pinned(tbl)}: {line}" if isinstance(tbl, PinnedTable) else line


def pinned(tbl: PinnedTable) -> str:
    """``at tag 'release-42' (version 7; the latest is 9)``: what a pinned table is read at."""
    version, latest = tbl.version, tbl.latest_version()
    at = f"at {tbl.pin.described()}"
    if tbl.pin.number is None:
        at += f" (version {version}"
        return at + (", the latest)" if version == latest else f"; the latest is {latest})")
    return at + (" (the latest)" if version == latest else f" (the latest is {latest})")


def _search_line(tbl: ReadOnlyTable, text_col: str, vector_col: str, embedding: planning.Embedding) -> str:
    text = "text" if text_col in tbl.facts.fts_columns else "text (a substring scan: no full-text index)"
    plan = planning.auto_plan(tbl, text_col, vector_col, embedding)
    column = tbl.facts.vector(vector_col)
    if column is None:
        return NO_VECTORS if text == "text" else f"{text} only: the table has no vectors"
    if plan.kind == "text":
        why = (
            plan.note
            or "the vectors need an OpenAI API key and none is set (set OPENAI_API_KEY or run `lancelot init`)"
        )
        return f"{text} only: {why}"
    model = plan.model or tbl.facts.vector_model(column) or embedding.model
    if plan.model and not local_embed.available():
        extra = local_embed.install()
        return f"{text} only: the vectors were made with {model_name(model)}, which needs the local extra ({extra})"
    used = f"{model_name(model)}, {column.dimension}-d"
    folder = plan.model[len(local_embed.PREFIX) :] if plan.model else ""
    if plan.model and not local_embed.maybe_here(plan.model):
        if folder.startswith("/"):  # a folder is never downloaded: the search falls back to text
            return (
                f"{text} only: the vectors were made with the model in {folder}, which is not there; "
                f"put the model back there, or embed again with `lancelot index SRC --embed-model MODEL`"
            )
        # not claimed to work: it needs a download, and offline a search falls back to text
        return (
            f"{plan.kind} once downloaded: the vectors were made with {model_name(model)} ({column.dimension}-d), "
            f"which is not on this machine; the first search downloads it (needs the network; "
            f"until then a search is text only)"
        )
    if plan.key is not None:
        used += f", key from {plan.key.source}"
    missing = tbl.missing_vectors(column.name)
    gaps = f"; {missing} row(s) have no vector yet (run `lancelot index SRC --embed`)" if missing else ""
    return f"{plan.kind}: works, {used}{gaps}"
