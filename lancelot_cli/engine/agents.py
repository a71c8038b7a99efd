"""Documents offered as MCP prompts: ``kind: agent`` in their front matter, or under ``agents/``;
each gets a unique slug of its file name."""

from __future__ import annotations

import os
import re

from lancelot_cli.engine.documents import document_rows
from lancelot_cli.models import AgentDocument
from lancelot_cli.storage.read.database import ReadOnlyTable
from lancelot_cli.storage.read.filters import RowFilter, equal_to
from lancelot_cli.storage.schema import CHUNK, TITLE

AGENTS_FOLDER = "agents/"


def agent_documents(tbl: ReadOnlyTable) -> list[AgentDocument]:
    """The table's agent documents, sorted by source; none when the table has no source column."""
    source_col = tbl.facts.source_column
    if source_col is None:
        return []
    columns = [c for c in (source_col, TITLE) if c in tbl.columns]
    found: dict[str, str] = {}
    filters = [RowFilter(source_col, AGENTS_FOLDER)]
    if "kind" in tbl.facts.text_columns:
        filters.append(equal_to("kind", "agent"))
    for narrow in filters:
        for row in tbl.rows(columns, narrow):
            found.setdefault(str(row[source_col]), str(row.get(TITLE) or ""))
    agents: list[AgentDocument] = []
    taken: set[str] = set()
    for source in sorted(found):
        base = re.sub(r"[^a-z0-9_-]+", "-", os.path.splitext(os.path.basename(source))[0].lower()).strip("-")
        name, n = base or "agent", 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name)
        agents.append(AgentDocument(name=name, title=found[source] or name, source=source))
    return agents


def agent_text(tbl: ReadOnlyTable, text_col: str, source: str) -> str:
    """The whole text of one document, its chunks joined in order."""
    source_col = tbl.facts.source_column
    assert source_col is not None  # only sources agent_documents found are asked for
    rows = document_rows(tbl, source_col, [c for c in (source_col, CHUNK, text_col) if c in tbl.columns], source)
    return "\n\n".join(str(row.get(text_col) or "").strip() for row in rows)
