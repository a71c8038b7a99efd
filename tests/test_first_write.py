"""The first write of a new local table (storage/write/first_write.py: record batches, the full-text
indexes built once after the data, no optimize) makes the same table as the writer's general
path (an empty indexed table, one append, ``optimize()``), which object stores keep: schema with
field metadata, rows in order, indexes, full-text and vector search answers. With ``release`` the
caller's rows list is emptied; a write that fails or is interrupted part way leaves no table and
no staging folder. Real LanceDB in tmp folders and in its ``memory://`` object store.
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.engine import Engine
from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.write import table as writer_module
from lancelot_cli.storage.write.first_write import BATCH_ROWS
from lancelot_cli.storage.write.table import TableWriter
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

TABLE = "documents"
WORDS = "parsnip quokka harbour lantern meadow cobalt ember willow quartz saffron".split()
QUERIES = ("parsnip quokka", "harbour", "lantern meadow cobalt", '"ember willow"', "chapter 7", "notes.md")


def make_rows(count: int = 2 * BATCH_ROWS + 300, *, vectors: bool = False) -> list[dict[str, Any]]:
    """``count`` rows as the indexer makes them, over several batches, with front matter of every
    type the writer infers (list, int, float mixed with int, bool, text), missing on some files."""
    rows = []
    for n in range(count):
        file, chunk = divmod(n, 7)
        words = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 6))
        row: dict[str, Any] = {
            "id": f"folder/notes-{file}.md#{chunk}",
            "path": f"folder/notes-{file}.md",
            "title": f"Notes {file} {WORDS[file % len(WORDS)]}",
            "chunk": chunk,
            "text": f"Chapter {chunk}. {words} and {words.upper()} again, number {n}.",
            "hash": f"h{n}",
            "file_size": 1000 + file,
            "file_mtime": 1_700_000_000_000_000_000 + file,
            "file_hash": f"f{file}",
            "heading": f"Notes {file} > Part {chunk}" if chunk else None,
            "line_start": None,
            "line_end": None,
            "page": None,
        }
        if file % 3 == 0:
            row.update(tags=["a", WORDS[file % len(WORDS)]], rank=file, score=file / 2 if file % 2 else file)
        if file % 4 == 1:
            row.update(draft=file % 8 == 1, author=f"writer {file}", mixed=[1] if file % 8 == 1 else "x")
        if vectors:
            row["vector"] = [float((n + k) % 5) for k in range(4)] if n % 3 else None
        rows.append(row)
    return rows


def general_path(db: Path, rows: list[dict[str, Any]], **write: Any) -> TableWriter:
    """The table built as the writer built every new table before (and object stores still do):
    empty with its full-text indexes, then the rows appended and ``optimize()``."""
    writer = TableWriter(str(db), TABLE)
    writer._tbl = writer_module._create_indexed(writer._db, TABLE)
    writer.write(rows, **write)
    return writer


def first_write(db: Path, rows: list[dict[str, Any]], **write: Any) -> TableWriter:
    writer = TableWriter(str(db), TABLE)
    assert not writer.exists
    result = writer.write(rows, **write)
    assert result.committed and result.optimized and writer.unindexed() == 0
    return writer


def index_facts(tbl: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (i.name, i.index_type, list(i.columns), i.num_indexed_rows, i.num_unindexed_rows, i.index_details)
        for i in tbl.list_indices()
    )


def answers(tbl: Any, *, vectors: bool = False) -> list[Any]:
    """Every query on every full-text column (ids and scores in order), and a vector search."""
    found = []
    for column in ("text", "title", "heading", "path"):
        for query in QUERIES:
            hits = tbl.search(query, query_type="fts", fts_columns=column).limit(15).to_list()
            found.append([(hit["id"], round(hit["_score"], 5)) for hit in hits])
    if vectors:
        hits = tbl.search([1.0, 2.0, 0.0, 3.0], vector_column_name="vector").limit(10).to_list()
        found.append([(hit["id"], round(hit["_distance"], 5)) for hit in hits])
    return found


@pytest.mark.parametrize("vectors", [False, True], ids=["text", "with-vectors"])
def test_the_first_write_makes_the_table_the_general_path_makes(tmp_path: Path, vectors: bool) -> None:
    rows = make_rows(vectors=vectors)
    write = {"model": "test-model", "dimension": 4} if vectors else {}
    old = general_path(tmp_path / "old", copy.deepcopy(rows), **write)._tbl
    new = first_write(tmp_path / "new", rows, **write)._tbl

    assert new.schema.equals(old.schema, check_metadata=True)
    assert "tags" in new.schema.names and str(new.schema.field("score").type) == "double"
    assert new.to_arrow().to_pylist() == old.to_arrow().to_pylist()  # the same rows, in the same order
    assert index_facts(new) == index_facts(old) and len(index_facts(new)) == 4
    assert answers(new, vectors=vectors) == answers(old, vectors=vectors)
    assert all(answers(new, vectors=vectors)[:3])  # the queries find something
    # (the general path: created, 4 indexes, front-matter columns (with the vector column when it comes),
    # the vector column's, the append, optimize(); the first write: the data, 4 indexes)
    assert (len(new.list_versions()), len(old.list_versions())) == (5, 9 if vectors else 8)
    assert not [name for name in os.listdir(tmp_path / "new") if name.startswith(".staging-")]


def test_release_empties_the_rows_list_and_keeps_them_otherwise(tmp_path: Path) -> None:
    rows = make_rows()
    kept = copy.deepcopy(rows)
    first_write(tmp_path / "kept", rows)
    assert rows == kept  # release=False: the caller's rows are left as they were

    released = TableWriter(str(tmp_path / "released"), TABLE)
    result = released.write(rows, release=True)
    assert rows == [] and result.added == len(kept) == released.count()
    assert (
        released._tbl.to_arrow().to_pylist() == TableWriter(str(tmp_path / "kept"), TABLE)._tbl.to_arrow().to_pylist()
    )


def test_an_object_store_keeps_the_general_path(tmp_path: Path) -> None:
    rows = make_rows(300)
    kept = copy.deepcopy(rows)
    writer = TableWriter("memory://first-write", TABLE)
    writer.write(rows, release=True)
    assert rows == kept  # not the local first write: nothing was taken off the list
    assert len(writer._tbl.list_versions()) == 8  # created, 4 indexes, front-matter columns, the append, optimize()
    local = first_write(tmp_path / "db", copy.deepcopy(kept))._tbl
    assert writer._tbl.to_arrow().to_pylist() == local.to_arrow().to_pylist()
    assert answers(writer._tbl) == answers(local)


def assert_no_table(db: Path) -> None:
    assert TableWriter(str(db), TABLE).exists is False
    assert not [name for name in os.listdir(db) if name.startswith(".staging-")]


def test_a_row_that_fails_in_a_later_batch_leaves_no_table(tmp_path: Path) -> None:
    rows = make_rows()
    rows[BATCH_ROWS + 10]["chunk"] = "not a number"  # the second batch cannot be made
    db = tmp_path / "db"
    db.mkdir()
    with pytest.raises(IndexingError, match=r"could not create table .*not a number"):
        TableWriter(str(db), TABLE).write(rows, release=True)
    assert rows == []  # given up, also on failure
    assert_no_table(db)
    first_write(db, make_rows())  # and the next run builds it


def test_an_interrupt_while_indexing_leaves_no_table_and_a_damaged_one_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lancedb.table

    def interrupted(*_args: Any, **_kwargs: Any) -> None:
        raise KeyboardInterrupt  # as Ctrl-C lands between the data and the full-text indexes

    db = tmp_path / "db"
    db.mkdir()
    with monkeypatch.context() as patch:
        patch.setattr(lancedb.table.LanceTable, "create_index", interrupted)
        with pytest.raises(KeyboardInterrupt):
            TableWriter(str(db), TABLE).write(make_rows())
    assert_no_table(db)

    # --rebuild of a damaged table: interrupted, the damaged table is where it was, untouched.
    first_write(db, make_rows(50))
    shutil.rmtree(db / f"{TABLE}.lance" / "_indices")  # (one of tests/test_damaged_tables.py's damages)
    before = sorted((p.relative_to(db), p.read_bytes()) for p in (db / f"{TABLE}.lance").rglob("*") if p.is_file())
    rebuild = TableWriter(str(db), TABLE, replace_damaged=True)
    assert rebuild.damaged
    with monkeypatch.context() as patch:
        patch.setattr(lancedb.table.LanceTable, "create_index", interrupted)
        with pytest.raises(KeyboardInterrupt):
            rebuild.write(make_rows())
    after = sorted((p.relative_to(db), p.read_bytes()) for p in (db / f"{TABLE}.lance").rglob("*") if p.is_file())
    assert after == before
    assert not [name for name in os.listdir(db) if name.startswith(".staging-")]


def write_folder(root: Path) -> None:
    root.mkdir()
    for n in range(40):
        front = f"---\ntags: [t{n % 3}]\nweight: {n}\n---\n" if n % 2 else ""
        body = "\n\n".join(
            f"## Part {k}\n\n" + " ".join(WORDS[(n + k + j) % len(WORDS)] for j in range(200)) for k in range(4)
        )
        (root / f"note-{n:02d}.md").write_text(f"{front}# Note {n}\n\n{body}\n", encoding="utf-8")


def hits(engine: Engine, query: str) -> list[tuple[str, float]]:
    reply = to_wire(engine.search(query, limit=10, search_type="text"))
    return [(hit["source"], hit["score"]) for hit in reply["hits"]]


def test_a_table_made_by_the_first_write_serves_and_re_indexes(tmp_path: Path) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    write_folder(src)
    first = index_folder(src, str(db))
    assert first.committed and first.added == first.chunks > BATCH_ROWS // 8 and first.version == 5

    # The same folder through the general path (an empty indexed table, then the write).
    old_db = tmp_path / "old"
    general_path(old_db, [])
    index_folder(src, str(old_db))
    for query in ("parsnip quokka", "cobalt ember", "Note 7"):
        assert hits(engine_for(db), query) == hits(engine_for(old_db), query) != []

    again = index_folder(src, str(db))
    assert not again.committed and again.chunks == first.chunks  # nothing changed: nothing written
    (src / "note-07.md").write_text("# Note 7\n\nNow only about a zeppelinword.\n", encoding="utf-8")
    changed = index_folder(src, str(db))
    assert changed.committed and changed.updated + changed.deleted >= 1 and changed.read == 1
    assert [source for source, _ in hits(engine_for(db), "zeppelinword")] == ["note-07.md"]
    assert TableWriter(str(db), TABLE).unindexed() <= changed.chunks


def test_one_arena_leaves_a_users_setting_alone() -> None:
    from lancelot_cli.storage import heap

    assert heap.one_arena({"MALLOC_ARENA_MAX": "4"}) is False  # glibc read the user's value at start
    glibc = heap.glibc("mallopt") is not None
    assert heap.one_arena({}) is glibc and heap.trim() is glibc
