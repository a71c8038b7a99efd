"""Where the database is: a folder path or an object-store URI, parsed once (issue 48 #2).

Every command, the background client and ``serve`` read the database location through
``Location.parse``: ``Settings.database`` for LANCEDB_PATH and ``--db``, the index job for its DB
argument, storage/schema.py ``is_local``/``local_path`` for the storage helpers. So the same string
names the same database everywhere: ``~`` and ``~user`` are expanded (an MCP client passes
LANCEDB_PATH without a shell, with no shell to expand it), ``file://`` is dropped (``file://~/db``
too), and a relative path is made absolute against the working folder of the process that parsed
it (the background client sends that, never the words typed). An object-store URI (``s3://``,
``gs://``, ``az://``, ``memory://``...) is kept as given: lancedb reads it. What a person reads
(`status`, the index report) stays the words given, ``~`` expanded. Standard library only: the
settings and the background client import it before anything heavy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

FILE_SCHEME = "file://"


@dataclass(frozen=True)
class Location:
    """A parsed database location. ``uri`` is what lancedb.connect and every path helper get: an
    absolute folder path for a local database, the URI as given for an object store."""

    uri: str
    # The given path was relative: it names a database only together with the folder it was read in.
    relative: bool = field(default=False, compare=False)
    # A local path as given (``file://`` dropped, ``~`` expanded, relative kept): what storage's
    # ``local_path`` has always returned, and (``display``) the words a command's report prints.
    given: str = field(default="", compare=False)

    @classmethod
    def parse(cls, raw: str, cwd: str | os.PathLike[str] | None = None) -> Location:
        """The location ``raw`` names, a relative path read against ``cwd`` (default: the working folder)."""
        text = raw.strip()
        if "://" in text and not text.startswith(FILE_SCHEME):
            return cls(text)
        path = os.path.expanduser(text[len(FILE_SCHEME) :] if text.startswith(FILE_SCHEME) else text)
        if os.path.isabs(path):  # the working folder only when needed
            return cls(os.path.normpath(path), False, path)
        try:
            folder = os.fspath(cwd) if cwd is not None else os.getcwd()
        except OSError:  # the working folder is gone: the path stays relative, and opening it says so
            return cls(os.path.normpath(path), True, path)
        return cls(os.path.normpath(os.path.join(folder, path)), True, path)

    @property
    def is_local(self) -> bool:
        """True for a folder on this machine; False for an object store."""
        return "://" not in self.uri

    @property
    def folder(self) -> Path:
        """The local database's folder (absolute); a ValueError for an object store."""
        if not self.is_local:
            raise ValueError(f"{self.display} is an object store, not a folder")
        return Path(self.uri)

    @property
    def scheme(self) -> str:
        """ "local", or the object store's scheme in lower case ("s3", "gs", "az", "memory"...)."""
        return "local" if self.is_local else self.uri.split("://", 1)[0].lower()

    @property
    def display(self) -> str:
        """The location as a person gave it: a local path with ``~`` expanded (relative stays
        relative), a URI without any ``user:password@``."""
        if self.is_local:
            return str(Path(self.given or self.uri))
        scheme, rest = self.uri.split("://", 1)
        host, sep, tail = rest.partition("/")
        return f"{scheme}://{host.rsplit('@', 1)[-1]}{sep}{tail}"

    def __str__(self) -> str:
        return self.uri
