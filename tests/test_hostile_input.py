"""Hostile and odd input for `lancelot index`: links out of the folder, YAML alias bombs, front
matter with thousands of keys, pages nested too deeply to parse, and folders with nothing to index.
Real files, real LanceDB in tmp folders; each test fails on the indexer as it was before the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.frontmatter import RESERVED, column_name
from lancelot_cli.indexer.meta_columns import MAX_META_COLUMNS, OWN_COLUMNS
from lancelot_cli.indexer.sources import SourceError, read_document, scan
from lancelot_cli.storage.schema import COLUMNS
from tests.conftest import subprocess_env


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rows(db: Path, table: str = "documents") -> list[dict]:
    return lancedb.connect(str(db)).open_table(table).to_arrow().to_pylist()


def columns(db: Path, table: str = "documents") -> list[str]:
    return lancedb.connect(str(db)).open_table(table).schema.names


# --------------------------------------------------------------------------- 1. links


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """docs/ with links in and out: outside files by absolute path, by ../ and through a chain."""
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    write(docs / "real.md", "# Real\n\nThe real page about lanterns.\n")
    write(docs / "sub" / "inner.md", "# Inner\n\nAn inner page about kettles.\n")
    write(outside / "secret.txt", "root:x:0:0:root:/root:/bin/bash swordfish\n")
    write(outside / "folder" / "hidden.md", "# Hidden\n\nswordfish in a folder outside\n")
    os.symlink(outside / "secret.txt", docs / "absolute.txt")  # the /etc/passwd case
    os.symlink("../outside/secret.txt", docs / "relative.txt")  # a relative ../ link
    os.symlink("relative.txt", docs / "chain.txt")  # inside -> inside link -> outside
    os.symlink("sub/inner.md", docs / "alias.md")  # a link that stays inside: indexed
    os.symlink("../alias.md", docs / "sub" / "chain-in.md")  # a chain that stays inside: indexed
    os.symlink(outside / "folder", docs / "linked-folder")  # folders: never followed
    os.symlink(docs / "sub", docs / "loop")
    return docs


def test_links_to_files_outside_the_folder_are_skipped_with_a_reason(linked: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    report = index_folder(linked, str(db))
    reasons = dict(report.skipped)
    for rel in ("absolute.txt", "relative.txt", "chain.txt"):
        assert "outside the folder" in reasons[rel], reasons
    assert "not followed" in reasons["linked-folder/"] and "not followed" in reasons["loop/"]
    table = rows(db)
    assert {r["path"] for r in table} == {"real.md", "sub/inner.md", "alias.md", "sub/chain-in.md"}
    assert not any("swordfish" in r["text"] or "root:x" in r["text"] for r in table)
    assert report.files == 4


def test_reading_a_link_out_of_the_folder_directly_is_refused(linked: Path) -> None:
    """read_document checks again (the watcher reads single files; a link may be swapped in)."""
    for rel in ("absolute.txt", "relative.txt", "chain.txt"):
        with pytest.raises(SourceError, match="outside the folder"):
            read_document(linked, rel)
    assert "kettles" in read_document(linked, "alias.md").text


def test_a_folder_reached_through_a_link_is_checked_against_the_real_folder(linked: Path, tmp_path: Path) -> None:
    """Indexing through a link to the folder itself works: both sides are resolved."""
    os.symlink(linked, tmp_path / "docs-link")
    found = scan(tmp_path / "docs-link")
    assert set(found.paths) == {"real.md", "sub/inner.md", "alias.md", "sub/chain-in.md"}


def test_cli_lists_the_link_that_is_not_followed(linked: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["index", str(linked), str(tmp_path / "db")])
    assert result.exit_code == 0, result.output
    assert "absolute.txt: a link to a file outside the folder" in " ".join(result.stderr.split())


# --------------------------------------------------------------------------- 2. YAML alias bombs


def alias_bomb(levels: int) -> str:
    """~300 bytes that expand to 9 ** (levels + 1) strings (7 levels: 700 MB as JSON)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "---\n" + "\n".join(lines) + "\n---\n# Bomb\n\nThe body of the bomb.\n"


BOMB_RUN = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
from lancelot_cli.indexer import index_folder
started = time.perf_counter()
report = index_folder(sys.argv[1], sys.argv[2])
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
for path, reason in report.skipped:
    print(path, "|", reason)
"""


@pytest.mark.slow
@pytest.mark.parametrize("levels", [7, 8])
def test_an_alias_bomb_is_skipped_and_the_run_goes_on(tmp_path: Path, levels: int) -> None:
    """In a child process with 1.5 GB of address space and 60 s: before the fix the 7-level bomb
    ran past both (and the 8-level one ended the run with MemoryError)."""
    docs = tmp_path / "docs"
    write(docs / "bomb.md", alias_bomb(levels))
    write(docs / "fine.md", "---\nstatus: ok\n---\n# Fine\n\nAn ordinary page.\n")
    assert len((docs / "bomb.md").read_bytes()) < 500
    done = subprocess.run(
        [sys.executable, "-c", BOMB_RUN, str(docs), str(tmp_path / "db")],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("bomb.md |") and "expands to more than" in line for line in lines), lines
    assert {r["path"] for r in rows(tmp_path / "db")} == {"fine.md"}


@pytest.mark.parametrize(
    "front, reason",
    [
        ("a: &a [*a]", "refers to itself"),
        ("a: &a {b: *a}", "refers to itself"),
        ("a: " + "[" * 40 + "]" * 40, "deep"),
        # PyYAML 6.0.4's libyaml stops at 1,000 levels (a YAML error); with 6.0.3's the document parses
        # and the depth check refuses it: refused with a reason either way (the lowest-bounds run)
        ("a: " + "[" * 5000 + "]" * 5000, "YAML|deep"),
        ("a: '" + "x" * 70_000 + "'", "longer than"),
        ("a: &s '" + "x" * 60_000 + "'\nb: [" + ", ".join(["*s"] * 10) + "]", "characters"),
    ],
)
def test_front_matter_over_a_bound_is_refused_with_a_reason(tmp_path: Path, front: str, reason: str) -> None:
    write(tmp_path / "x.md", f"---\n{front}\n---\n# X\n\nbody\n")
    with pytest.raises(SourceError, match=reason):
        read_document(tmp_path, "x.md")


def test_front_matter_with_ordinary_aliases_still_works(tmp_path: Path) -> None:
    write(
        tmp_path / "x.md",
        "---\nbase: &b {owner: ops, tier: 2}\nsame: *b\ntags: &t [a, b]\nmore: *t\n---\n# X\n\nbody\n",
    )
    meta = read_document(tmp_path, "x.md").meta
    assert meta["same"] == meta["base"] == '{"owner": "ops", "tier": 2}' and meta["more"] == ["a", "b"]


# --------------------------------------------------------------------------- 3. schema explosion


def test_reserved_names_are_the_schema_columns() -> None:
    assert set(COLUMNS) <= RESERVED and OWN_COLUMNS == RESERVED
    assert all(column_name(name) == f"meta_{name}" for name in COLUMNS)


def test_front_matter_columns_are_capped_and_the_dropped_keys_named(tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", tmp_path / "db"
    keys = "\n".join(f"key{n:04d}: {n}" for n in range(3000))
    write(docs / "many.md", f"---\nstatus: draft\n{keys}\n---\n# Many keys\n\nbody\n")
    for name in ("a", "b", "c"):
        write(docs / f"{name}.md", f"---\nstatus: ok\nowner: {name}\n---\n# {name}\n\nbody\n")
    report = index_folder(docs, str(db))
    meta = [c for c in columns(db) if c not in OWN_COLUMNS]
    assert len(meta) == MAX_META_COLUMNS
    assert {"status", "owner"} <= set(meta)  # keys that more files carry win
    notes = dict(report.notes)
    assert set(notes) == {"many.md"} and "key0062, key0063" in notes["many.md"] and "2,930 more" in notes["many.md"]
    assert report.as_dict()["notes"][0]["path"] == "many.md"
    # A later file cannot add columns past the cap either; it is told which keys were left out.
    write(docs / "d.md", "---\nfresh_key: 1\nstatus: ok\n---\n# d\n\nbody\n")
    report = index_folder(docs, str(db))
    assert "fresh_key" in dict(report.notes)["d.md"]
    assert "fresh_key" not in columns(db)
    assert next(r for r in rows(db) if r["path"] == "d.md")["status"] == "ok"


def test_rebuild_drops_the_columns_of_deleted_files(tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "keep.md", "---\nstatus: ok\n---\n# Keep\n\nbody\n")
    write(docs / "gone.md", "---\nonly_here: 1\nalso_here: x\n---\n# Gone\n\nbody\n")
    index_folder(docs, str(db))
    assert {"only_here", "also_here", "status"} <= set(columns(db))
    (docs / "gone.md").unlink()
    index_folder(docs, str(db), rebuild=True)
    names = columns(db)
    assert "status" in names and "only_here" not in names and "also_here" not in names
    assert [r["status"] for r in rows(db)] == ["ok"]


def test_cli_summary_names_the_dropped_keys(tmp_path: Path) -> None:
    keys = "\n".join(f"k{n}: {n}" for n in range(100))
    write(tmp_path / "docs" / "many.md", f"---\n{keys}\n---\n# Many\n\nbody\n")
    result = CliRunner().invoke(app, ["index", str(tmp_path / "docs"), str(tmp_path / "db")])
    assert result.exit_code == 0, result.output
    assert "note many.md: front-matter key(s) not stored" in " ".join(result.stderr.split())


# --------------------------------------------------------------------------- 5. deep HTML


def deep_page(depth: int, before: str = "") -> str:
    return (
        f"<html><head><title>Deep page</title></head><body>{before}"
        + "<div>" * depth
        + "<p>"
        + "The buried words are here. " * 40
        + "</p>"
        + "</div>" * depth
        + "</body></html>"
    )


def test_a_page_nested_too_deep_to_read_is_skipped_with_a_reason(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "deep.html", deep_page(100_000))
    write(docs / "ok.md", "# OK\n\nfine\n")
    report = index_folder(docs, str(tmp_path / "db"), workers=1)
    assert "nests elements more than 256 deep" in dict(report.skipped)["deep.html"]
    assert {r["path"] for r in rows(tmp_path / "db")} == {"ok.md"}


def test_a_page_read_in_part_says_so(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "part.html", deep_page(300, before="<p>" + "Words before the deep part. " * 30 + "</p>"))
    report = index_folder(docs, str(tmp_path / "db"), workers=1)
    assert not report.skipped
    assert "indexed in part" in dict(report.notes)["part.html"]
    assert "Words before the deep part" in rows(tmp_path / "db")[0]["text"]


# --------------------------------------------------------------------------- 6. nothing to index


def test_an_empty_folder_is_an_error_that_says_so(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    result = CliRunner().invoke(app, ["index", str(tmp_path / "docs"), str(tmp_path / "db")])
    assert result.exit_code == 1
    assert "nothing to index" in result.stderr and "holds no files" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "db" / "documents.lance").exists()


def test_a_folder_of_unsupported_files_says_what_was_found(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for name in ("a.odt", "b.odt", "c.doc", "d.tex"):
        write(docs / name, "x")
    with pytest.raises(IndexingError) as caught:
        index_folder(docs, str(tmp_path / "db"))
    message = str(caught.value)
    assert "found 4 file(s), none of a supported kind" in message
    assert "2 .odt" in message and "1 .doc" in message and "1 .tex" in message and "--ext" in message
    assert ".md" in message and ".html" in message and ".pdf" in message and ".epub" in message


def test_a_first_run_whose_documents_all_fail_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "blank.md", "  \n")
    with pytest.raises(IndexingError, match="none of its 1 document"):
        index_folder(tmp_path / "docs", str(tmp_path / "db"))


def test_a_rerun_with_no_changes_exits_0(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.md", "# A\n\nbody\n")
    for _ in range(2):
        result = CliRunner().invoke(app, ["index", str(tmp_path / "docs"), str(tmp_path / "db")])
        assert result.exit_code == 0, result.output


def test_an_unreadable_subfolder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the OS refuses to list (as with chmod 000 for a user other than root) is listed."""
    write(tmp_path / "docs" / "a.md", "# A\n\nbody\n")
    write(tmp_path / "docs" / "locked" / "b.md", "# B\n\nbody\n")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = scan(tmp_path / "docs")
    assert found.paths == ["a.md"]
    assert found.skipped == [("locked/", "cannot read folder: Permission denied")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_subfolder_is_named_in_the_summary(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.md", "# A\n\nbody\n")
    write(tmp_path / "docs" / "locked" / "b.md", "# B\n\nbody\n")
    (tmp_path / "docs" / "locked").chmod(0)
    try:
        result = CliRunner().invoke(app, ["index", str(tmp_path / "docs"), str(tmp_path / "db")])
    finally:
        (tmp_path / "docs" / "locked").chmod(0o755)
    assert result.exit_code == 0, result.output
    assert "locked/: cannot read folder" in result.stderr


def test_a_folder_whose_documents_git_ignores_says_so(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "notes.md", "# Notes\n\nbody\n")
    write(docs / ".gitignore", "*.md\n")
    subprocess.run(["git", "init", "-q", str(docs)], check=True, timeout=30)
    with pytest.raises(IndexingError, match=r"excluded by \.gitignore \(1\)"):
        index_folder(docs, str(tmp_path / "db"))


def test_rebuild_brings_a_table_made_before_the_cap_within_it(tmp_path: Path) -> None:
    """A table that gained hundreds of front-matter columns before the cap existed keeps them on an
    ordinary re-run, and a --rebuild drops all but the 64 its files carry most."""
    docs, db = tmp_path / "docs", tmp_path / "db"
    keys = "\n".join(f"k{n:03d}: {n}" for n in range(200))
    write(docs / "many.md", f"---\n{keys}\n---\n# Many\n\nbody\n")
    from lancelot_cli.indexer import rows_for
    from lancelot_cli.storage.write.table import TableWriter

    TableWriter(str(db), "documents").write(rows_for(read_document(docs, "many.md"), stat=(1, 1)))
    assert len([c for c in columns(db) if c not in OWN_COLUMNS]) == 200
    index_folder(docs, str(db), rebuild=True)
    meta = [c for c in columns(db) if c not in OWN_COLUMNS]
    assert meta == [f"k{n:03d}" for n in range(MAX_META_COLUMNS)]
    assert rows(db)[0]["k063"] == 63
