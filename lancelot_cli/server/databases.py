"""The engines of a server that answers for any database: the CLI's background server (server/transports/unix.py).

A tools/call whose `_meta` holds ``{"lancelot/db": URI}`` is answered over the database at URI
with the server's other settings (background/client.py sends it on every call; its socket is named by
every setting but the database, so those are the caller's own). Only `serve --socket` honours the
key: a stdio or HTTP server answers for its own database whatever a client sends.

At most ``MAX_OPEN`` databases stay open, the least recently asked closed first; a local folder
that does not exist gets an engine for the one call (its error) and is not kept, so mistyped paths
cost nothing after their answer. Figures: docs/performance.md (the background server).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from lancelot_cli.engine import Engine
from lancelot_cli.requests import DATABASE_KEY
from lancelot_cli.settings import Settings
from lancelot_cli.storage.read.database import display_uri
from lancelot_cli.storage.schema import is_local, local_path

MAX_OPEN = 3  # databases kept open: one server's RSS stayed under 300 MiB with three (module doc)
_asked: ContextVar[str | None] = ContextVar("lancelot_asked_database", default=None)


class Engines:
    """The server's engine for the current call: its own database's, or (``any_database``) the one
    the call's `_meta` names. ``on_change`` gets the open databases (display form) when they change."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine | None = None,
        *,
        any_database: bool = False,
        on_change: Callable[[list[str]], None] | None = None,
    ) -> None:
        self._settings = settings
        self._any = any_database
        self._on_change = on_change
        self._lock = threading.Lock()
        self._open: OrderedDict[str | None, Engine] = OrderedDict()
        if engine is not None:
            self._open[_key(settings.db_uri)] = engine

    def ask(self, context: Any) -> Any:
        """Note the database the call names (a token for ``done``); None when it names none."""
        if not self._any:
            return None
        try:
            meta = context.request_context.meta if context is not None else None
        except ValueError:  # a Context made outside a request (in-process calls)
            return None
        uri = meta.get(DATABASE_KEY) if isinstance(meta, dict) else None
        return _asked.set(uri) if isinstance(uri, str) and uri and "\x00" not in uri else None

    @staticmethod
    def done(token: Any) -> None:
        if token is not None:
            _asked.reset(token)

    def get(self) -> Engine:
        uri = _asked.get() or self._settings.db_uri
        key = _key(uri)  # `~/db` and the folder it names are one database, opened once
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                self._open.move_to_end(key)
                return found
            same = key == _key(self._settings.db_uri)
            engine = Engine(self._settings if same else dataclasses.replace(self._settings, db_uri=uri))
            if uri and is_local(uri) and not os.path.isdir(local_path(uri)):
                return engine  # its error, for this call only
            self._open[key] = engine
            while len(self._open) > MAX_OPEN:
                self._open.popitem(last=False)
            if self._on_change is not None:  # under the lock: the record follows the order of changes
                self._on_change([display_uri(u) for u in self._open if u])
        return engine


def _key(uri: str | None) -> str | None:
    """The database ``uri`` names, as one spelling (lancelot_cli/location.py): the key of an open engine."""
    from lancelot_cli.location import Location

    return Location.parse(uri).uri if uri else None
