"""One way in to indexing for the commands: `lancelot index` and `lancelot init` both call `run`.

`run` takes the effective `Settings` (flag > environment > stored file > default, as every
command resolves them), so the database and table `index` writes are the ones `serve`, `search`
and `init` use: the database is ``settings.db_uri`` and the table ``settings.table``. `job` makes
the run's `IndexJob` (indexer/job.py; the pipeline knows nothing about settings) once, from the
settings and the command's `Options`: a clear error when no database is named anywhere, the
object-store options, and how to choose the embedder from the stored key, endpoint and model.
`watch` does the same for `watch_job`. ``noted_source`` is the folder the command's config dir
noted for the table (cli/links.py, which the indexer does not import): for a table made before
its folder was saved with it, the folder a run from another one is checked against (plan.check_source).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

from lancelot_cli.errors import ConfigError
from lancelot_cli.indexer.embedding import ChooseEmbedding, Embed, Embedding
from lancelot_cli.indexer.job import IndexJob, OnEmbed, Options, Progress
from lancelot_cli.indexer.pipeline import index_job
from lancelot_cli.indexer.report import IndexReport
from lancelot_cli.settings import Settings

# Indexing can wait out rate limits: more retries (with the client's exponential backoff) than a query.
EMBED_TIMEOUT = 60.0
EMBED_RETRIES = 6
# A plain `lancelot index SRC`: no flags given.
NO_FLAGS = Options()


def database(settings: Settings) -> str:
    """The database to write: ``settings.db_uri``, or an error saying how to name one."""
    if not settings.db_uri:
        raise ConfigError(
            "no database given: pass it (`lancelot index SRC DB`), or store one with "
            "`lancelot init` (or set LANCEDB_PATH)"
        )
    return settings.db_uri


def embedder(settings: Settings, stored_model: str | None = None) -> tuple[Embed, str]:
    """The embeddings function and model for ``embed=True``: a local model when EMBEDDING_MODEL is
    ``local:...`` or when no key and no endpoint are configured (and the local extra is installed),
    else the OpenAI-compatible API; a clear error when neither can run. ``stored_model`` (the model
    of the table's vectors) is followed when it is local and nothing else is configured, or when
    the local model configured is only the settings file's (``table_model``)."""
    from lancelot_cli import local_embed
    from lancelot_cli.credentials import find_openai_key
    from lancelot_cli.errors import EmbeddingError
    from lancelot_cli.providers import OpenAIEmbedder

    model = table_model(settings, stored_model) or settings.embedding_model
    key = None if local_embed.is_local(model) else find_openai_key(settings.config_dir)
    if key is None and not local_embed.is_local(model) and not settings.openai_base_url:
        # a re-run of `--embed-model local:...` with plain --embed
        model = (stored_model if local_embed.is_local(stored_model) else None) or model
    if local_embed.is_local(model):
        try:
            local = local_embed.shared(local_embed.canonical(model))
            local.load()  # a missing extra, folder or download fails here, before any file is read
        except EmbeddingError as exc:
            raise ConfigError(str(exc)) from None
        return local.embed, local.model
    if key is None and not settings.openai_base_url and local_embed.available():
        try:  # no key: the default local model, if fastembed has it cached (no download unasked)
            local = local_embed.LocalEmbedder(local_embed.DEFAULT_MODEL, offline=True)
            local.load()
            return local.embed, local.model
        except EmbeddingError:
            pass
    if key is None:
        raise ConfigError(
            "--embed needs an OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
            "OpenAI-compatible server and any key) or run `lancelot init`; or embed on this "
            f"machine with --embed-model {local_embed.DEFAULT_MODEL} (downloaded once) or "
            f"local:/path/to/model-folder ({local_embed.install()})"
        )
    client = OpenAIEmbedder(
        key.value, settings.embedding_model, settings.openai_base_url, timeout=EMBED_TIMEOUT, max_retries=EMBED_RETRIES
    )
    return client.embed, settings.embedding_model


def table_model(settings: Settings, stored_model: str | None) -> str | None:
    """The table's own local model when the EMBEDDING_MODEL in force is another local model that
    only the settings file names (`init`'s choice, for new tables): a table indexed with
    `--embed-model local:/folder` keeps that model on a later `--embed`, as its searches do
    (engine/plan.py), instead of having every vector replaced by init's model (which, offline,
    fails to download; issue 45 #5). `--embed-model` or EMBEDDING_MODEL in the environment names
    the model to switch to. None: the configured model applies."""
    from lancelot_cli import local_embed

    configured = settings.embedding_model
    if (
        settings.sources.get("EMBEDDING_MODEL") == "file"
        and local_embed.is_local(configured)
        and local_embed.is_local(stored_model)
        and not local_embed.same_model(local_embed.identity(configured), stored_model)
    ):
        return stored_model
    return None


def default_embedder(settings: Settings, stored_model: str | None = None) -> tuple[Embed, str] | str:
    """What a plain `lancelot index` embeds with: a local model that is on this machine already (the
    local EMBEDDING_MODEL, the table's own local model ``stored_model``, or the default one in
    fastembed's cache), loaded without any download; otherwise the one line that says how to get
    vectors. A table with an API model's vectors is left to `--embed` (it costs a key and calls)."""
    from lancelot_cli import local_embed
    from lancelot_cli.errors import EmbeddingError

    models = [stored_model] if stored_model else []
    if any(not local_embed.is_local(m) for m in models):
        return ""  # the usual note about chunks without vectors says what to do
    if not local_embed.available():
        return (
            f"text search only: no local embedding model here; for hybrid search {local_embed.install()} "
            f"and index with --embed-model {local_embed.DEFAULT_MODEL} (downloaded once)"
        )
    configured = settings.embedding_model if local_embed.is_local(settings.embedding_model) else None
    configured = table_model(settings, stored_model) or configured  # as `--embed` (table_model)
    for model in dict.fromkeys(m for m in (configured, *models, local_embed.DEFAULT_MODEL) if m):
        if not local_embed.maybe_here(model):  # not there: no fastembed import to learn it
            continue
        try:
            local = local_embed.LocalEmbedder(local_embed.identity(model), offline=True)
            local.load()
        except EmbeddingError:
            continue
        return local.embed, local.model
    return (
        f"text search only: {local_embed.DEFAULT_MODEL} is not on this machine and nothing is downloaded "
        f"unasked; for hybrid search index once with --embed-model {local_embed.DEFAULT_MODEL} (or "
        f"local:/path/to/model-folder), or --no-embed to say no"
    )


def choose_embedding(settings: Settings, embed: bool | None, stored_model: str | None) -> Embedding:
    """What a run embeds with for ``--embed`` (True), ``--no-embed`` (False) or neither (None: a
    local model already on this machine, else text only and the hint that says how to get vectors).
    ``stored_model`` is the model of the table's vectors, which the writer reports."""
    if embed is None:
        found = default_embedder(settings, stored_model)
        return Embedding(hint=found or None) if isinstance(found, str) else Embedding(*found)
    return Embedding(*embedder(settings, stored_model)) if embed else Embedding()


def job_for(
    settings: Settings,
    source: Path | str,
    options: Options = NO_FLAGS,
    *,
    progress: Progress | None = None,
    on_embed: OnEmbed | None = None,
    noted_source: Path | None = None,
) -> IndexJob:
    """The run of ``options`` over ``source`` into the settings' table, made once for `run` or `watch`."""
    return IndexJob(
        Path(source),
        database(settings),
        settings.table,
        options,
        embedder=partial(choose_embedding, settings, options.embed),
        storage_options=dict(settings.storage_options or {}),
        progress=progress,
        on_embed=on_embed,
        noted_source=noted_source,
    )


def run(
    settings: Settings,
    source: Path | str,
    options: Options = NO_FLAGS,
    *,
    progress: Progress | None = None,
    on_embed: OnEmbed | None = None,
    noted_source: Path | None = None,
) -> IndexReport:
    """Make table ``settings.table`` of database ``settings.db_uri`` match the documents under ``source``.

    ``progress`` and ``on_embed`` are called as files are read and chunks embedded (see `index_folder`);
    ``on_embed`` also gets the model in use (the local one when ``--embed`` chose it for want of a key).
    A run from another folder than the table's that would remove its documents is refused unless
    ``options.replace`` (plan.check_source; ``noted_source``: the module doc).
    """
    job = job_for(settings, source, options, progress=progress, on_embed=on_embed, noted_source=noted_source)
    return index_job(job)


def watch(
    settings: Settings,
    source: Path | str,
    options: Options = NO_FLAGS,
    *,
    on_batch: Callable[[IndexReport], None],
    on_error: Callable[[str], None],
    noted_source: Path | None = None,
) -> None:
    """Keep the table up to date with ``source`` until Ctrl-C or SIGTERM (see `watch_job`), and take
    the `lancelot index` runs of the same plan that clients hand over (indexer/handoff.py)."""
    from lancelot_cli.index_socket import plan
    from lancelot_cli.indexer.watch import watch_job

    job = job_for(settings, source, options, noted_source=noted_source)
    hints: list[str | None] = []  # the first choice's hint, which a run of its own would print each time

    def as_run_reports(report: IndexReport) -> dict[str, Any]:
        summary = report.as_dict()
        if summary["vectorsHint"] is None and hints:
            summary["vectorsHint"] = hints[0]
        return summary

    watch_job(
        replace(job, embedder=_chosen_once(job.embedder, hints)),
        on_batch=on_batch,
        on_error=on_error,
        handoff_plan=plan(source, settings.table, asdict(options), settings.embedding_model, settings.openai_base_url),
        handoff_summary=as_run_reports,
    )


def _chosen_once(choose: ChooseEmbedding, hints: list[str | None]) -> ChooseEmbedding:
    """``choose`` asked at the first pass only: every batch of a watch embeds with what that pass
    chose (loading a local model takes seconds), without the hint, which the first run has said
    (kept in ``hints`` for the runs handed to the watcher, whose summaries say it as their own would)."""
    chosen: list[Embedding] = []

    def first_choice(stored_model: str | None) -> Embedding:
        if not chosen:
            first = choose(stored_model)
            hints.append(first.hint)
            chosen.append(replace(first, hint=None))
        return chosen[0]

    return first_choice
