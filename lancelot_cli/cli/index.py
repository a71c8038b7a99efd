"""`lancelot index SRC [DB]`: the only command that writes a database.

DB and ``--table`` resolve like every other command's database and table (argument or flag >
environment > the settings `lancelot init` stored > default), so `init --table notes` followed by
`index ./docs` writes the table `serve` reads. The work is `indexer.run.run`, which `init` calls too.

While a `lancelot index --watch` of the same table runs, a plain re-run (the watcher's folder and
options, no ``--tag``) is handed to it (cli/handoff.py): the watcher's pass, this command's summary,
without loading lancedb here. Anything else runs here as before.

SRC into a table indexed from another folder is refused when it would remove documents of the
table (indexer/plan.py ``check_source``): one line naming both folders, exit 1, nothing written;
``--replace`` lets it, ``--table NAME`` keeps both. The check needs no terminal, so scripts and
`init` get the same answer.

``--tag NAME`` names the version the run committed once it is written (storage/write/tagging.py), for
servers pinned to it (``serve --table-version NAME``).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lancelot_cli.cli.options import Json, Table, load_settings
from lancelot_cli.cli.readable_list import READ

if TYPE_CHECKING:
    from lancelot_cli.indexer import IndexReport
    from lancelot_cli.indexer.run import Options
    from lancelot_cli.settings import Settings

HELP = (
    "Build or update table NAME in database DB from the documents under SRC. DB and "
    "--table default to the stored or environment ones (LANCEDB_PATH, LANCEDB_TABLE). "
    "The only command that writes; the server never does. "
    f"It reads {READ} files, and a project's source code (--code); --ext adds other extensions."
)


def index(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="Folder of documents to index.", metavar="SRC", show_default=False)],
    database: Annotated[
        str | None,
        typer.Argument(
            help="Database folder, created if missing [default: LANCEDB_PATH, as stored by `lancelot init`].",
            metavar="DB",
            show_default=False,
        ),
    ] = None,
    table: Table = None,
    embed: Annotated[
        bool | None,
        typer.Option(
            "--embed/--no-embed",
            help="Also write vectors (unchanged chunks keep theirs). A local model makes them when "
            "EMBEDDING_MODEL (or --embed-model) is local:NAME, or when neither an OpenAI key nor "
            "OPENAI_BASE_URL is set: then the table's own local model, else all-MiniLM-L6-v2 if it is "
            "downloaded already. Otherwise EMBEDDING_MODEL through the OpenAI-compatible API at "
            "OPENAI_BASE_URL (a key is needed; it replaces a local model's vectors). A table made by "
            "another local model than the one `init` stored keeps its own (--embed-model switches it). "
            "--no-embed is saved "
            "with the table: re-runs stay text only until --embed. [default: a local "
            "model only when one is on this machine (the local extra installed, nothing downloaded), "
            "else text only]",
            show_default=False,
        ),
    ] = None,
    embed_model: Annotated[
        str | None,
        typer.Option(
            "--embed-model",
            metavar="MODEL",
            help="Embed with this model (implies --embed): an API model "
            "name, local:NAME (a fastembed model, downloaded once) or "
            "local:/path/to/folder (an ONNX model folder, offline).",
            show_default=False,
        ),
    ] = None,
    chunk_size: Annotated[
        int | None,
        typer.Option(
            "--chunk-size",
            min=200,
            max=100_000,
            help="Characters per chunk, about; saved with the table, and a new size applies with --rebuild "
            "[default: 1200, or as saved with the table].",
            show_default=False,
        ),
    ] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep running and update the table when files change (Ctrl-C to stop).")
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Read every file again, not just the changed ones.")
    ] = False,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Let SRC replace a table indexed from another folder, removing the documents SRC does "
            "not have (without it that run is refused and nothing is written; --table NAME keeps both).",
        ),
    ] = False,
    ext: Annotated[
        list[str] | None,
        typer.Option(
            "--ext",
            metavar="EXT[,EXT]",
            help="Also index source files with these extensions (e.g. py,ts,sql), as overlapping windows of "
            "lines; saved with the table, so re-runs and --watch keep them (--ext '' clears).",
            show_default=False,
        ),
    ] = None,
    max_file_size: Annotated[
        int, typer.Option("--max-file-size", min=1, metavar="BYTES", help="Skip (and list) files larger than this.")
    ] = 5 * 1024 * 1024,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            help="Leave out files matching this .gitignore-style pattern "
            "(repeatable; saved with the table, so re-runs and "
            "--watch keep it; --exclude '' clears). A "
            ".lancelotignore file in SRC is honoured too.",
            show_default=False,
        ),
    ] = None,
    site_detection: Annotated[
        bool | None,
        typer.Option(
            "--site-detection/--no-site-detection",
            help="In a generated documentation site (Sphinx, MkDocs, "
            "Docusaurus) index the rendered pages only, not source "
            "copies or search and index pages [default: on, or as "
            "saved with the table].",
            show_default=False,
        ),
    ] = None,
    code: Annotated[
        bool | None,
        typer.Option(
            "--code/--no-code",
            help="Index source code (Python, JavaScript/TypeScript, Go, Rust, Java, C/C++, Ruby, shell) "
            "one chunk per function or class, vendored, generated and minified files left out "
            "[default: on in a project (a git work tree, or pyproject.toml, package.json... at the top), "
            "or as saved with the table].",
            show_default=False,
        ),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option(
            "--tag",
            metavar="NAME",
            help="Name the version this run committed, for `serve --table-version NAME` "
            "(LANCELOT_TABLE_VERSION); a tag that exists is moved to it, which switches the servers "
            "pinned to it.",
            show_default=False,
        ),
    ] = None,
    json_out: Json = False,
) -> None:
    """Exit 0 when the table was written, even if some files were skipped (they are listed)."""
    from lancelot_cli.storage import heap

    heap.one_arena()  # first, while this is the only thread (storage/heap.py)
    settings = load_settings(ctx, database, LANCEDB_TABLE=table, EMBEDDING_MODEL=embed_model)
    embed = True if embed_model else embed
    if tag is not None:
        if watch:
            raise typer.BadParameter(
                "--tag names the version of one run; --watch commits one after another", param_hint="'--tag'"
            )
        from lancelot_cli.storage.write.tagging import check_name

        tag = check_name(tag)  # before any file is read
    given: dict[str, Any] = {  # indexer/job.py ``Options``, field by field (Options(**given) below checks the names)
        "embed": embed,
        "chunk_size": chunk_size,
        "rebuild": rebuild,
        "extensions": None if ext is None else tuple(ext),
        "max_file_size": max_file_size,
        "exclude": None if exclude is None else tuple(exclude),
        "site_detection": site_detection,
        "code": code,
        "replace": replace,
    }
    if not watch and tag is None:
        from lancelot_cli.cli.handoff import hand_off

        handed = hand_off(settings, source, given)  # a watcher of the table ran it (cli/handoff.py)
        if handed is not None:
            _summary_of_handoff(settings, source, handed, json_out)
            return
    from lancelot_cli.indexer.run import Options  # at run time (the name above is for the annotations)

    options = Options(**given)
    from lancelot_cli.indexer.sources import NothingToIndex

    try:
        summary = index_with_progress(settings, source, options)
    except NothingToIndex:
        if not watch:
            raise
        # The watcher's first pass says why (a user may start it before writing the first note).
        _watch(settings, source, options)
        return
    if tag is not None:
        summary["tag"] = tagged(settings, tag, int(summary["version"]))
    if json_out:
        from lancelot_cli.wire import to_json

        typer.echo(to_json(summary))
    if watch:
        _watch(settings, source, options)


def tagged(settings: Settings, name: str, version: int) -> dict[str, object]:
    """Tag ``version`` of the settings' table as ``name`` (storage/write/tagging.py) and say so on stderr;
    what was done, for the JSON summary."""
    from lancelot_cli.cli import render
    from lancelot_cli.indexer.run import database
    from lancelot_cli.storage.write.tagging import tag

    done = tag(database(settings), settings.table, name, version, dict(settings.storage_options or {}))
    render.stderr().print(done.line(settings.table), highlight=False, markup=False)
    return done.as_dict()


def index_with_progress(settings: Settings, source: str, options: Options | None = None) -> dict[str, Any]:
    """Index with a progress bar on a terminal (stderr) and the summary after; returns the report as a dict.

    `lancelot init` calls this too, for "index a folder into it now" (a folder other than the
    table's is refused there too, as the module doc says).
    """
    from lancelot_cli.cli import render
    from lancelot_cli.cli.links import folder_of, remember
    from lancelot_cli.indexer.run import Options, run

    noted = folder_of(settings, settings.table)  # the table's folder, for one that did not save it
    with render.index_progress() as (progress, on_embed):
        report = run(settings, source, options or Options(), progress=progress, on_embed=on_embed, noted_source=noted)
    remember(settings, source)  # for the links to files that `search` prints on a terminal
    summary = report.as_dict()
    render.index_summary(summary)
    return summary


def _summary_of_handoff(settings: Settings, source: str, summary: dict[str, Any], json_out: bool) -> None:
    """What `index_with_progress` and the command print after a run, for the run a watcher made."""
    from lancelot_cli.cli.links import remember
    from lancelot_cli.cli.progress import index_summary

    remember(settings, source)
    index_summary(summary)
    if json_out:
        from lancelot_cli.wire import to_json

        typer.echo(to_json(summary))


def _watch(settings: Settings, source: str, options: Options) -> None:
    """After the first pass: one line on stderr per batch that changed something, until Ctrl-C/SIGTERM."""
    import time

    from rich.markup import escape

    from lancelot_cli.cli import render
    from lancelot_cli.cli.links import folder_of
    from lancelot_cli.cli.visible import shown
    from lancelot_cli.indexer.run import watch

    err = render.stderr()
    # The folder's name and every message (which names files) as text: controls written out, no markup.
    err.print(f"Watching {escape(shown(source))} for changes (Ctrl-C to stop).")
    first = True

    def on_batch(report: IndexReport) -> None:
        nonlocal first
        if first:  # the watcher's own first pass repeats the one just done: say nothing unless it changed
            first = False
            if not report.committed:
                return
        if report.committed or report.skipped:
            err.print(render.batch_line(report.as_dict(), time.strftime("%H:%M:%S")), highlight=False)

    def on_error(message: str) -> None:
        err.print(f"[yellow]warning:[/] {escape(shown(message))}", highlight=False)

    noted = folder_of(settings, settings.table)  # as in index_with_progress
    with contextlib.suppress(KeyboardInterrupt):
        watch(settings, source, options, on_batch=on_batch, on_error=on_error, noted_source=noted)
    err.print("Stopped watching.")
