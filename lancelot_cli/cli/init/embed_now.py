"""After `lancelot init` indexed a folder: offer to make the vectors it could not make then.

The wizard indexes ("index a folder into it now") before it asks how to embed, so that it can offer
the tables it wrote; that first run embeds only with what was already on this machine. When the
answers that follow give it a way to embed (a local model, or a key or endpoint) and the new table
has no vectors, init asks at the very end, after the settings and the key are saved, whether to
make them now: exactly what `lancelot index SRC --embed` would do next, with the settings just
written. A "no" prints that command. A registry model that is not on this machine yet is named as a
download (the question's default is then No); when embedding fails (no network for that download,
a model that does not load, the API), init says so in one line with what to do and goes on to print
the client configurations. Indexing stays where it was (before the table question) so that a
Ctrl-C at any later question still leaves the settings untouched.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lancelot_cli import local_embed
from lancelot_cli.cli.init.questions import Prompter, say

# One line when embedding now fails (no network for a download, a model that does not load, the
# API): the settings are saved already and init goes on to print the client configurations.
NOT_EMBEDDED = (
    "The vectors were not made: {problem}. Text search works; with no network, make a model folder "
    '(docs/troubleshooting.md, "No network: a local model folder") and run '
    "`lancelot index {folder} --embed-model local:/path/to/folder`."
)


@dataclass(frozen=True)
class Indexed:
    """What the wizard's "index a folder now" wrote: the folder, the table and the run's summary."""

    folder: str
    table: str
    summary: Mapping[str, Any]


def offer(ask: Prompter, indexed: Indexed, db_uri: str, environ: Mapping[str, str]) -> None:
    """Ask whether to embed ``indexed``'s table now, when it has none and the saved settings can make them."""
    from lancelot_cli import settings as settings_module

    chunks = int(indexed.summary.get("chunks") or 0)
    if not chunks or indexed.summary.get("embedded"):
        return
    settings = settings_module.load(flags={"LANCEDB_PATH": db_uri, "LANCEDB_TABLE": indexed.table}, environ=environ)
    found = _how(settings, environ)
    if found is None:
        return
    how, download = found
    later = f"lancelot index {shlex.quote(indexed.folder)} --embed"
    question = f"Table {indexed.table!r} has {chunks} chunk(s) and no vectors. Embed them now with {how}?"
    if not ask.confirm(question, default=not download):
        say(f"Text search only for now; make the vectors later with `{later}`.")
        return
    from lancelot_cli.cli.index import index_with_progress
    from lancelot_cli.errors import LancelotError
    from lancelot_cli.indexer.run import Options

    try:
        index_with_progress(settings, indexed.folder, Options(embed=True))
    except LancelotError as exc:  # a download with no network, a model that does not load, the API
        say(NOT_EMBEDDED.format(problem=str(exc).rstrip("."), folder=shlex.quote(indexed.folder)))


def _how(settings: Any, environ: Mapping[str, str]) -> tuple[str, bool] | None:
    """What `index --embed` would embed with under the saved settings, in words, and whether that
    needs a download first; None when nothing can."""
    model = settings.embedding_model
    if local_embed.is_local(model):
        if not local_embed.available():
            return None  # init said how to install the extra
        name = model[len(local_embed.PREFIX) :]
        if name.startswith("/") or local_embed.maybe_here(model):
            return f"{model}, on this machine", False
        return f"{model}, on this machine (not here yet: fastembed downloads it first, which needs the network)", True
    from lancelot_cli.credentials import find_openai_key

    if find_openai_key(settings.config_dir, environ) is None and not settings.openai_base_url:
        return None
    from lancelot_cli import redact

    return f"{model} through {redact.url(settings.openai_base_url) or 'OpenAI'}", False
