"""One way in to indexing for the commands: `lancelot index` and `lancelot init` both call `run`.

`run` takes the effective `Settings` (flag > environment > stored file > default, as every
command resolves them), so the database and table `index` writes are the ones `serve`, `search`
and `init` use: the database is ``settings.db_uri`` and the table ``settings.table``. It wraps
`index_folder` (which knows nothing about settings) and adds what a command needs around it:
a clear error when no database is named anywhere, the object-store options, and the embeddings
function for ``embed=True`` built from the stored key, endpoint and model. `watch` does the same
for `watch_folder`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lancelot_cli.errors import ConfigError
from lancelot_cli.indexer import Embed, IndexReport, Progress, index_folder
from lancelot_cli.indexer.chunking import CHUNK_CHARS
from lancelot_cli.indexer.sources import MAX_FILE_BYTES
from lancelot_cli.settings import Settings

# Indexing can wait out rate limits: more retries (with the client's exponential backoff) than a query.
EMBED_TIMEOUT = 60.0
EMBED_RETRIES = 6


@dataclass(frozen=True)
class Options:
    """How to index, besides where: the `lancelot index` flags."""

    embed: bool | None = None  # None: with a local model when one is on this machine (``default_embedder``)
    chunk_size: int = CHUNK_CHARS
    rebuild: bool = False
    extensions: tuple[str, ...] = ()
    max_file_size: int = MAX_FILE_BYTES
    exclude: tuple[str, ...] | None = None  # None: the patterns saved with the table
    site_detection: bool | None = None  # None: as saved with the table (on for a new one)


def database(settings: Settings) -> str:
    """The database to write: ``settings.db_uri``, or an error saying how to name one."""
    if not settings.db_uri:
        raise ConfigError("no database given: pass it (`lancelot index SRC DB`), or store one with "
                          "`lancelot init` (or set LANCEDB_PATH)")
    return settings.db_uri


def embedder(settings: Settings) -> tuple[Embed, str]:
    """The embeddings function and model for ``embed=True``: a local model when EMBEDDING_MODEL is
    ``local:...`` or when no key and no endpoint are configured (and the local extra is installed),
    else the OpenAI-compatible API; a clear error when neither can run."""
    from lancelot_cli import local_embed
    from lancelot_cli.credentials import find_openai_key
    from lancelot_cli.errors import EmbeddingError
    from lancelot_cli.providers import OpenAIEmbedder

    model = settings.embedding_model
    key = None if local_embed.is_local(model) else find_openai_key(settings.config_dir)
    if key is None and not local_embed.is_local(model) and not settings.openai_base_url:
        model = _table_model(settings) or model  # a re-run of `--embed-model local:...` with plain --embed
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
        raise ConfigError("--embed needs an OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local "
                          "OpenAI-compatible server and any key) or run `lancelot init`; or embed on this "
                          f"machine with --embed-model {local_embed.DEFAULT_MODEL} (downloaded once) or "
                          f"local:/path/to/model-folder ({local_embed.INSTALL})")
    client = OpenAIEmbedder(key.value, settings.embedding_model, settings.openai_base_url, timeout=EMBED_TIMEOUT,
                            max_retries=EMBED_RETRIES)
    return client.embed, settings.embedding_model


def default_embedder(settings: Settings) -> tuple[Embed, str] | str:
    """What a plain `lancelot index` embeds with: a local model that is on this machine already (the
    local EMBEDDING_MODEL, the table's own local model, or the default one in fastembed's cache),
    loaded without any download; otherwise the one line that says how to get vectors. A table with
    an API model's vectors is left to `--embed` (it costs a key and calls)."""
    from lancelot_cli import local_embed
    from lancelot_cli.errors import EmbeddingError

    models = _table_models(settings)
    if any(not local_embed.is_local(m) for m in models):
        return ""  # the usual note about chunks without vectors says what to do
    if not local_embed.available():
        return (f"text search only: no local embedding model here; for hybrid search {local_embed.INSTALL} "
                f"and index with --embed-model {local_embed.DEFAULT_MODEL} (downloaded once)")
    configured = settings.embedding_model if local_embed.is_local(settings.embedding_model) else None
    for model in dict.fromkeys(m for m in (configured, *models, local_embed.DEFAULT_MODEL) if m):
        if not local_embed.maybe_here(model):  # not there: no fastembed import to learn it
            continue
        try:
            local = local_embed.LocalEmbedder(local_embed.identity(model), offline=True)
            local.load()
        except EmbeddingError:
            continue
        return local.embed, local.model
    return (f"text search only: {local_embed.DEFAULT_MODEL} is not on this machine and nothing is downloaded "
            f"unasked; for hybrid search index once with --embed-model {local_embed.DEFAULT_MODEL} (or "
            f"local:/path/to/model-folder), or --no-embed to say no")


def _table_model(settings: Settings) -> str | None:
    """The local model the table's vectors were made with, if it has any."""
    from lancelot_cli import local_embed

    return next((m for m in _table_models(settings) if local_embed.is_local(m)), None)


def _table_models(settings: Settings) -> list[str]:
    """The models of the table's vector columns (none when there is no table or it is unreadable)."""
    from lancelot_cli.storage.reader import ReadOnlyDatabase

    try:
        db = ReadOnlyDatabase(database(settings), 0, dict(settings.storage_options or {}))
        facts = db.table(settings.table).facts
        return [m for m in (facts.vector_model(column) for column in facts.vectors) if m]
    except Exception:  # no database or table yet: nothing to follow
        return []


def _arguments(settings: Settings, options: Options) -> dict[str, Any]:
    hint = None
    if options.embed is None:
        found = default_embedder(settings)
        embed, model = (None, None) if isinstance(found, str) else found
        hint = found if isinstance(found, str) and found else None
    else:
        embed, model = embedder(settings) if options.embed else (None, None)
    return {"vectors_hint": hint, "chunk_size": options.chunk_size, "embed": embed, "model": model,
            "extensions": tuple(options.extensions), "max_file_size": options.max_file_size,
            "exclude": options.exclude, "site_detection": options.site_detection,
            "storage_options": dict(settings.storage_options or {})}


def run(settings: Settings, source: Path | str, options: Options = Options(), *,
        progress: Progress | None = None, on_embed: Callable[[int, int, str], None] | None = None) -> IndexReport:
    """Make table ``settings.table`` of database ``settings.db_uri`` match the documents under ``source``.

    ``progress`` and ``on_embed`` are called as files are read and chunks embedded (see `index_folder`);
    ``on_embed`` also gets the model in use (the local one when ``--embed`` chose it for want of a key).
    """
    db = database(settings)
    arguments = _arguments(settings, options)
    hint = arguments.pop("vectors_hint")
    model = arguments["model"]
    embedded = (lambda done, total: on_embed(done, total, model)) if on_embed else None
    report = index_folder(source, db, settings.table, rebuild=options.rebuild, progress=progress,
                          on_embed=embedded, **arguments)
    report.vectors_hint = hint
    return report


def watch(settings: Settings, source: Path | str, options: Options = Options(), *,
          on_batch: Callable[[IndexReport], None], on_error: Callable[[str], None]) -> None:
    """Keep the table up to date with ``source`` until Ctrl-C or SIGTERM (see `watch_folder`)."""
    from lancelot_cli.indexer.watch import watch_folder

    arguments = _arguments(settings, options)
    arguments.pop("vectors_hint")  # said by the first pass
    watch_folder(source, database(settings), settings.table, on_batch=on_batch, on_error=on_error, **arguments)
