"""Rich output for a person at a terminal; plain text when piped; colour obeys NO_COLOR.

What the commands import to draw: `query`, `show` and `ls` are drawn here; search hits
(cli/hits.py), `status` (cli/status_view.py) and indexing (cli/progress.py) have modules of their
own, re-exported here, on the consoles of cli/consoles.py. These are the CLI's only modules that
draw with rich. Results go to stdout; notes, counts, progress and summaries of long work go to
stderr, so `lancelot search x > hits.txt` keeps only the hits.

On a terminal, tables follow its width (a narrow one gets a stacked list instead of columns).
Piped, nothing is coloured or wrapped: one block per hit, tables without borders.

Imported by the commands when they print, never for `--help` or completion (the help screens are
`helpfmt`'s). rich.markdown (markdown-it and pygments behind it) is imported only by `query` on a
terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from lancelot_cli.cli.consoles import PIPED_WIDTH, grid_table, one_line, print_table, stderr, stdout
from lancelot_cli.cli.hits import search_lines, search_reply
from lancelot_cli.cli.progress import batch_line, index_progress, index_summary
from lancelot_cli.cli.status_view import status_reply
from lancelot_cli.cli.visible import shown
from lancelot_cli.cli.widths import left_over, longest
from lancelot_cli.models import ContextBlock, Document, DocumentList

__all__ = [
    "PIPED_WIDTH",
    "batch_line",
    "context_block",
    "document",
    "document_list",
    "index_progress",
    "index_summary",
    "search_lines",
    "search_reply",
    "status_reply",
    "stderr",
    "stdout",
    "waiting",
]

# Paths are never cut (cli/widths.py): their column is as wide as the longest, and the title wraps
# in what is left. Narrower than this, it wraps every few words, so `ls` gives each path a line of
# its own instead.
TITLE_MIN = 20
NO_PATH = "(no path)"  # a row of a table whose path column is empty


# -- query ---------------------------------------------------------------------------------------------


def context_block(reply: ContextBlock) -> None:
    """`query`: the Markdown block, then on stderr how much of it fitted."""
    _markdown(reply.context, reply.included, reply.budget, reply.left_out)


def document(reply: Document) -> None:
    """`show`: the document's Markdown, then on stderr how much of it fitted."""
    _markdown(reply.context, reply.included, reply.budget, reply.cut)


def _markdown(context: str, included: int, budget: int, left_out: int) -> None:
    out = stdout()
    context = shown(context)
    if out.is_terminal:
        from rich.markdown import Markdown

        # Links are drawn as their text and target, never as a terminal hyperlink (OSC 8) whose
        # target a document chose and the reader cannot see.
        out.print(Markdown(context, hyperlinks=False))
    else:
        out.file.write(context)
        out.file.flush()
    stderr().print(
        f"{included} chunk(s), {len(context)} of {budget} characters" + (f", {left_out} left out" if left_out else ""),
        style="dim",
    )


# -- ls ------------------------------------------------------------------------------------------------


def _size(size: int | None) -> str:
    if size is None:  # a table another tool wrote has no file sizes
        return "-"
    if size < 1024:
        return f"{size} B"
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


def document_list(reply: DocumentList) -> None:
    """`ls`: one row per document (path, chunks, size, title); the count on stderr."""
    out = stdout()
    under = f" under {reply.path_prefix!r}" if reply.path_prefix else ""
    if not reply.documents:
        stderr().print(escape(f"No documents{under} in table {reply.table!r}."))
        return
    table = _documents_table(out, reply)
    if table is None:
        _documents_stacked(out, reply)
    else:
        print_table(out, table)
    count = len(reply.documents)
    chunks = sum(entry.chunks for entry in reply.documents)
    stderr().print(
        escape(f"{count} document{'s' if count != 1 else ''}{under}, {chunks} chunks, in table {reply.table!r}."),
        style="dim",
    )


def _documents_table(out: Console, reply: DocumentList) -> Table | None:
    """Path, chunks, size, title; the path column as wide as the longest path (what `show` takes).
    None on a terminal where that leaves the title fewer than ``TITLE_MIN`` columns."""
    paths = [shown(entry.source) or NO_PATH for entry in reply.documents]
    counts = [str(entry.chunks) for entry in reply.documents]
    sizes = [_size(entry.size) for entry in reply.documents]
    table = grid_table(out, "path", "chunks", "size", "title")
    widths = (longest(["path", *paths]), longest(["chunks", *counts]), longest(["size", *sizes]))
    if out.is_terminal and left_over(table, out.width, widths) < TITLE_MIN:
        return None
    for column, width in zip(table.columns, widths, strict=False):  # the title column wraps: no width
        column.width = width  # a set width: rich never narrows it
    table.columns[1].justify = table.columns[2].justify = "right"
    for entry, path, count, size in zip(reply.documents, paths, counts, sizes, strict=True):
        table.add_row(Text(path, style="" if entry.source else "dim"), count, size, one_line(entry.title))
    return table


def _documents_stacked(out: Console, reply: DocumentList) -> None:
    """A terminal too narrow for the table: each path on a line of its own (folded only when it is
    wider than the terminal), then its chunks, size and title, indented under it."""
    from rich.console import Group
    from rich.padding import Padding

    parts: list[Text | Padding] = []
    for entry in reply.documents:
        parts.append(Text(shown(entry.source) or NO_PATH, style="" if entry.source else "dim", overflow="fold"))
        size = f", {_size(entry.size)}" if entry.size is not None else ""
        detail = Text(f"{entry.chunks} chunk{'s' if entry.chunks != 1 else ''}{size}  ", style="dim", overflow="fold")
        detail.append(one_line(entry.title), style="not dim")
        parts.append(Padding(detail, (0, 0, 0, 2)))
    out.print(Group(*parts))


# -- waiting -------------------------------------------------------------------------------------------


@contextmanager
def waiting(message: str) -> Iterator[None]:
    """A spinner with ``message`` on stderr while a slow step runs (loading a local model), on a
    terminal only: piped output and logs get nothing."""
    err = stderr()
    if not err.is_terminal:
        yield
        return
    with err.status(escape(message)):
        yield
