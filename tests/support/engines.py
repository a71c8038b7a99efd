"""Building the read-only engine in tests, one way (`engine_for`), and reading its replies in their
published JSON form (`wired`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.credentials import FoundKey
from lancelot_cli.engine import Engine
from lancelot_cli.settings import load
from lancelot_cli.wire import to_wire

Vectors = Callable[[Sequence[str]], list[list[float]]]


def engine_for(
    db: Path | str | None,
    monkeypatch: pytest.MonkeyPatch | None = None,
    *,
    embed: Vectors | None = None,
    keyless: bool = False,
    **env: str,
) -> Engine:
    """The engine as the server builds it (``Engine(load())``) over the database ``db``.

    Args:
        db: the database folder or URI, as LANCEDB_PATH; None leaves LANCEDB_PATH unset.
        monkeypatch: given, LANCEDB_PATH and ``env`` are set in the process environment, where the
            key lookup and the openai client read them too (as in a server); else they override
            ``os.environ`` for the settings only.
        embed: query vectors come from this function (with a stand-in key), not the openai client.
        keyless: no OpenAI key is found, whatever the environment or the config folder holds.
        env: further settings by their environment names (``EMBEDDING_MODEL="..."``).
    """
    values = dict(env)
    if db is not None:
        values["LANCEDB_PATH"] = str(db)
    if monkeypatch is not None:
        if db is None:
            monkeypatch.delenv("LANCEDB_PATH", raising=False)
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings = load()
    else:
        base = {k: v for k, v in os.environ.items() if db is not None or k != "LANCEDB_PATH"}
        settings = load(environ={**base, **values})
    options: dict[str, Any] = {}
    if embed is not None:
        options = {"find_key": lambda: FoundKey("sk-test", "env"), "make_embedder": lambda _key: embed}
    elif keyless:
        options = {"find_key": lambda: None}
    return Engine(settings, **options)


class wired:  # noqa: N801 (reads like a function at the call sites)
    """An engine whose replies are read as agents and `--json` get them (``wire.to_wire`` of the
    models it returns), so assertions check the published JSON shape."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.settings = engine.settings

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.engine, name)
        return lambda *args, **kwargs: to_wire(call(*args, **kwargs))
