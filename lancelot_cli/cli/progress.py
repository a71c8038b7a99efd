"""Indexing's output on stderr: progress bars while it runs, its summary when done, and a line per
`--watch` batch.

Re-exported by `render`, which the commands import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.markup import escape

from lancelot_cli.cli.consoles import stderr
from lancelot_cli.cli.visible import shown


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


NO_TEXT = "no text found"  # sources.read_document's reason for an empty file


def index_summary(report: dict[str, Any]) -> None:
    err = stderr()
    empty = [item["path"] for item in report["skipped"] if item["reason"] == NO_TEXT]
    for item in report["skipped"]:
        if item["reason"] != NO_TEXT:
            err.print(f"[yellow]skipped[/] {escape(shown(item['path']))}: {escape(shown(item['reason']))}")
    if empty:  # one line, however many: a project's empty __init__.py files buried the summary (issue 47)
        first = ", ".join(shown(p) for p in empty[:3]) + (", ..." if len(empty) > 3 else "")
        err.print(f"[yellow]skipped[/] {len(empty)} file(s) with no text: {escape(first)}")
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
    if report.get("code"):
        err.print(escape(f"{report['code']}."))
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
    elif report.get("vectorsHint") and report["committed"]:
        # Said when the run wrote the table (made or changed it), not on every re-run that changed
        # nothing: three lines repeated on each run were noise (issue 45 item 10); --json keeps it.
        err.print(f"[yellow]note:[/] {escape(report['vectorsHint'])}")
    if report.get("chunkSizeNote"):
        err.print(f"[yellow]note:[/] {escape(report['chunkSizeNote'])}")
    if report.get("textReadAgain"):
        err.print(
            "[yellow]note:[/] every file was read again: this version of lancelot reads documents' text "
            "more cleanly than the one that made the table (later runs read only what changed)"
        )


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
