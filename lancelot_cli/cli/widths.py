"""Column widths for render's tables: an id or a path is never cut (issue 39).

An id (``path#N``) and a path are what `lancelot show` and `--path-prefix` take, so a table gives
their column the width of the longest one and lets the other columns (titles, snippets) wrap in
what is left. When what is left is too narrow to read (``render`` says how narrow), it draws
another layout instead (a stacked list; the title under the path). A value longer than the whole
terminal is folded onto the next line, never ended with "…": copied back together it is whole.

Only measures: ``render`` draws.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.table import Table


def longest(texts: Iterable[str], at_least: int = 1) -> int:
    """The terminal cells the longest line of ``texts`` takes (wide characters count two)."""
    return max((cell_len(line) for text in texts for line in text.splitlines() or [""]), default=0) or at_least


def chrome(table: Table) -> int:
    """The cells ``table`` draws besides its columns' content: borders, separators, padding.

    rich's own arithmetic (``_extra_width``, ``_get_padding_width``), so that what is left for the
    flexible column is exact; the columns must all be added first."""
    return table._extra_width + sum(table._get_padding_width(n) for n in range(len(table.columns)))


def left_over(table: Table, width: int, fixed: Iterable[int]) -> int:
    """Cells left within ``width`` for the one flexible column once the others take ``fixed``."""
    return width - chrome(table) - sum(fixed)
