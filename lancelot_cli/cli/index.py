"""`lancelot index SRC DB`: the only command that writes a database."""

from __future__ import annotations

from typing import Annotated

import typer

from lancelot_cli.cli.options import Json, load_settings
from lancelot_cli.errors import ConfigError

HELP = ("Build or update table NAME in database DB from the .md, .txt and .html files under SRC. "
        "The only command that writes; the server never does.")


def index(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="Folder of documents to index.", metavar="SRC", show_default=False)],
    database: Annotated[str, typer.Argument(help="Database folder (created if missing).", metavar="DB",
                                            show_default=False)],
    table: Annotated[str, typer.Option("--table", "-t", help="Table to write.")] = "documents",
    embed: Annotated[bool, typer.Option("--embed", help="Also write vectors made with EMBEDDING_MODEL through the "
                                                        "OpenAI-compatible API at OPENAI_BASE_URL (needs a key); "
                                                        "unchanged chunks keep their vectors.")] = False,
    chunk_size: Annotated[int, typer.Option("--chunk-size", min=200, max=100_000,
                                            help="Characters per chunk, about (use --rebuild after a change).")] = 1200,
    watch: Annotated[bool, typer.Option("--watch", help="Keep running and update the table when files change "
                                                        "(Ctrl-C to stop).")] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Read every file again, not just the changed ones.")
                       ] = False,
    ext: Annotated[list[str] | None, typer.Option("--ext", metavar="EXT[,EXT]",
                                                  help="Also index source files with these extensions (e.g. "
                                                       "py,ts,sql), as overlapping windows of lines.",
                                                  show_default=False)] = None,
    max_file_size: Annotated[int, typer.Option("--max-file-size", min=1, metavar="BYTES",
                                               help="Skip (and list) files larger than this.")] = 5 * 1024 * 1024,
    json_out: Json = False,
) -> None:
    """Exit 0 when the table was written, even if some files were skipped (they are listed)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from lancelot_cli.cli import render
    from lancelot_cli.indexer import index_folder

    embedder, model = _embedder(ctx) if embed else (None, None)
    storage_options = dict(_settings(ctx).storage_options or {})
    console = render.stderr()
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        reading = bar.add_task("reading", total=None)
        embedding = bar.add_task("embedding", total=None, visible=False)

        def progress(rel: str, done: int, total: int) -> None:
            bar.update(reading, completed=done, total=total, description=f"reading {rel[-40:]}")

        def on_embed(done: int, total: int) -> None:
            bar.update(embedding, completed=done, total=total, visible=True, description=f"embedding ({model})")

        report = index_folder(source, database, table, chunk_size=chunk_size, progress=progress,
                              embed=embedder, model=model, on_embed=on_embed, rebuild=rebuild,
                              extensions=ext or (), max_file_size=max_file_size, storage_options=storage_options)
    summary = report.as_dict()
    render.index_summary(summary)
    if json_out:
        from lancelot_cli.formats import to_json

        typer.echo(to_json(summary))
    if watch:
        _watch(source, database, table, chunk_size=chunk_size, embed=embedder, model=model, extensions=ext or (),
               max_file_size=max_file_size, storage_options=storage_options)


def _watch(source: str, database: str, table: str, **options: object) -> None:
    """After the first pass: one line on stderr per batch that changed something, until Ctrl-C/SIGTERM."""
    import time

    from lancelot_cli.cli import render
    from lancelot_cli.indexer.watch import watch_folder

    err = render.stderr()
    err.print(f"Watching {source} for changes (Ctrl-C to stop).")
    first = True

    def on_batch(report) -> None:  # type: ignore[no-untyped-def]
        nonlocal first
        if first:  # the watcher's own first pass repeats the one just done: say nothing unless it changed
            first = False
            if not report.committed:
                return
        if report.committed or report.skipped:
            err.print(render.batch_line(report.as_dict(), time.strftime("%H:%M:%S")), highlight=False)

    def on_error(message: str) -> None:
        err.print(f"[yellow]warning:[/] {message}", highlight=False)

    try:
        watch_folder(source, database, table, on_batch=on_batch, on_error=on_error, **options)
    except KeyboardInterrupt:
        pass
    err.print("Stopped watching.")


def _settings(ctx: typer.Context | None):  # type: ignore[no-untyped-def]
    """Settings for the index command (``init`` calls it without a Typer context)."""
    if ctx is None:
        from lancelot_cli.settings import load

        return load()
    return load_settings(ctx)


def _embedder(ctx: typer.Context):  # type: ignore[no-untyped-def]
    """The embeddings function for --embed, or a clear error when there is no key."""
    from lancelot_cli.credentials import find_openai_key
    from lancelot_cli.providers import OpenAIEmbedder

    settings = _settings(ctx)
    key = find_openai_key(settings.config_dir)
    if key is None:
        raise ConfigError("--embed needs an OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
                          "OpenAI-compatible server and any key) or run `lancelot init`")
    # Indexing can wait out rate limits: more retries (with the client's exponential backoff).
    embedder = OpenAIEmbedder(key.value, settings.embedding_model, settings.openai_base_url, timeout=60.0,
                              max_retries=6)
    return embedder.embed, settings.embedding_model
