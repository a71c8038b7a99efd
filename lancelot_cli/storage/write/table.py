"""The only code that writes a LanceDB table (with its parts named below); never used by the server.

How a write stays safe for a reader that runs meanwhile (STACK.md §3, verified there):
1. A new table in a local folder is built whole (its rows, then its full-text indexes) in a hidden
   staging folder and moved into place with one rename, so a reader sees no table, then all of it,
   never an empty or unindexed one (storage/write/first_write.py, which builds it with little memory).
   (Object stores have no rename: there the table is created empty and indexed at once, then
   filled as below.)
2. Every write of rows is one ``merge_insert`` commit: rows whose hash changed (or that still lack
   a vector) are updated, new ones inserted, rows no longer in the folder deleted. A reader sees
   the old content or the new one.
3. ``optimize()`` (compaction, and folding new rows into the full-text indexes: it rewrites each
   index whole) runs only when it pays (``OptimizePolicy``): a full-text search also scans the rows
   an index does not cover yet, and rows deleted or replaced are hidden at once, so a search right
   after a commit already finds the new words and not the removed ones (tests/test_deferred_optimize.py).
   It keeps versions younger than 7 days, so a reader still on the previous version is not broken;
   only a step that finds the disk full gives them up, with what failed writes left, and tries
   again (``write.guard.with_room``).
A run that finds nothing changed commits nothing.

Vectors (``index --embed``) live in a ``vector`` column whose field metadata records the model
(``lancedb:tag:model``); vectors of unchanged chunks are reused by content hash.

The writer is made of parts, one job each: storage/write/new_table.py (where a new table comes from),
storage/write/existing_table.py (an existing table checked as it is opened), storage/write/vectors.py
(the vector column), storage/write/notes.py (what is kept besides the rows) and
storage/write/guard.py (what a failed write says, the retry after a full disk).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage import damage
from lancelot_cli.storage.analyzer import LANGUAGE_OF_COLUMN, fts_config, fts_options, text_languages
from lancelot_cli.storage.read.facts import fts_columns, is_fts, table_names
from lancelot_cli.storage.schema import (
    CHUNK,
    FIELD_INDEX_NAMES,
    FILE_HASH,
    FILE_MTIME,
    FILE_SIZE,
    FILE_STATE,
    FTS_INDEX_NAME,
    HASH,
    ID,
    PATH,
    TEXT,
    VECTOR,
    is_local,
)
from lancelot_cli.storage.write import ann
from lancelot_cli.storage.write.columns import (
    OWN_COLUMNS,
    complete,
    fts_outdated,
    infer_type,
    sql_string,
)
from lancelot_cli.storage.write.existing_table import open_checked
from lancelot_cli.storage.write.first_write import create_row_text_index, row_text_columns
from lancelot_cli.storage.write.guard import guard, with_room
from lancelot_cli.storage.write.new_table import build_in_place
from lancelot_cli.storage.write.new_table import create_indexed as _create_indexed  # (tests build with it)
from lancelot_cli.storage.write.notes import TableNotes
from lancelot_cli.storage.write.policy import OPTIMIZE_POLICY, VECTOR_INDEX_POLICY, OptimizePolicy, VectorIndexPolicy
from lancelot_cli.storage.write.vectors import VectorWrites


@dataclass(frozen=True)
class WriteResult:
    added: int
    updated: int
    deleted: int
    version: int
    committed: bool
    optimized: bool = False  # optimize() ran after the commit, or the vector index was built (see storage.policy)


class TableWriter(VectorWrites, TableNotes):
    """Opens one table for writing and makes it hold exactly the rows given. A table that does not
    exist yet is created by the first ``write`` (so a run that fails before it leaves nothing).
    ``vector_policy`` says when the vector column gets its ANN index (tests lower its threshold)."""

    def __init__(
        self,
        db_uri: str,
        table: str,
        storage_options: dict[str, str] | None = None,
        vector_policy: VectorIndexPolicy = VECTOR_INDEX_POLICY,
        *,
        replace_damaged: bool = False,
        checked: bool = False,
    ) -> None:
        """``replace_damaged`` (``--rebuild``): a local table whose files are missing or unreadable
        (storage/damage.py) is not opened; the first write builds the new one aside and puts it in
        its place (``_write_first``), as for a new table. ``checked``: the table's files are as a
        run of this code left them (indexer/ledger.py), so reading for damage, looking for missing
        columns and for outdated full-text indexes would find nothing: skipped (~0.1 s and more
        on a large table)."""
        import lancedb

        self.db_uri, self.name = db_uri, table
        self.vector_policy = vector_policy
        self.indexes_built: list[str] = []  # full-text indexes (re)built on opening: missing or outdated
        self._storage_options = storage_options
        self._tbl: Any = None
        self._fts: dict[str, Any] | None = None
        self.damaged = False  # a damaged table found with replace_damaged: written anew
        with guard("open", db_uri, table):
            self._db = lancedb.connect(db_uri, storage_options=storage_options or None)
            if checked:
                with damage.said(table):
                    self._tbl = self._db.open_table(table)
                return
            if table in table_names(self._db):  # every page: lancedb lists 10 names by default
                opened, broken = open_checked(self._db, db_uri, table)
                if broken is not None:
                    if not (replace_damaged and is_local(db_uri)):  # else "no changes" while searches fail
                        raise broken
                    self.damaged = True
                    return
                self._tbl = opened
                self.indexes_built.extend(self.rebuild_text_indexes())

    @property
    def fts(self) -> dict[str, Any]:
        """How this table's full-text indexes analyze words: for the languages saved with it
        (``use_languages`` sets others for the run's commit)."""
        if self._fts is None:
            saved = self.index_options()
            self._fts = fts_options(text_languages(saved.get("languages") or [], bool(saved.get("rowLanguages"))))
        return self._fts

    def use_languages(self, languages: Sequence[str], rows_apart: bool = False) -> None:
        """Build the table's full-text indexes for ``languages`` (most first): a new table's at its
        first write, an existing one's by ``rebuild_text_indexes``. ``rows_apart``: rows of other
        languages have their own columns (``analyzer.text_languages``)."""
        self._fts = fts_options(text_languages(languages, rows_apart))

    def rebuild_text_indexes(self) -> list[str]:
        """Build each full-text index that is missing or was built with other options than ``fts``
        (a table of an earlier Lancelot; another language); the columns rebuilt."""
        if self._tbl is None:
            return []
        built = []
        indexed = fts_columns(self._tbl)
        for column, index_name in ((TEXT, FTS_INDEX_NAME), *FIELD_INDEX_NAMES.items()):
            if column not in indexed or fts_outdated(self._tbl, column, self.fts):
                # Building the new index is one commit: readers keep the old one until then
                # (and search the text alone while a table has no title/heading/path index).
                with guard("write", self.db_uri, self.name):
                    self._tbl.create_index(column, config=fts_config(self.fts), name=index_name, replace=True)
                built.append(column)
        for column in row_text_columns(self._tbl.schema.names):
            if column not in indexed or fts_outdated(self._tbl, column, fts_options([LANGUAGE_OF_COLUMN[column]])):
                with guard("write", self.db_uri, self.name):
                    create_row_text_index(self._tbl, column)
                built.append(column)
        return built

    def sample_texts(self, count: int) -> list[str]:
        """The text of up to ``count`` rows, spread over the table (what its languages are read from)."""
        if self._tbl is None:
            return []
        rows = self._tbl.count_rows()
        offsets = list(range(0, rows, max(1, rows // count)))[:count]
        if not offsets:
            return []
        data = self._tbl.take_offsets(offsets).select([TEXT]).to_arrow()
        return [str(text or "") for text in data.column(TEXT).to_pylist()]

    # -- what is there ------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self._tbl is not None

    @property
    def version(self) -> int:
        return int(self._tbl.version) if self._tbl is not None else 0

    def count(self) -> int:
        return int(self._tbl.count_rows()) if self._tbl is not None else 0

    def existing(self, paths: set[str] | None = None) -> list[dict[str, Any]]:
        """Every row's id, path, hash and the state of its file (size, mtime, content hash); with
        ``paths``, only the rows of those files (a small re-index reads a few rows, not the table)."""
        if self._tbl is None or (paths is not None and not paths):
            return []
        columns = [ID, PATH, HASH, *(c for c in FILE_STATE if c in self._tbl.schema.names)]
        search = self._tbl.search()
        if paths is not None:
            search = search.where(f"{PATH} IN ({', '.join(map(sql_string, sorted(paths)))})")
        with guard("read", self.db_uri, self.name):
            return search.select(columns).limit(None).to_arrow().to_pylist()

    def file_state(self) -> dict[str, tuple[int | None, int | None, str | None]]:
        """path -> (size, mtime in ns, content hash) as recorded at the last write, read from each
        file's first chunk (every chunk of a file carries the same state; one commit writes them)."""
        if self._tbl is None:
            return {}
        columns = [PATH, *(c for c in FILE_STATE if c in self._tbl.schema.names)]
        with guard("read", self.db_uri, self.name):
            rows = self._tbl.search().where(f"{CHUNK} = 0").select(columns).limit(None).to_arrow().to_pylist()
        return {row[PATH]: (row.get(FILE_SIZE), row.get(FILE_MTIME), row.get(FILE_HASH)) for row in rows}

    def unindexed(self) -> int:
        """Rows that some full-text index, or the vector index, of the table does not cover yet
        (searched by a scan)."""
        if self._tbl is None:
            return 0
        with guard("read", self.db_uri, self.name):
            return max(
                (
                    int(getattr(index, "num_unindexed_rows", 0) or 0)
                    for index in self._tbl.list_indices()
                    if is_fts(index) or ann.is_vector_index(index)
                ),
                default=0,
            )

    def optimize(self, *, force: bool = False, policy: OptimizePolicy = OPTIMIZE_POLICY) -> bool:
        """Compact the table and fold its unindexed rows into the full-text and vector indexes when
        ``policy`` says it pays, or with ``force`` when there is anything to fold or compact (an idle
        watcher); then build the vector index if ``vector_policy`` says so (after compaction, so
        the new index needs no remapping). True if anything ran; otherwise the table is left
        untouched (no new version)."""
        if self._tbl is None:
            return False
        unindexed = self.unindexed()
        with guard("read", self.db_uri, self.name):
            stats = self._tbl.stats()
        fragments, rows = int(stats["fragment_stats"]["num_small_fragments"]), int(stats["num_rows"])
        due = policy.due(rows, unindexed, fragments) or (force and (unindexed or fragments > 1))
        with guard("write", self.db_uri, self.name):
            if due:
                self._tbl.optimize()  # (compaction and folding: the row count stays)
            built = ann.maintain(self._tbl, self.vector_policy, rows)
        return bool(due or built)

    # -- writing ------------------------------------------------------------------------------

    def write(
        self,
        rows: Sequence[dict[str, Any]],
        *,
        paths: set[str] | None = None,
        model: str | None = None,
        dimension: int | None = None,
        release: bool = False,
        options: dict[str, Any] | None = None,
    ) -> WriteResult:
        """Write ``rows`` in one commit (matched by ``id``; a row is rewritten only when its chunk hash,
        its file's state or a vector it gains says so). Vectors still missing are given later, by
        ``set_vectors`` (the indexer commits text first).

        Args:
            rows: with ``paths`` None, the whole content of the table; otherwise every row of the
                files named in ``paths`` (files in ``paths`` with no rows are deleted).
            paths: the files this write replaces, or None for all of them.
            model, dimension: with ``model``, rows carry a ``vector`` (None where there is none yet)
                and the column records the model; a new model or size replaces the column.
            release: the caller gives ``rows`` (a list) up: the first write of a new local table
                empties it as it writes, so the rows' objects are freed early (storage/write/first_write.py);
                other writes leave it as it is.
            options: the run's index options, kept with a new local table as it is made (no commit
                of ``save_index_options`` then); other writes leave them to it.
        """
        created = self._tbl is None
        if created and is_local(self.db_uri):
            rows = rows if isinstance(rows, list) else list(rows)
            return self._write_first(rows, model, dimension, release, options)
        if created:
            with guard("create", self.db_uri, self.name):
                self._tbl = _create_indexed(self._db, self.name, self.fts)
        stored_model, stored_dim = self.vector_info()
        vectors_changed = model is not None and (stored_model != model or stored_dim != dimension)
        added, updated, deleted, touched = self._changes(rows, paths)
        if not (added or updated or deleted or touched or vectors_changed):
            return WriteResult(0, 0, 0, int(self._tbl.version), committed=created)

        def merge() -> None:
            with guard("write", self.db_uri, self.name):
                if vectors_changed:
                    self._replace_vector_column(model, dimension)  # type: ignore[arg-type]
                self._merge(rows, paths, every_row=vectors_changed)
                self._index_new_row_text_columns()

        with_room(self._tbl, self.db_uri, merge)
        optimized = with_room(self._tbl, self.db_uri, self.optimize, committed=True)
        return WriteResult(added, updated, deleted, int(self._tbl.version), committed=True, optimized=optimized)

    def _changes(self, rows: Sequence[dict[str, Any]], paths: set[str] | None) -> tuple[int, int, int, bool]:
        """(rows added, updated, deleted, whether some file's state changed) against the rows the
        table holds for ``paths``."""
        before = {r[ID]: r for r in self.existing(paths)}
        wanted = {row[ID]: row for row in rows}
        if len(wanted) != len(rows):
            raise IndexingError("two chunks share one id; this is a bug in the chunk numbering")
        added = sum(1 for key in wanted if key not in before)
        updated = sum(1 for key, row in wanted.items() if key in before and before[key][HASH] != row[HASH])
        deleted = sum(1 for key in before if key not in wanted)
        touched = any(
            key in before and any(before[key].get(c) != row.get(c) for c in FILE_STATE) for key, row in wanted.items()
        )
        return added, updated, deleted, touched

    def _merge(self, rows: Sequence[dict[str, Any]], paths: set[str] | None, *, every_row: bool) -> None:
        """One ``merge_insert`` commit: new rows inserted, changed ones (``every_row``: all, for a new
        vector column) updated, rows of ``paths`` (None: of the table) no longer given deleted."""
        import pyarrow as pa

        self._add_columns_for(rows)
        schema = self._tbl.schema
        data = pa.Table.from_pylist([complete(row, schema) for row in rows], schema=schema)
        if paths is None and not every_row and self._tbl.count_rows() == 0:
            # A table with no rows yet (one just created in an object store): every row is an insert.
            # A plain append is the same commit without the merge's join: ~20 MB less at peak and
            # ~0.1 s less for 4,000 chunks (tests/benchmarks/README.md, issue 25).
            self._tbl.add(data, on_bad_vectors="null")
            return
        condition = "true" if every_row else _changed(VECTOR in schema.names)
        merge = self._tbl.merge_insert(ID).when_matched_update_all(where=condition).when_not_matched_insert_all()
        if paths is None:
            merge = merge.when_not_matched_by_source_delete()
        elif paths:
            merge = merge.when_not_matched_by_source_delete(f"{PATH} IN ({', '.join(map(sql_string, sorted(paths)))})")
        merge.execute(data, on_bad_vectors="null")

    def _write_first(
        self,
        rows: list[dict[str, Any]],
        model: str | None,
        dimension: int | None,
        release: bool,
        options: dict[str, Any] | None = None,
    ) -> WriteResult:
        """A new table in a local folder is built whole (rows, columns, full-text indexes) in a
        hidden staging folder (storage/write/first_write.py) and moved into place with one rename: a
        reader sees no table, then all of it; a failure before the rename leaves no table (or the
        damaged one as it was)."""
        added = len(rows)  # before the rows are released
        build_in_place(
            self.db_uri,
            self.name,
            rows,
            model,
            dimension,
            release=release,
            fts=self.fts,
            options=options,
            vector_policy=self.vector_policy,
            damaged=self.damaged,
        )
        with guard("create", self.db_uri, self.name):
            self._tbl = self._db.open_table(self.name)
        # (optimized: every row is in the full-text indexes already, nothing is left to fold or compact)
        return WriteResult(added, 0, 0, int(self._tbl.version), committed=True, optimized=True)

    def _add_columns_for(self, rows: Sequence[dict[str, Any]]) -> None:
        """Columns for keys the rows bring (front matter), typed from their values."""
        import pyarrow as pa

        names = set(self._tbl.schema.names)
        new = sorted({key for row in rows for key in row} - names - {VECTOR})
        if new:
            self._tbl.add_columns([pa.field(key, infer_type(row.get(key) for row in rows)) for key in new])

    def _index_new_row_text_columns(self) -> None:
        """A full-text index for each language's text column the merge added (the first row of a
        language new to the table); later rows are folded in as the other indexes' are."""
        indexed = fts_columns(self._tbl)
        for column in row_text_columns(self._tbl.schema.names):
            if column not in indexed:
                create_row_text_index(self._tbl, column)

    def drop_row_text_columns(self, keep: set[str]) -> list[str]:
        """Drop the columns of rows in their own language (``text_ko``...) not in ``keep``
        (``--rebuild``: a language that became the table's own, or whose pages are gone), so the
        table is the one a fresh run makes. One commit; returns their names."""
        if self._tbl is None:
            return []
        stale = sorted(set(row_text_columns(self._tbl.schema.names)) - keep)
        if stale:
            with guard("write", self.db_uri, self.name):
                for column in stale:  # (an index on a dropped column would be left behind)
                    if f"{column}_idx" in {index.name for index in self._tbl.list_indices()}:
                        self._tbl.drop_index(f"{column}_idx")
                self._tbl.drop_columns(stale)
        return stale

    def front_matter_columns(self) -> set[str]:
        """The table's columns that front matter added (all but the indexer's own)."""
        return set() if self._tbl is None else set(self._tbl.schema.names) - OWN_COLUMNS

    def drop_front_matter_columns(self, keep: set[str]) -> list[str]:
        """Drop the front-matter columns not in ``keep`` (``--rebuild``: keys no file has any more,
        or that the column cap leaves out, go with their columns). One commit; returns their names."""
        stale = sorted(self.front_matter_columns() - keep)
        if stale:
            with guard("write", self.db_uri, self.name):
                self._tbl.drop_columns(stale)
        return stale


def _changed(has_vectors: bool) -> str:
    """The merge condition for a row to be rewritten: its text or its file's state changed, or it
    gains a vector. (Lance's SQL has no IS DISTINCT FROM; the source's file state is never null.)"""
    changed = [
        f"target.{HASH} != source.{HASH}",
        f"target.{FILE_MTIME} IS NULL",
        f"target.{FILE_MTIME} != source.{FILE_MTIME}",
        f"target.{FILE_SIZE} != source.{FILE_SIZE}",
    ]
    if has_vectors:
        changed.append(f"(target.{VECTOR} IS NULL AND source.{VECTOR} IS NOT NULL)")
    return " OR ".join(changed)
