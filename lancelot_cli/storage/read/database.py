"""Read-only access to a LanceDB database: open, list, count, search, as plain rows. No write call exists here.

The connection uses ``read_consistency_interval=0`` so every read sees the latest committed
version: a server that keeps running sees a table that `lancelot index` rebuilt meanwhile.
A local database folder must exist already: ``lancedb.connect`` would create it, so we check first.
Each table is a ``ReadOnlyTable`` (storage/read/table.py, re-exported here with ``fts_query``).
A table given a pin (``LANCELOT_TABLE_VERSION``: a version number or a tag, storage/read/pins.py) is a
``PinnedTable``: read at that version, whatever is committed after it, until the tag moves.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NoReturn

from lancelot_cli.errors import ConfigError, DatabaseNotFoundError, TableNotFoundError
from lancelot_cli.storage import damage
from lancelot_cli.storage.read import pins
from lancelot_cli.storage.read.facts import TableFacts, VectorColumn, table_facts, table_names
from lancelot_cli.storage.read.filters import RowFilter
from lancelot_cli.storage.read.table import ANN_CANDIDATES, ANN_NPROBES, ReadOnlyTable, fts_query
from lancelot_cli.storage.schema import contents_path, describe_path, is_local, languages_path, local_path

__all__ = [
    "ANN_CANDIDATES",
    "ANN_NPROBES",
    "PinnedTable",
    "ReadOnlyDatabase",
    "ReadOnlyTable",
    "RowFilter",
    "TableFacts",
    "VectorColumn",
    "display_uri",
    "fts_query",
    "quick_table_names",
    "store_kind",
    "warm_up",
]

Row = dict[str, Any]
# A ``_versions`` folder unchanged for this long (ns) has no commit its modification time may hide
# (file systems keep it in steps of a few ms).
SETTLED_NS = 1_000_000_000


def store_kind(uri: str) -> str:
    """ "local", or the URI scheme ("s3", "gs", "az", "memory"...)."""
    return "local" if is_local(uri) else uri.split("://", 1)[0].lower()


def display_uri(uri: str) -> str:
    """The URI without any user:password part (never show a secret)."""
    if "://" not in uri:
        return uri
    scheme, rest = uri.split("://", 1)
    if "@" in rest.split("/", 1)[0]:
        rest = rest.split("@", 1)[1]
    return f"{scheme}://{rest}"


def _store_problem(uri: str, exc: Exception) -> str:
    text = " ".join(str(exc).split())
    shown = display_uri(uri)
    if "404" in text or "NoSuchBucket" in text or "not found" in text.lower():
        why = "the bucket (or container) does not exist"
    elif "403" in text or "AccessDenied" in text or "credential" in text.lower() or "401" in text:
        why = "access was refused: check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"
    elif "connect" in text.lower() or "dns" in text.lower() or "timed out" in text.lower():
        why = "the object store cannot be reached: check AWS_ENDPOINT_URL, AWS_REGION and the network"
    else:
        why = text[:200]
    return f"cannot open the database {shown}: {why}"


class PinnedTable(ReadOnlyTable):
    """A table read at the version its pin names (``pin``); ``latest_version`` is the one committed last."""

    def __init__(self, name: str, table: Any, pin: pins.Pin, latest: Any) -> None:
        super().__init__(name, table)
        self.pin = pin
        self._latest = latest  # a handle on the latest version, which the pin's tag is looked up on

    def latest_version(self) -> int:
        return int(self._latest.version)

    def updated_at(self) -> str | None:
        """When the pinned version was written (ISO 8601)."""
        version = self.version
        stamp = next((v["timestamp"] for v in self._table.list_versions() if int(v["version"]) == version), None)
        if stamp is None:
            return None
        return stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp)


@dataclass(frozen=True)
class _Pinned:
    table: PinnedTable
    checked: float  # time.monotonic() of the last look at what the pin names


_SESSIONS: dict[int, Any] = {}  # cap in MiB -> this process's lancedb.Session with that cap
_SESSIONS_LOCK = threading.Lock()


def _session(index_cache_mb: int) -> Any:
    """One LanceDB session per cap in a process for local folders: databases open side by side (the
    CLI's background server keeps three, server/databases.py) share one cap of index and metadata
    caches instead of holding one each. LanceDB keys its cache entries by dataset, so sharing
    changes no answer. Not for object stores: see ``ReadOnlyDatabase``."""
    import lancedb

    with _SESSIONS_LOCK:
        if index_cache_mb not in _SESSIONS:
            _SESSIONS[index_cache_mb] = lancedb.Session(index_cache_size_bytes=index_cache_mb << 20)
        return _SESSIONS[index_cache_mb]


class ReadOnlyDatabase:
    """A LanceDB database opened for reading; table handles are kept (see ``table``).

    Args:
        uri: a folder, or an object-store URI (``s3://bucket/prefix``, ``gs://``, ``az://``...).
        consistency: seconds between checks for a newer table version (0: every read checks).
        storage_options: extra object-store options; credentials and endpoints also come from the
            standard variables (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``...).
        index_cache_mb: the most index data LanceDB keeps in memory, in MiB (None: LanceDB's 6 GiB).
            A long-running server reads posting lists and vector partitions into this cache and,
            uncapped, keeps every one it has read: on a 1M-chunk table 245 MiB after 100 searches
            and growing with each new word. Frequently read entries stay (LanceDB's cache admits
            and evicts by use): with a 128 MiB cap, text and vector searches kept their speed,
            while repeated words are read again (hybrid +13 %, a run asking each query twice +40 %;
            tests/benchmarks/README.md, "1M chunks", run D).
        table_versions: table name -> the version number or tag it is read at (``LANCELOT_TABLE_VERSION`` for
            the default table); a tag is looked up again every ``consistency`` seconds, so a
            reader follows a tag that `lancelot index --tag` moved, from one whole version to the next.
    """

    def __init__(
        self,
        uri: str,
        consistency: float = 0.0,
        storage_options: dict[str, str] | None = None,
        index_cache_mb: int | None = None,
        table_versions: Mapping[str, str | None] | None = None,
    ) -> None:
        if is_local(uri):
            path = local_path(uri)
            if not os.path.isdir(path):
                what = "is not a folder" if os.path.exists(path) else "does not exist"
                raise DatabaseNotFoundError(
                    f"database folder {path} {what}; set LANCEDB_PATH (or --db) to the folder "
                    f"`lancelot index SRC DB` wrote, or create it with `lancelot index`"
                )
        import lancedb

        self.uri = uri
        self._consistency = consistency
        self._pins = {name: pin for name, raw in (table_versions or {}).items() if (pin := pins.parse(raw)) is not None}
        self._pinned: dict[str, _Pinned] = {}
        self._pin_lock = threading.Lock()
        self._open: dict[str, ReadOnlyTable] = {}
        # name -> (folder identity, version, facts): reading a schema and index list on every call
        # costs more than the search itself.
        self._facts: dict[str, tuple[Any, int, TableFacts]] = {}
        self._handles: dict[str, tuple[Any, Any]] = {}  # name -> (folder identity, LanceDB table)
        try:
            # For object stores connect lists the prefix: a wrong bucket or bad credentials fail here.
            # Local folders share one session per cap; an object store gets its own: a session
            # also keeps the object stores it opened, with the credentials they were opened with,
            # and a later database without credentials read the first one's through them.
            if not index_cache_mb:
                self._session = None
            elif is_local(uri):
                self._session = _session(index_cache_mb)
            else:
                self._session = lancedb.Session(index_cache_size_bytes=index_cache_mb << 20)
            self._db = lancedb.connect(
                uri,
                read_consistency_interval=timedelta(seconds=consistency),
                storage_options=storage_options or None,
                session=self._session,
            )
        except (ValueError, OSError, RuntimeError) as exc:
            raise DatabaseNotFoundError(_store_problem(uri, exc)) from None

    def index_cache_bytes(self) -> int | None:
        """Bytes LanceDB's caches hold for this database and any other opened with the same cap in
        this process (index and file metadata), or None when it uses LanceDB's shared default
        session (no ``index_cache_mb``)."""
        return None if self._session is None else int(self._session.size_bytes)

    def table_names(self) -> list[str]:
        return table_names(self._db)

    def table(self, name: str) -> ReadOnlyTable:
        """Open a table. On an object store the handle is kept: opening costs requests, and the
        handle itself picks up new versions every ``consistency`` seconds. A folder's table handle
        is kept while its folder is the same one (device, inode and change time: a table rebuilt and
        renamed into place, or removed, is opened again); each call gets the facts of the version
        it sees, worked out once per version."""
        if name in self._pins:
            return self._pinned_table(name, self._pins[name])
        if name in self._open:
            return self._open[name]
        if "\x00" in name:  # no table can be named so (the file system refuses the name)
            self._not_found(name)
        identity = self._folder_identity(name) if is_local(self.uri) else None
        kept = self._handles.get(name) if identity is not None else None
        if kept is not None and kept[0] == identity:
            handle = kept[1]
        else:
            handle = self._open_table(name)
            if identity is not None:
                self._handles[name] = (identity, handle)
        table = ReadOnlyTable(name, handle)
        if not is_local(self.uri):
            self._open[name] = table
        elif identity is not None:
            self._pin_facts(name, table, identity)
        return table

    def _pinned_table(self, name: str, pin: pins.Pin) -> PinnedTable:
        """``name`` at the version ``pin`` names: the kept handle while that is the same version (a
        version number never changes; a tag is looked up again after ``consistency`` seconds), else
        a new handle checked out at it (a call still reading the old one finishes on it)."""
        with self._pin_lock:
            kept = self._pinned.get(name)
            now = time.monotonic()
            if kept is not None and (pin.number is not None or now - kept.checked < self._consistency):
                return kept.table
            latest = kept.table._latest if kept is not None else self._open_table(name)
            version = pins.resolve(latest, name, pin)
            if kept is not None and kept.table.version == version:
                self._pinned[name] = _Pinned(kept.table, now)
                return kept.table
            handle = self._open_table(name)
            try:
                handle.checkout(version)
            except (OSError, RuntimeError, ValueError):  # given up by a cleanup since it was looked up
                raise ConfigError(pins.unknown(latest, name, pin)) from None
            table = PinnedTable(name, handle, pin, latest)
            self._pinned[name] = _Pinned(table, now)
            return table

    def _open_table(self, name: str) -> Any:
        try:
            return self._db.open_table(name)
        except (ValueError, FileNotFoundError) as exc:
            message = str(exc).lower()
            if (
                "not found" not in message
                and "invalid table name" not in message
                and not isinstance(exc, FileNotFoundError)
            ):
                raise
            self._not_found(name)
        except Exception as exc:  # a manifest cut short, say
            if damage.is_damage(exc):
                raise damage.damaged(name, exc) from exc
            raise

    def _not_found(self, name: str) -> NoReturn:
        existing = self.table_names()
        hint = (
            f"tables here: {', '.join(existing)}"
            if existing
            else "this database has no tables yet; run `lancelot index SRC DB`"
        )
        raise TableNotFoundError(f"table {name!r} not found in {display_uri(self.uri)}; {hint}") from None

    def _folder_identity(self, name: str) -> tuple[int, int, int] | None:
        """The table folder's device, inode and change time; None when it cannot be told (then
        the table is opened for this call only)."""
        if not name or name.startswith(".") or os.sep in name or (os.altsep and os.altsep in name):
            return None
        try:
            stat = os.stat(os.path.join(local_path(self.uri), f"{name}.lance"))
        except OSError:
            return None
        return stat.st_dev, stat.st_ino, stat.st_ctime_ns

    def _pin_facts(self, name: str, table: ReadOnlyTable, identity: tuple[int, int, int]) -> None:
        """Give the call's table the facts of the version it sees, reused while the folder and
        version are the same (reading a schema and index list costs more than the search). Each
        commit adds a file to ``_versions``: while that folder's modification time is the same and
        more than SETTLED_NS old, the version has not changed and is not asked for (a round trip)."""
        try:
            versions = os.stat(os.path.join(local_path(self.uri), f"{name}.lance", "_versions")).st_mtime_ns
        except OSError:
            versions = None
        key = (identity, versions)
        cached = self._facts.get(name)
        if cached is not None and cached[0] == key and versions is not None and time.time_ns() - versions > SETTLED_NS:
            version, facts = cached[1], cached[2]
        else:
            version = table.version
            if cached is not None and cached[0][0] == identity and cached[1] == version:
                facts = cached[2]
            else:
                facts = table_facts(name, table._table)
            self._facts[name] = (key, version, facts)
        table._facts = (version, facts)
        table._pinned = True


def quick_table_names(uri: str) -> list[str] | None:
    """A local database's table names from its folder listing, without importing lancedb (for the
    server's instructions, sent before anything heavy is loaded); None for an object store.
    Raises OSError when the folder cannot be read."""
    if not is_local(uri):
        return None
    return sorted(name[: -len(".lance")] for name in os.listdir(local_path(uri)) if name.endswith(".lance"))


def quick_descriptions(uri: str, table: str) -> dict[str, str]:
    """The folder descriptions `lancelot index` copied beside a local table (``schema.describe_path``),
    read without lancedb; {} when there are none or they cannot be read."""
    path = describe_path(uri, table)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def quick_contents(uri: str, table: str) -> dict[str, int]:
    """How many of a local table's documents are code, tests, migrations and decision records
    (``schema.contents_path``), read without lancedb; {} when none or unknown."""
    path = contents_path(uri, table)
    try:
        with open(path, encoding="utf-8") as fh:  # type: ignore[arg-type]
            data = json.load(fh)
    except (OSError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


def quick_languages(uri: str, table: str) -> list[str]:
    """The languages `lancelot index` found in a local table's documents (``schema.languages_path``),
    read without lancedb; [] when unknown."""
    path = languages_path(uri, table)
    try:
        with open(path, encoding="utf-8") as fh:  # type: ignore[arg-type]
            data = json.load(fh)
    except (OSError, ValueError, TypeError):
        return []
    return [str(code) for code in data] if isinstance(data, list) else []


def warm_up() -> None:
    """Import lancedb now (~1.5 s), e.g. in a background thread, so a first search does not wait for it."""
    with contextlib.suppress(Exception):  # the first real call reports any problem
        import lancedb  # noqa: F401
