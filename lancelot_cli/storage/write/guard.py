"""What a failed write says (one IndexingError naming the table), room made again after a full disk,
and how long old versions stay.

Every storage error of a write becomes one message: a full or read-only disk, a damaged table,
anything else (``guard``).

Old versions (issue 46 item 4). Each commit leaves the files of the version before it for a reader
still on it; LanceDB removes them only in ``optimize()``, and by default only after 7 days. 17
quick re-indexes of a 3 MB source kept 37 versions (107 MB), and a disk they filled stayed full:
the step that found it full was retried after ``optimize(cleanup_older_than=0)``, but
``optimize()`` compacts (writes) before it prunes, so on a full disk it failed too (swallowed), the
versions stayed (19 versions, 24 index folders, 20 MB of a 26 MB tmpfs, where the table itself
needs 6) and every later run failed the same way, one with unchanged text too. So:

- Ordinary runs (``keep_bounded``): each time the writer's ``optimize()`` ran and versions older
  than ``LANCELOT_KEEP_VERSIONS_FOR`` (storage.write.policy.keep_versions_for, 10 minutes) exist, one
  more ``optimize(cleanup_older_than=...)`` gives them up. Right after the writer's it has at most
  what that one could not merge yet (it folds new rows into the indexes after it compacts; the next
  run's would merge them): 2-6 ms at 25,000 chunks, and six re-indexes of 400 chunks there took
  16.5 s and left 20 MB and 1 version, against 18.1 s, 140 MB and 17 versions kept. (Passing
  ``cleanup_older_than`` to the writer's own ``optimize()`` would save the second call.)
- A full disk (``with_room``): first the files the latest version does not use are removed
  (``unused``): the old versions' data files and index folders, and whatever a failed step left.
  That frees the space without writing anything. Then ``optimize(cleanup_older_than=0,
  delete_unverified=True)``, which now has room to compact, removes the rest of the old versions
  (manifests, deletion files), and the step is tried once more. On the tmpfs above (300 KB
  free) the run that found the disk full then succeeded, and so did the next ones: 5 versions, 12
  index folders, 9.7 MB and 11 MB free were left. Until that ``optimize()`` has pruned, the older
  manifests name files that are gone: such a version can no longer be checked out (Lancelot never
  does), as after LanceDB's own cleanup.

Why not otherwise (lancedb 0.40 and 0.41): (1) no public call prunes without compacting first:
``LanceTable.cleanup_old_versions`` goes through ``to_lance()``, which needs pylance; the async
table and the native ``Table`` have only ``optimize()`` (compact, prune, fold, in that order); 0.41
adds ``compaction_options``, which might make the compaction a no-op, but 0.40 has none. (2) A
failed step's own files were not what held the disk: LanceDB removed them as the step failed (the
same files and the same free space before and after a failed merge), so removing the files made
since the step began freed nothing (``unused`` takes such leftovers too, when there are any).
(3) Keeping fewer versions (above) makes a full disk rarer, but a disk can still fill within the
kept time.

Why ``unused`` cannot remove a file the latest version uses. Lance writes each version's manifest,
with its fragments' data file names and its indexes' uuids, into one file under ``_versions/``;
a data file whose name is not in the latest manifest's bytes, an index folder whose uuid is in them
neither as 16 bytes nor as text, is not used by it. The bytes are read for names only, never
parsed, and two checks against lancedb's own account guard the reading: the data files found must
be as many as the version's ``total_data_files``, and every index ``list_indices()`` names must be
found; otherwise nothing is removed. Nothing is removed either when the table has tags or branches
(``_refs/``: their versions would lose files), when it is not the handle's own version (another
writer), or outside a local folder. The run holds the writer lock (storage/write/lock.py), so no other
transaction is in progress; a search under way on an older version fails, and the next one reads
the latest, as after LanceDB's own cleanup.

Used by the writer only (storage/write/table.py and the parts it is made of), never by the server.
"""

from __future__ import annotations

import contextlib
import shutil
import uuid
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage import damage, disk
from lancelot_cli.storage.schema import is_local, local_path
from lancelot_cli.storage.write.policy import keep_versions_for

T = TypeVar("T")

_MAX_VERSION = (1 << 64) - 1  # Lance's v2 manifest names count down from here


def guard(action: str, db_uri: str, table: str):  # type: ignore[no-untyped-def]
    """Turn storage errors into one IndexingError that names the table."""
    from contextlib import contextmanager

    @contextmanager
    def wrapped():  # type: ignore[no-untyped-def]
        try:
            yield
        except IndexingError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            full_or_read_only = disk.problem(exc, db_uri)
            if full_or_read_only:
                raise IndexingError(full_or_read_only) from exc
            if damage.is_damage(exc):
                raise IndexingError(
                    f"could not {action} table {table!r} in {db_uri}: it is damaged "
                    f"({damage.plain(str(exc))}); build it again with `lancelot index SRC DB "
                    f"--rebuild`"
                ) from exc
            detail = " ".join(str(exc).split())
            raise IndexingError(f"could not {action} table {table!r} in {db_uri}: {detail}") from exc

    return wrapped()


def with_room(tbl: Any, db_uri: str, step: Callable[[], T], *, committed: bool = False) -> T:
    """``step()``; when it fails because the disk is full, give up the table ``tbl``'s older versions
    and what failed steps left (``make_room``), then try it once more (issue 37 item 7, issue 46
    item 4: the old versions held the disk full for every later run).
    ``committed``: the step is the ``optimize()`` after the run's commit, which stands (its error
    says so); when it ran (returned true), versions older than the kept time go (``keep_bounded``)."""
    try:
        done = step()
    except IndexingError as exc:
        cause = exc.__cause__
        if cause is None or not disk.is_full(cause) or tbl is None or not is_local(db_uri):
            raise
        make_room(tbl, db_uri)
        try:
            done = step()
        except IndexingError as again:
            cause = again.__cause__
            if not committed or cause is None or not disk.is_full(cause):
                raise
            raise IndexingError(disk.problem(cause, db_uri, committed=True) or str(again)) from cause
    if committed and done is True:
        keep_bounded(tbl)
    return done


def keep_bounded(tbl: Any, keep: timedelta | None = None) -> None:
    """Give up the versions of ``tbl`` committed more than ``keep`` ago (None: the setting), the
    latest excepted, when there are any. Called right after an ``optimize()``, so this one has
    little to compact: only fragments that the first could not merge yet because its folding came
    after its compaction (the next run's would merge them). Best effort: the run's work is done and
    stays whatever happens here."""
    keep = keep_versions_for() if keep is None else keep
    with warnings.catch_warnings(), contextlib.suppress(OSError, RuntimeError, ValueError, NotImplementedError):
        warnings.simplefilter("ignore")  # lancedb's warning about 0 (the setting's choice) is no line for stderr
        versions = tbl.list_versions()
        latest = max(int(v["version"]) for v in versions)
        cutoff = datetime.now() - keep  # lancedb gives local times without a zone
        if any(int(v["version"]) != latest and v["timestamp"] < cutoff for v in versions):
            tbl.optimize(cleanup_older_than=keep)


def make_room(tbl: Any, db_uri: str) -> None:
    """Free the disk under the local table ``tbl`` without writing first: remove the files its latest
    version does not use, then let ``optimize()`` give up every older version (it compacts first,
    which now has room); if that fails all the same, remove what it left."""
    root = _table_folder(tbl, db_uri)
    if root is None:
        return
    _remove(unused(tbl, root))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cleanup_older_than=0 removes every version except the latest"
        try:
            tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
        except Exception:  # noqa: BLE001 - best effort: no room to compact even now, say
            _remove(unused(tbl, root))


def unused(tbl: Any, root: Path) -> list[Path]:
    """The data files and index folders in the table folder ``root`` that the latest version of
    ``tbl`` does not use; none when that cannot be told for sure (see the module's docstring)."""
    try:
        if (root / "_refs").exists() and any(path.is_file() for path in (root / "_refs").rglob("*")):
            return []  # tags or branches: versions that must keep their files
        versions = tbl.list_versions()
        latest = max(versions, key=lambda v: int(v["version"]))
        number = int(latest["version"])
        manifest = _manifest(root, number)
        expected = (latest.get("metadata") or {}).get("total_data_files")
        if manifest is None or expected is None or number != int(tbl.version):
            return []
        text = manifest.read_bytes()
        data = sorted(p for p in (root / "data").iterdir() if p.is_file()) if (root / "data").is_dir() else []
        used = {p for p in data if p.name.encode() in text}
        indexes = sorted((root / "_indices").iterdir()) if (root / "_indices").is_dir() else []
        kept = {p.name for p in indexes if _named_in(p.name, text)}
        named = {str(index.index_uuid) for index in tbl.list_indices() if getattr(index, "index_uuid", None)}
        if len(used) != int(expected) or not named <= kept:
            return []
    except (OSError, RuntimeError, ValueError, KeyError, TypeError):
        return []
    return [p for p in data if p not in used] + [p for p in indexes if p.name not in kept]


def _named_in(name: str, text: bytes) -> bool:
    """Whether the index folder ``name`` is in the manifest bytes ``text``: its uuid as 16 bytes (how
    Lance stores it) or as text. A name that is no uuid counts as named (it is kept)."""
    try:
        raw = uuid.UUID(name).bytes
    except ValueError:
        return True
    return raw in text or name.encode() in text


def _manifest(root: Path, version: int) -> Path | None:
    """The manifest file of ``version``: named by ``MAX - version`` (v2 paths) or by the version."""
    for name in (f"{_MAX_VERSION - version:020d}.manifest", f"{version}.manifest"):
        path = root / "_versions" / name
        if path.is_file():
            return path
    return None


def _table_folder(tbl: Any, db_uri: str) -> Path | None:
    root = Path(local_path(db_uri)) / f"{tbl.name}.lance"
    return root if root.is_dir() else None


def _remove(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
