"""After `lancelot init` indexed a folder: offer to make the vectors it could not make then.

The wizard indexes ("index a folder into it now") before it asks how to embed, so that it can offer
the tables it wrote; that first run embeds only with what was already on this machine. When the
answers that follow give it a way to embed (a local model, or a key or endpoint) and the new table
has no vectors, init asks at the very end, after the settings and the key are saved, whether to
make them now: exactly what `lancelot index SRC --embed` would do next, with the settings just
written. A "no" prints that command. Indexing stays where it was (before the table question) so
that a Ctrl-C at any later question still leaves the settings untouched.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lancelot_cli import local_embed
from lancelot_cli.cli.init.questions import Prompter, say


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
    how = _how(settings, environ)
    if how is None:
        return
    later = f"lancelot index {shlex.quote(indexed.folder)} --embed"
    question = f"Table {indexed.table!r} has {chunks} chunk(s) and no vectors. Embed them now with {how}?"
    if not ask.confirm(question, default=True):
        say(f"Text search only for now; make the vectors later with `{later}`.")
        return
    from lancelot_cli.cli.index import index_with_progress
    from lancelot_cli.indexer.run import Options

    index_with_progress(settings, indexed.folder, Options(embed=True))


def _how(settings: Any, environ: Mapping[str, str]) -> str | None:
    """What `index --embed` would embed with under the saved settings, in words; None when nothing can."""
    model = settings.embedding_model
    if local_embed.is_local(model):
        if not local_embed.available():
            return None  # init said how to install the extra
        name = model[len(local_embed.PREFIX) :]
        if name.startswith("/") or local_embed.maybe_here(model):
            return f"{model}, on this machine"
        return f"{model}, on this machine (fastembed downloads it once, now)"
    from lancelot_cli.credentials import find_openai_key

    if find_openai_key(settings.config_dir, environ) is None and not settings.openai_base_url:
        return None
    from lancelot_cli import redact

    return f"{model} through {redact.url(settings.openai_base_url) or 'OpenAI'}"
