"""The consoles the CLI draws on, and what every table of its output shares.

stdout for results, stderr for notes, counts and progress; piped, both are as wide as
``PIPED_WIDTH`` (never wrapped). A table's cells are one line of text (``one_line``); piped, a
table has no borders and no padding at the ends of its lines (``grid_table``, ``print_table``).
Used by `render` and the modules it gathers (hits, status_view, progress).
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from lancelot_cli.cli.visible import shown

PIPED_WIDTH = 1000  # piped output is not wrapped: the reader (a pager, grep, a file) decides


def stdout() -> Console:
    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console.width = PIPED_WIDTH
    return console


def stderr() -> Console:
    console = Console(stderr=True, highlight=False)
    if not console.is_terminal:
        console.width = PIPED_WIDTH
    return console


def one_line(text: str) -> str:
    """One line of text from a document, white space folded, control characters shown (``visible``)."""
    return shown(" ".join(str(text).split()))


def print_table(out: Console, table: Table) -> None:
    """A table; piped, without the padding rich leaves at the ends of lines."""
    if out.is_terminal:
        out.print(table)
        return
    with out.capture() as capture:
        out.print(table)
    out.file.write("".join(line.rstrip() + "\n" for line in capture.get().splitlines()))


def grid_table(out: Console, *headers: str) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD if out.is_terminal else None, pad_edge=False, header_style="bold", show_edge=False
    )
    for header in headers:
        # fold, never "…": a word wider than its column (a model's path, a table name) goes on whole
        table.add_column(header, justify="right" if header == "rows" else "left", overflow="fold")
    return table
