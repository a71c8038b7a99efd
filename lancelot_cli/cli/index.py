"""`lancelot index SRC DB`: the only command that writes a database."""

from __future__ import annotations

from typing import Annotated

import typer

from lancelot_cli.cli.options import Json

HELP = ("Build or update table NAME in database DB from the .md, .txt and .html files under SRC. "
        "The only command that writes; the server never does.")


def index(
    source: Annotated[str, typer.Argument(help="Folder of documents to index.", metavar="SRC", show_default=False)],
    database: Annotated[str, typer.Argument(help="Database folder (created if missing).", metavar="DB",
                                            show_default=False)],
    table: Annotated[str, typer.Option("--table", "-t", help="Table to write.")] = "documents",
    chunk_size: Annotated[int, typer.Option("--chunk-size", min=200, max=100_000,
                                            help="Characters per chunk, about.")] = 1200,
    json_out: Json = False,
) -> None:
    """Exit 0 when the table was written, even if some files were skipped (they are listed)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from lancelot_cli.cli import render
    from lancelot_cli.indexer import index_folder

    console = render.stderr()
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("reading", total=None)

        def progress(rel: str, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, description=f"reading {rel[-40:]}")

        report = index_folder(source, database, table, chunk_size=chunk_size, progress=progress)
    summary = report.as_dict()
    render.index_summary(summary)
    if json_out:
        typer.echo(__import__("lancelot_cli.formats", fromlist=["to_json"]).to_json(summary))
