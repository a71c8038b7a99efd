"""Search hits drawn for a person: a table on a wide terminal, a stacked list on a narrow one,
plain blocks when piped; `--jsonl` lines.

Each hit says where it is (section, ``path:line``, id) with the query's words highlighted. Ids and
paths are never cut (cli/widths.py).

Re-exported by `render`, which the commands import.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.style import Style
from rich.table import Table
from rich.text import Text

from lancelot_cli.cli.consoles import one_line, stderr, stdout
from lancelot_cli.cli.plain import finders, line_of, place, score, search_blocks, section
from lancelot_cli.cli.visible import shown
from lancelot_cli.cli.widths import left_over, longest
from lancelot_cli.models import Hit, SearchResult
from lancelot_cli.storage.analyzer import split_words
from lancelot_cli.textmatch import query_words

WIDE = 100  # from this many columns up, search hits are a table; below, a stacked list
# Ids and paths are never cut (cli/widths.py): their column is as wide as the longest, and the rest
# wraps in what is left. Narrower than this, a snippet wraps every few words, so the hits become
# the stacked list instead (`ls` does the same with its titles: render.TITLE_MIN).
SNIPPET_MIN = 40
WHERE = "section / place / id"
MATCH_STYLE = "bold yellow"  # NO_COLOR keeps the bold


def _highlight(snippet: str, words: list[str]) -> Text:
    text = Text(snippet)
    for word in words:
        text.highlight_regex(re.compile(re.escape(word), re.I), style=MATCH_STYLE)
    return text


def search_reply(reply: SearchResult, folder: Path | None = None, also: Sequence[str] = ()) -> None:
    """Hits: a table on a wide terminal, a stacked list on a narrow one, plain blocks when piped.

    Each hit says where it is: its section (heading path), ``path:line`` as an editor opens it, and
    its id for `lancelot show`. The source is a path relative to the indexed folder; with that
    folder (``folder``: cli/links.py) and on a terminal, it is also an OSC 8 link to the file.
    The words of every phrasing (``also``: `--also`) are highlighted, and a hit of several
    phrasings says which found it.
    """
    out = stdout()
    err = stderr()
    how = f"{reply.search_type} search, ranked by {reply.ranking}"
    if reply.note:
        err.print(f"[yellow]note:[/] {escape(reply.note)}")
    if not reply.hits:
        err.print(escape(f"No matches for {reply.query!r} in table {reply.table!r} ({how})."))
        return
    words = list(dict.fromkeys(w for text in (reply.query, *also) for w in query_words(text, split_words)))
    if not out.is_terminal:
        out.file.write(search_blocks(reply.hits))
        out.file.flush()
    else:
        linked = folder if folder is not None and os.environ.get("TERM") != "dumb" else None
        table = _search_table(out, reply.hits, words, linked) if out.width >= WIDE else None
        if table is None:
            _search_list(out, reply.hits, words, linked)
        else:
            out.print(table)
    count = reply.count
    err.print(escape(f"{count} hit{'s' if count != 1 else ''} in table {reply.table!r} ({how})."), style="dim")


def _where(hit: Hit, folder: Path | None) -> Text:
    """Section, then ``path:line`` (a link to the file when ``folder`` is known), then the id."""
    from lancelot_cli.cli.links import file_link

    link = file_link(folder, hit.source, line_of(hit)) if folder is not None else None
    where = Text(overflow="fold")  # a path or id wider than the column goes on the next line, whole
    where.append(section(hit), style="bold")
    where.append("\n")
    where.append(place(hit), style=Style(color="cyan", link=link))
    where.append("\n")
    where.append(f"id {shown(hit.id)}", style="dim")
    if hit.found_by is not None:
        where.append(f"\nfound by {finders(hit.found_by)}", style="dim")
    return where


def _search_table(out: Console, hits: tuple[Hit, ...], words: list[str], folder: Path | None) -> Table | None:
    """The hits as a table whose place and id lines are whole; None when that leaves the snippet
    fewer than ``SNIPPET_MIN`` columns (long paths on a 100-column terminal): the stacked list then."""
    ranks = [str(rank) for rank in range(1, len(hits) + 1)]
    scores = [score(hit.score) for hit in hits]
    widths = (
        longest(["#", *ranks]),
        longest(["score", *scores]),
        longest([WHERE, *(place(hit) for hit in hits), *(f"id {shown(hit.id)}" for hit in hits)]),
    )
    table = Table(box=box.SIMPLE_HEAD, expand=False, pad_edge=False, header_style="bold")
    table.add_column("#", justify="right", style="dim", no_wrap=True, width=widths[0])
    table.add_column("score", justify="right", no_wrap=True, width=widths[1])
    table.add_column(WHERE, width=widths[2])  # a set width: rich never narrows it
    table.add_column("snippet")  # the one column that wraps to fit
    if left_over(table, out.width, widths) < SNIPPET_MIN:
        return None
    for rank, shown_score, hit in zip(ranks, scores, hits, strict=True):
        table.add_row(rank, shown_score, _where(hit, folder), _highlight(one_line(hit.snippet), words))
    return table


def _search_list(out: Console, hits: tuple[Hit, ...], words: list[str], folder: Path | None) -> None:
    """One block per hit, indented under its rank only (as piped output is), so that a path and an
    id get all but a few columns of the terminal: ``N. score section``, ``path:line``, the id, the
    snippet."""
    grid = Table.grid(padding=(0, 1), expand=False)
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column()  # the one column that wraps; its Text folds a path wider than the terminal
    for rank, hit in enumerate(hits, start=1):
        body = Text(f"{score(hit.score)}  ", overflow="fold")
        body.append_text(_where(hit, folder))
        body.append("\n")
        body.append_text(_highlight(one_line(hit.snippet), words))
        if rank < len(hits):
            body.append("\n")
        grid.add_row(f"{rank}.", body)
    out.print(grid)


def search_lines(reply: SearchResult) -> None:
    """--jsonl: one hit per line, each the hit object of the --json reply; the note goes to stderr."""
    from lancelot_cli.wire import to_json

    out = stdout().file
    for hit in reply.hits:
        out.write(to_json(hit) + "\n")
    out.flush()
    if reply.note:
        stderr().print(f"[yellow]note:[/] {escape(reply.note)}")
