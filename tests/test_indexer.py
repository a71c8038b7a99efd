"""Tests of `lancelot index`: chunking, titles, walking, the table it writes, re-runs, readers
running meanwhile, errors and the CLI command. Real files and real LanceDB in tmp folders."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import IndexReport, chunk_hash, index_folder, rows_for
from lancelot_cli.indexer.chunking import CHUNK_CHARS, chunk_text, split_long
from lancelot_cli.indexer.sources import (
    SourceError,
    clean_title,
    html_to_text,
    markdown_title,
    read_document,
    walk,
)
from lancelot_cli.storage.read.database import ReadOnlyDatabase
from lancelot_cli.storage.schema import FIELD_INDEX_NAMES

TABLE = "documents"
FTS_MISSING = "INVERTED index"

# What the sample folder holds (examples/sample-docs), with the title each file must get.
SAMPLE_TITLES = {
    "README.md": "Acme Outfitters handbook",
    "faq.txt": "faq.txt",  # no Markdown heading: the file name
    "glossary.html": "Glossary of shop terms",  # <title>, permalink mark removed
    "guides/point-of-sale.md": "Point-of-sale system",
    "guides/repairs.md": "Repair workshop",
    "guides/stock-counts.md": "Stock counts",
    "policies/privacy.md": "Customer privacy",
    "policies/refunds.md": "Refund policy",
    "policies/shipping.md": "Shipping and delivery",
    "policies/warranty.md": "Warranty",  # setext heading
}


# --------------------------------------------------------------------------- helpers


def open_table(db: Path, table: str = TABLE) -> Any:
    return lancedb.connect(str(db)).open_table(table)


def table_rows(db: Path, table: str = TABLE) -> list[dict[str, Any]]:
    return open_table(db, table).to_arrow().to_pylist()


def fts_indices(tbl: Any) -> list[Any]:
    return [i for i in tbl.list_indices() if str(i.index_type).upper() in {"FTS", "INVERTED"}]


def expected_rows(root: Path, size: int = CHUNK_CHARS) -> list[dict[str, Any]]:
    """The rows the folder should give, computed file by file (broken files left out), with the
    state of each file (size, mtime) as the indexer records it."""
    rows = []
    for rel in walk(root):
        try:
            doc = read_document(root, rel)
        except SourceError:
            continue
        info = (root / rel).stat()
        rows.extend(rows_for(doc, size, (info.st_size, info.st_mtime_ns)))
    return rows


def words(text: str) -> list[str]:
    return text.split()


def non_space(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def assert_full_fts(db: Path, table: str = TABLE) -> None:
    tbl = open_table(db, table)
    indices = fts_indices(tbl)
    # One full-text index per searched column: the text, and the weighted title/heading/path.
    assert sorted(c for index in indices for c in index.columns) == sorted(["text", *FIELD_INDEX_NAMES]), indices
    for index in indices:
        assert index.num_indexed_rows == tbl.count_rows(), index
        assert index.num_unindexed_rows == 0, index
    coverage = ReadOnlyDatabase(str(db)).table(table).fts_coverage()
    assert coverage == {"indexed": tbl.count_rows(), "unindexed": 0}


def generate_folder(root: Path, count: int, tag: str) -> None:
    """``count`` Markdown files of two or three chunks each, all mentioning "alpha"."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for n in range(count):
        body = "\n\n".join(
            f"Paragraph {p} of note {n}: alpha beta gamma {tag} " + " ".join(f"w{n}x{p}x{k}" for k in range(60))
            for p in range(4)
        )
        write(root / f"part{n % 7}" / f"note{n:04}.md", f"# Note {n} {tag}\n\n{body}\n")


class Reader:
    """A reader that polls the table (fresh connection, consistency interval 0) in a loop."""

    def __init__(self, db: Path) -> None:
        self.conn = lancedb.connect(str(db), read_consistency_interval=timedelta(0))
        self.counts: list[int] = []
        self.errors: list[str] = []
        self.reads = 0

    def read_once(self, tbl: Any) -> None:
        try:
            count = tbl.count_rows()
            hits = tbl.search("alpha", query_type="fts").limit(5).to_list()
            if count and not hits:
                self.errors.append(f"FTS found nothing in a table of {count} rows")
            self.counts.append(count)
            self.reads += 1
        except Exception as exc:  # noqa: BLE001 - every failure is recorded; the test asserts there is none
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def run_until(self, done: threading.Event, wait_for_table: bool = False) -> None:
        tbl = None
        while not done.is_set():
            if tbl is None:
                try:
                    tbl = self.conn.open_table(TABLE)
                except Exception:
                    if not wait_for_table:
                        raise
                    continue  # not created yet
            self.read_once(tbl)
            # Every other read also through a freshly opened table, as the server does.
            if self.reads % 2:
                try:
                    self.read_once(self.conn.open_table(TABLE))
                except Exception as exc:  # noqa: BLE001 - recorded, as above
                    self.errors.append(f"{type(exc).__name__}: {exc}")
        if tbl is None:
            tbl = self.conn.open_table(TABLE)
        self.read_once(tbl)  # one read after the writer finished


def index_in_thread(src: Path, db: Path, **kwargs: Any) -> tuple[threading.Thread, threading.Event, dict[str, Any]]:
    done = threading.Event()
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["report"] = index_folder(src, str(db), **kwargs)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the test
            out["error"] = exc
        finally:
            done.set()

    thread = threading.Thread(target=run, daemon=True)
    return thread, done, out


# --------------------------------------------------------------------------- 1. chunking


def test_no_chunk_exceeds_the_default_size() -> None:
    text = "\n\n".join(f"Paragraph {n}. " + "lorem ipsum dolor sit amet " * (n * 7 % 90 + 1) for n in range(60))
    chunks = chunk_text(text)
    assert len(chunks) > 5
    assert all(0 < len(c) <= CHUNK_CHARS for c in chunks)
    assert words(" ".join(chunks)) == words(text)


def test_chunks_break_on_blank_lines_and_keep_paragraphs_whole() -> None:
    p1, p2, p3 = ("a" * 9 + " ") * 50, ("b" * 9 + " ") * 50, ("c" * 9 + " ") * 50
    p1, p2, p3 = p1.strip(), p2.strip(), p3.strip()  # 499 chars each
    text = f"{p1}\n\n{p2}\n  \t\n{p3}\n"
    assert chunk_text(text, 1200) == [f"{p1}\n\n{p2}", p3]
    # Two paragraphs and their blank line take exactly 1,000 characters.
    assert chunk_text(text, 1000) == [f"{p1}\n\n{p2}", p3]
    # 999 is too small for two: each paragraph is a chunk of its own, unsplit.
    assert chunk_text(text, 999) == [p1, p2, p3]
    # Single newlines are not paragraph breaks: the lines stay together.
    assert chunk_text("one\ntwo\nthree", 100) == ["one\ntwo\nthree"]


def test_a_paragraph_that_fits_is_never_split_even_if_the_chunk_is_part_full() -> None:
    first = "x" * 700
    second = " ".join(["word"] * 120)  # 599 chars: does not fit after the first, fits alone
    chunks = chunk_text(f"{first}\n\n{second}", 1200)
    assert chunks == [first, second]


def test_long_paragraph_is_cut_at_spaces() -> None:
    paragraph = " ".join(f"word{n}" for n in range(400))
    pieces = split_long(paragraph, 100)
    assert len(pieces) > 1
    assert all(len(p) <= 100 for p in pieces)
    assert " ".join(pieces) == paragraph  # cut only at spaces: no word broken
    chunks = chunk_text(paragraph, 100)
    assert all(len(c) <= 100 for c in chunks)
    assert words(" ".join(chunks)) == words(paragraph)


def test_word_longer_than_size_is_cut_hard() -> None:
    chunks = chunk_text("short " + "x" * 250 + " tail", 100)
    assert all(0 < len(c) <= 100 for c in chunks)
    assert non_space("".join(chunks)) == non_space("short " + "x" * 250 + " tail")


def test_crlf_input_gives_the_same_chunks_as_lf() -> None:
    lf = "# Title\n\nFirst paragraph\nsecond line.\n\nSecond paragraph here.\n"
    crlf = lf.replace("\n", "\r\n")
    assert chunk_text(crlf, 30) == chunk_text(lf, 30)
    assert chunk_text(crlf, 1200) == ["# Title\n\nFirst paragraph\nsecond line.\n\nSecond paragraph here."]
    assert all("\r" not in c for c in chunk_text(crlf, 30))
    assert chunk_text("a b\r\n\r\nc d", 3) == ["a b", "c d"]


def test_empty_and_blank_text_give_no_chunks_and_size_must_be_positive() -> None:
    assert chunk_text("") == []
    assert chunk_text("  \n\n \t\n  ") == []
    with pytest.raises(ValueError):
        chunk_text("text", 0)


def test_long_paragraph_of_lines_is_cut_between_words() -> None:
    """A long paragraph whose words are separated by line breaks only (a list of URLs, one a
    line) must be cut at a line break, not inside a word. (It once failed: split_long looked
    only for " " and cut hard at ``size`` otherwise.)"""
    paragraph = "\n".join(f"https://example.com/page{n:03}" for n in range(20))  # 28-char words
    chunks = chunk_text(paragraph, 100)
    assert all(len(c) <= 100 for c in chunks)
    assert [w for c in chunks for w in words(c)] == words(paragraph)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789.,;:!?'\"()-_/#*", min_size=1, max_size=12)
_PARAGRAPH = st.lists(_WORD, min_size=1, max_size=40).map(" ".join)
_BREAK = st.sampled_from(["\n\n", "\n\n\n", "\n \n", "\n\t \n", "\r\n\r\n", "\r\n \r\n"])


@st.composite
def _documents(draw: st.DrawFn) -> tuple[list[str], str]:
    paragraphs = draw(st.lists(_PARAGRAPH, min_size=0, max_size=12))
    text = ""
    for n, paragraph in enumerate(paragraphs):
        text += (draw(_BREAK) if n else draw(st.sampled_from(["", "\n", "\n\n"]))) + paragraph
    return paragraphs, text + draw(st.sampled_from(["", "\n", "\n\n", "\r\n"]))


@settings(max_examples=300, deadline=None)
@given(doc=_documents(), size=st.integers(min_value=12, max_value=300))
def test_chunking_properties(doc: tuple[list[str], str], size: int) -> None:
    paragraphs, text = doc
    chunks = chunk_text(text, size)
    # No chunk is empty or longer than size.
    assert all(0 < len(c) <= size for c in chunks)
    assert all(c == c.strip() for c in chunks)
    # All words, in order (every word is at most 12 chars <= size, so none may be broken).
    assert [w for c in chunks for w in words(c)] == [w for p in paragraphs for w in words(p)]
    # Chunks are made of whole paragraphs joined by one blank line; a paragraph that fits is
    # one piece, a longer one is cut into pieces that rejoin with a space.
    pieces = [piece for c in chunks for piece in c.split("\n\n")]
    position = 0
    for paragraph in paragraphs:
        if len(paragraph) <= size:
            assert pieces[position] == paragraph
            position += 1
        else:
            got: list[str] = []
            while len(" ".join(got)) < len(paragraph):
                got.append(pieces[position])
                position += 1
            assert " ".join(got) == paragraph
            assert all(len(p) <= size for p in got)
    assert position == len(pieces)
    # Greedy packing: the next chunk's first piece would not have fitted in the previous chunk.
    for before, after in itertools.pairwise(chunks):
        assert len(before) + 2 + len(after.split("\n\n")[0]) > size


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400), size=st.integers(min_value=1, max_value=60))
def test_chunking_keeps_every_visible_character_of_any_text(text: str, size: int) -> None:
    chunks = chunk_text(text, size)
    assert all(0 < len(c) <= size for c in chunks)
    assert all(c.strip() for c in chunks)
    assert non_space("".join(chunks)) == non_space(text)


# --------------------------------------------------------------------------- 2. titles


@pytest.mark.parametrize(
    ("name", "content", "title"),
    [
        ("atx.md", "Intro line\n\n# The ATX title\n\nBody.\n", "The ATX title"),
        ("closed.md", "## Closed heading ##\n\nBody.\n", "Closed heading"),
        ("setext.md", "Setext title\n============\n\nBody text.\n\n# Later heading\n", "Setext title"),
        ("setext2.md", "Second level\n------------\n\nBody.\n", "Second level"),
        (
            "front.md",
            "---\ntitle: from yaml\nauthor: someone\n---\n\nSome text.\n\n# After front matter\n",
            "from yaml",
        ),  # the front matter's title wins over the first heading
        ("plain.md", "No heading in here.\n\nJust paragraphs.\n", "plain.md"),
        ("hashtag.md", "#nospace is not a heading\n\nBody.\n", "hashtag.md"),
        ("notes.txt", "# Text file heading\n\nPlain text body.\n", "Text file heading"),
        ("plain.txt", "Just some text.\n", "plain.txt"),
        ("permalink.md", "# Heading with mark ¶\n\nBody.\n", "Heading with mark"),
    ],
)
def test_markdown_and_text_titles(tmp_path: Path, name: str, content: str, title: str) -> None:
    write(tmp_path / name, content)
    doc = read_document(tmp_path, name)
    assert doc.title == title
    assert doc.path == name
    # Markdown and text are indexed as written, but for a Markdown file's front matter (its own columns).
    body = content.split("---\n", 2)[2] if content.startswith("---\n") else content
    assert doc.text == body


def test_title_of_file_with_crlf_front_matter(tmp_path: Path) -> None:
    """Files written on Windows have CRLF line ends: the front matter is still found (its title
    wins), and "title: x" followed by "---" is never taken as a setext heading."""
    write(tmp_path / "win.md", "")
    (tmp_path / "win.md").write_bytes(b"---\r\ntitle: from yaml\r\n---\r\n\r\n# Real heading\r\n\r\nBody.\r\n")
    doc = read_document(tmp_path, "win.md")
    assert doc.title == "from yaml"
    assert "title:" not in doc.text and "# Real heading" in doc.text
    (tmp_path / "nofm.md").write_bytes(b"---\r\nnot: closed\r\n\r\n# Real heading\r\n")
    assert read_document(tmp_path, "nofm.md").title == "Real heading"


def test_title_ending_in_hash_is_kept() -> None:
    """CommonMark: a closing "#" sequence must follow a space, so "# Learning C#" is the title
    "Learning C#". (It once failed: the ATX pattern and clean_title dropped the trailing "#".)"""
    assert markdown_title("# Learning C#\n\nBody.\n") == "Learning C#"
    assert markdown_title("# Closed ##\n") == "Closed"


def test_html_title_from_title_element_without_permalink_mark(tmp_path: Path) -> None:
    write(
        tmp_path / "page.html",
        (
            "<!DOCTYPE html><html><head><title>Returns   and\n exchanges ¶</title></head><body>"
            "<h1>Another heading</h1><p>Customers may return goods within thirty days of purchase.</p>"
            "</body></html>"
        ),
    )
    doc = read_document(tmp_path, "page.html")
    assert doc.title == "Returns and exchanges"
    assert "thirty days" in doc.text
    assert "<p>" not in doc.text


def test_html_without_title_uses_first_h1(tmp_path: Path) -> None:
    write(
        tmp_path / "sub" / "page.htm",
        (
            "<html><head><meta charset='utf-8'></head><body><h1>Opening hours"
            "<a class='headerlink' href='#x'>¶</a></h1><h1>Second</h1>"
            "<p>The shop opens at nine and closes at six on weekdays.</p></body></html>"
        ),
    )
    doc = read_document(tmp_path, "sub/page.htm")
    assert doc.title == "Opening hours"
    assert doc.path == "sub/page.htm"
    assert "closes at six" in doc.text


def test_html_without_title_or_h1_uses_file_name(tmp_path: Path) -> None:
    write(tmp_path / "bare.html", "<html><body><p>Only a paragraph of text lives here.</p></body></html>")
    doc = read_document(tmp_path, "bare.html")
    assert doc.title == "bare.html"
    assert html_to_text("<html><body><p>Only a paragraph.</p></body></html>")[0] is None


def test_clean_title_removes_permalink_marks() -> None:
    assert clean_title("  Glossary \n of   terms¶ ") == "Glossary of terms"
    assert clean_title("Section 🔗") == "Section"
    assert clean_title("Rules §") == "Rules"


def test_text_that_is_not_utf8_is_read(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("# Café menu\n\nCrème brûlée costs 5 €.\n".encode("cp1252"))
    doc = read_document(tmp_path, "latin.txt")
    assert doc.title == "Café menu"
    assert "Crème brûlée" in doc.text
    (tmp_path / "bom.md").write_bytes("\ufeff# With BOM\n\nBody.\n".encode("utf-8"))
    assert read_document(tmp_path, "bom.md").title == "With BOM"


# --------------------------------------------------------------------------- 3. walk


def test_walk_skips_dot_names_and_other_extensions(tmp_path: Path) -> None:
    for rel in [
        "a.md",
        "b.txt",
        "c.html",
        "d.htm",
        "E.MD",
        "f.markdown",
        "sub/deeper/z.md",
        "sub/y.txt",
        "sub/deeper/deepest/x.html",
        # skipped:
        ".hidden.md",
        ".git/config.md",
        ".drafts/draft.md",
        "sub/.secret/w.md",
        "sub/deeper/.x/v.txt",
        "report.odt",
        "image.png",
        "noext",
        "script.py",
        "sub/data.json",
        "md",
        "a.md.bak",
    ]:
        write(tmp_path / rel, "# x\n\ntext\n")
    found = walk(tmp_path)
    assert found == sorted(found)
    assert set(found) == {
        "a.md",
        "b.txt",
        "c.html",
        "d.htm",
        "E.MD",
        "f.markdown",
        "sub/deeper/z.md",
        "sub/y.txt",
        "sub/deeper/deepest/x.html",
    }
    assert all("\\" not in p and not p.startswith("/") for p in found)


def test_walk_of_sample_folder(docs: Path) -> None:
    assert walk(docs) == sorted(SAMPLE_TITLES)
    assert (docs / ".drafts" / "unfinished.md").exists()


def test_walk_of_empty_folder(tmp_path: Path) -> None:
    assert walk(tmp_path) == []


# --------------------------------------------------------------------------- 4. index_folder


def test_index_sample_folder(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    seen: list[tuple[str, int, int]] = []
    report = index_folder(docs, str(db), progress=lambda rel, done, total: seen.append((rel, done, total)))
    assert isinstance(report, IndexReport)
    assert report.files == 10 and report.skipped == []
    assert report.committed is True
    assert report.added == report.chunks == 10 and report.updated == report.deleted == 0
    assert [s[0] for s in seen] == sorted(SAMPLE_TITLES)
    assert [s[1] for s in seen] == list(range(1, 11)) and {s[2] for s in seen} == {10}

    rows = table_rows(db)
    assert open_table(db).schema.names == [
        "id",
        "path",
        "title",
        "chunk",
        "text",
        "hash",
        "file_size",
        "file_mtime",
        "file_hash",
        "heading",
        "line_start",
        "line_end",
        "page",
    ]
    assert sorted(r["id"] for r in rows) == sorted(f"{p}#0" for p in SAMPLE_TITLES)
    assert {r["path"]: r["title"] for r in rows} == SAMPLE_TITLES
    for row in rows:
        assert row["id"] == f"{row['path']}#{row['chunk']}"
        assert 0 < len(row["text"]) <= CHUNK_CHARS
        assert row["hash"] == chunk_hash(row["title"], row["text"])
    assert not any("unfinished" in r["path"] or "Draft" in r["text"] for r in rows)
    assert report.version == open_table(db).version
    assert_full_fts(db)
    hits = open_table(db).search("warranty", query_type="fts").limit(3).to_list()
    assert hits and hits[0]["path"] == "policies/warranty.md"


def test_index_with_small_chunks(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    report = index_folder(docs, str(db), chunk_size=200)
    rows = table_rows(db)
    assert report.chunks == len(rows) > 10
    assert all(0 < len(r["text"]) <= 200 for r in rows)
    by_path: dict[str, list[int]] = {}
    for row in rows:
        by_path.setdefault(row["path"], []).append(row["chunk"])
    assert set(by_path) == set(SAMPLE_TITLES)
    assert all(sorted(chunks) == list(range(len(chunks))) for chunks in by_path.values())
    # Each file's chunks hold its words, in order.
    for rel, title in SAMPLE_TITLES.items():
        chunks = sorted((r for r in rows if r["path"] == rel), key=lambda r: r["chunk"])
        assert all(r["title"] == title for r in chunks)
        assert words(" ".join(r["text"] for r in chunks)) == words(read_document(docs, rel).text)
    assert {(r["id"], r["text"]) for r in rows} == {(r["id"], r["text"]) for r in expected_rows(docs, 200)}
    assert_full_fts(db)


def test_index_of_empty_folder_is_an_error_and_makes_no_table(tmp_path: Path) -> None:
    """A first run with nothing to index says so (exit 1) rather than making an empty table;
    tests/test_hostile_input.py checks the messages."""
    src = tmp_path / "empty"
    src.mkdir()
    with pytest.raises(IndexingError, match="nothing to index"):
        index_folder(src, str(tmp_path / "db"))
    assert not (tmp_path / "db" / f"{TABLE}.lance").exists()


def test_index_into_another_table_name(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    index_folder(docs, str(db), table="handbook")
    assert ReadOnlyDatabase(str(db)).table_names() == ["handbook"]
    assert len(table_rows(db, "handbook")) == 10
    assert_full_fts(db, "handbook")


# --------------------------------------------------------------------------- 5. broken files


def test_broken_and_unreadable_files_are_skipped_with_a_reason(docs: Path, tmp_path: Path) -> None:
    (docs / "image.html").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8)
    (docs / "guides" / "binary.md").write_bytes(b"# Looks like text\x00\x00\x01\x02 but has NUL bytes")
    (docs / "empty.html").write_text("<html><head></head><body></body></html>")
    (docs / "truncated.html").write_text("<html><body><div><p")
    (docs / "blank.md").write_text("   \n\n \t \n")
    os.symlink(docs / "no-such-target.md", docs / "broken.md")
    (docs / "folder.md").mkdir()  # a folder with a document suffix is walked into, not read
    write(docs / "folder.md" / "inner.md", "# Inner\n\nA file inside a folder called folder.md.\n")
    expected_skips = {"image.html", "guides/binary.md", "empty.html", "truncated.html", "blank.md", "broken.md"}
    if os.geteuid() != 0:  # root reads a file whatever its mode
        write(docs / "locked.md", "# Locked\n\nsecret\n").chmod(0)
        expected_skips.add("locked.md")

    db = tmp_path / "db"
    report = index_folder(docs, str(db))
    reasons = dict(report.skipped)
    assert set(reasons) == expected_skips
    assert all(reason.strip() for reason in reasons.values())
    assert "binary" in reasons["image.html"] and "binary" in reasons["guides/binary.md"]
    assert "no text" in reasons["empty.html"] and "no text" in reasons["blank.md"]
    assert "cannot read" in reasons["broken.md"]
    assert report.files == 11
    rows = table_rows(db)
    assert {r["path"] for r in rows} == set(SAMPLE_TITLES) | {"folder.md/inner.md"}
    assert report.as_dict()["skipped"] == [{"path": p, "reason": r} for p, r in report.skipped]
    assert_full_fts(db)


def test_named_pipe_does_not_hang_the_run(docs: Path, tmp_path: Path) -> None:
    """A FIFO with a document suffix must be skipped (or reported), not read. (It once failed:
    walk listed it and read_document's read_bytes() blocked until a writer appeared, forever.)"""
    fifo = docs / "pipe.md"
    os.mkfifo(fifo)
    thread, done, out = index_in_thread(docs, tmp_path / "db")
    thread.start()
    hung = not done.wait(2)
    if hung:  # unblock the reader so the thread ends: open the write end and close it (EOF)
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        done.wait(10)
    assert not hung, "index_folder blocked reading a named pipe"
    report = out["report"]
    assert {r["path"] for r in table_rows(tmp_path / "db")} == set(SAMPLE_TITLES)
    assert set(dict(report.skipped)) <= {"pipe.md"}


# --------------------------------------------------------------------------- 6. re-runs


def test_rerun_of_unchanged_folder_commits_nothing(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = index_folder(docs, str(db))
    version = open_table(db).version
    before = sorted(table_rows(db), key=lambda r: r["id"])
    second = index_folder(docs, str(db))
    assert second.committed is False
    assert (second.added, second.updated, second.deleted) == (0, 0, 0)
    assert second.chunks == first.chunks and second.files == first.files
    assert open_table(db).version == version == second.version
    assert sorted(table_rows(db), key=lambda r: r["id"]) == before


def test_rerun_after_edit_delete_add_rename_matches_folder_exactly(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    size = 200
    index_folder(docs, str(db), chunk_size=size)
    old = {r["id"]: r["hash"] for r in table_rows(db)}
    version = open_table(db).version

    # Edit the last paragraph of one file (its earlier chunks stay the same).
    pos = docs / "guides" / "point-of-sale.md"
    pos.write_text(pos.read_text() + "\nNew closing paragraph about the Zanzibar voucher.\n")
    # Change only the heading of another: its title changes, so all its chunks change.
    refunds = docs / "policies" / "refunds.md"
    refunds.write_text(refunds.read_text().replace("# Refund policy", "# Refunds and returns", 1))
    (docs / "policies" / "privacy.md").unlink()
    write(docs / "guides" / "new-staff.md", "# New staff\n\nEvery new colleague shadows a senior for a week.\n")
    (docs / "policies" / "warranty.md").rename(docs / "policies" / "guarantee.md")

    want = expected_rows(docs, size)
    wanted = {r["id"]: r["hash"] for r in want}
    report = index_folder(docs, str(db), chunk_size=size)

    rows = table_rows(db)
    assert {(r["id"], r["text"]) for r in rows} == {(r["id"], r["text"]) for r in want}
    assert sorted(rows, key=lambda r: r["id"]) == sorted(want, key=lambda r: r["id"])
    assert len(rows) == len(want) == report.chunks

    added = set(wanted) - set(old)
    deleted = set(old) - set(wanted)
    updated = {k for k in set(old) & set(wanted) if old[k] != wanted[k]}
    assert report.committed is True
    assert (report.added, report.updated, report.deleted) == (len(added), len(updated), len(deleted))
    # Only what changed was counted.
    assert {k.split("#")[0] for k in added} >= {"guides/new-staff.md", "policies/guarantee.md"}
    assert {k.split("#")[0] for k in deleted} >= {"policies/privacy.md", "policies/warranty.md"}
    assert {k.split("#")[0] for k in added | deleted | updated} <= {
        "guides/new-staff.md",
        "policies/guarantee.md",
        "policies/privacy.md",
        "policies/warranty.md",
        "guides/point-of-sale.md",
        "policies/refunds.md",
    }
    assert {k for k in updated if k.startswith("policies/refunds.md#")} == {
        k for k in old if k.startswith("policies/refunds.md#")
    } & set(wanted)
    assert "guides/point-of-sale.md#0" not in updated  # its first chunk did not change
    assert any(k.startswith("guides/point-of-sale.md#") for k in added | updated)
    assert report.version > version
    assert {r["title"] for r in rows if r["path"] == "policies/refunds.md"} == {"Refunds and returns"}
    assert_full_fts(db)
    hits = open_table(db).search("Zanzibar", query_type="fts").to_list()
    assert [h["path"] for h in hits] == ["guides/point-of-sale.md"]
    assert open_table(db).search("PRIV", query_type="fts").to_list() == []

    # And a third run over the same folder changes nothing.
    third = index_folder(docs, str(db), chunk_size=size)
    assert third.committed is False and third.version == report.version


def test_rerun_after_all_files_are_removed_empties_the_table(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    index_folder(docs, str(db))
    for rel in walk(docs):
        (docs / rel).unlink()
    report = index_folder(docs, str(db))
    assert report.committed is True and report.deleted == 10 and report.chunks == 0
    tbl = open_table(db)
    assert tbl.count_rows() == 0
    assert fts_indices(tbl)
    assert tbl.search("warranty", query_type="fts").to_list() == []


# --------------------------------------------------------------------------- 7. concurrent readers


@pytest.mark.slow
def test_reader_during_rebuilds_sees_old_or_new_table_only(tmp_path: Path) -> None:
    src, db = tmp_path / "src", tmp_path / "db"
    generate_folder(src, 300, "first")
    previous = index_folder(src, str(db)).chunks
    assert previous == open_table(db).count_rows()
    for round_no, count in enumerate([360, 240, 330]):
        generate_folder(src, count, f"round{round_no}")
        new = len(expected_rows(src))
        reader = Reader(db)
        thread, done, out = index_in_thread(src, db)
        thread.start()
        reader.run_until(done)
        thread.join()
        assert "error" not in out, out.get("error")
        assert out["report"].chunks == new
        assert reader.errors == []
        assert set(reader.counts) <= {previous, new}, (previous, new, sorted(set(reader.counts)))
        assert reader.counts[-1] == new
        assert reader.reads >= 2
        tbl = open_table(db)
        hits = tbl.search(f"round{round_no}", query_type="fts").limit(10_000).to_list()
        assert len({h["path"] for h in hits}) == count
        assert_full_fts(db)
        previous = new


@pytest.mark.slow
def test_reader_during_first_build_never_sees_table_without_fts(tmp_path: Path) -> None:
    """The table must not appear before its full-text index: a reader that finds the table
    and searches must succeed. (It once failed: the table was created first and its index
    built after, so for a moment the table existed without it and a search raised
    "Cannot perform full text search unless an INVERTED index has been created".)"""
    src = tmp_path / "src"
    generate_folder(src, 300, "first")
    total = len(expected_rows(src))
    errors: list[str] = []
    counts: set[int] = set()
    for attempt in range(8):
        db = tmp_path / f"db{attempt}"
        reader = Reader(db)
        thread, done, out = index_in_thread(src, db)
        thread.start()
        reader.run_until(done, wait_for_table=True)
        thread.join()
        assert "error" not in out, out.get("error")
        errors.extend(reader.errors)
        counts.update(reader.counts)
        assert reader.counts[-1] == total
        if errors:
            break
    assert not any(FTS_MISSING in e for e in errors), errors[:3]
    assert errors == []
    assert counts <= {0, total}


# --------------------------------------------------------------------------- 8. errors


def test_missing_source_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(IndexingError, match="does not exist") as info:
        index_folder(missing, str(tmp_path / "db"))
    assert str(missing) in str(info.value)
    assert not (tmp_path / "db").exists()


def test_source_that_is_a_file(tmp_path: Path) -> None:
    src = write(tmp_path / "file.md", "# x\n\ny\n")
    with pytest.raises(IndexingError, match="is not a folder"):
        index_folder(src, str(tmp_path / "db"))


def test_database_path_that_is_a_file(docs: Path, tmp_path: Path) -> None:
    db = write(tmp_path / "db", "not a database")
    with pytest.raises(IndexingError, match="is a file"):
        index_folder(docs, str(db))
    assert db.read_text() == "not a database"


def test_existing_table_of_another_layout_is_left_alone(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    conn = lancedb.connect(str(db))
    foreign = conn.create_table(TABLE, data=pa.table({"id": ["a", "b"], "body": ["first", "second"]}))
    version = foreign.version
    with pytest.raises(IndexingError, match=TABLE) as info:
        index_folder(docs, str(db))
    message = str(info.value)
    assert "text" in message and "path" in message
    assert "\n" not in message
    tbl = open_table(db)
    assert tbl.version == version
    assert tbl.schema.names == ["id", "body"]
    assert tbl.to_arrow().to_pylist() == [{"id": "a", "body": "first"}, {"id": "b", "body": "second"}]
    assert tbl.list_indices() == []
    # Another table name in the same database works.
    index_folder(docs, str(db), table="mine")
    assert ReadOnlyDatabase(str(db)).table_names() == ["documents", "mine"]


def test_a_table_after_the_first_ten_is_updated_not_created_again(tmp_path: Path) -> None:
    # lancedb's deprecated table_names() lists 10 names: the writer took the 12th table for a new
    # one and failed to put a "new" table in its place ("Directory not empty").
    src, db = tmp_path / "src", tmp_path / "db"
    write(src / "a.md", "# Zebras\n\nZebras graze in herds.\n")
    for n in range(11):
        index_folder(src, str(db), table=f"t{n:02d}")
    index_folder(src, str(db), table="zz")
    ledgers = list(db.glob(".*zz*.state.json"))
    assert len(ledgers) == 1  # without it the writer looks the table up instead of trusting it
    ledgers[0].unlink()
    write(src / "a.md", "# Zebras\n\nZebras graze in herds. Okapis do not.\n")
    report = index_folder(src, str(db), table="zz")
    assert (report.added, report.updated, report.deleted) == (0, 1, 0)
    assert ["Okapis" in row["text"] for row in table_rows(db, "zz")] == [True]
    assert ReadOnlyDatabase(str(db)).table_names() == [*(f"t{n:02d}" for n in range(11)), "zz"]


# --------------------------------------------------------------------------- 9. CLI


def test_cli_index_prints_summary_on_stderr(docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(docs), str(db)])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    summary = " ".join(result.stderr.split())
    assert "Indexed 10 file(s) into 10 chunk(s)" in summary
    assert "10 added" in summary and "0 skipped" in summary
    assert "Traceback" not in result.stderr
    assert len(table_rows(db)) == 10
    assert_full_fts(db)

    again = runner.invoke(app, ["index", str(docs), str(db)])
    assert again.exit_code == 0
    assert "no changes" in " ".join(again.stderr.split())


def test_cli_index_lists_skipped_files(docs: Path, tmp_path: Path) -> None:
    (docs / "bad.md").write_bytes(b"\x00\x01\x02")
    result = CliRunner().invoke(app, ["index", str(docs), str(tmp_path / "db")])
    assert result.exit_code == 0
    stderr = " ".join(result.stderr.split())
    assert "skipped bad.md: looks like a binary file" in stderr
    assert "1 skipped" in stderr


def test_cli_index_missing_source_is_one_line_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    result = CliRunner().invoke(app, ["index", str(missing), str(tmp_path / "db")])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert re.match(r"^lancelot: error: source folder .*does not exist", lines[0])
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert not (tmp_path / "db").exists()


def test_cli_index_database_file_is_one_line_error(docs: Path, tmp_path: Path) -> None:
    db = write(tmp_path / "db.txt", "x")
    result = CliRunner().invoke(app, ["index", str(docs), str(db)])
    assert result.exit_code == 1
    assert result.stderr.startswith("lancelot: error: database path")
    assert len(result.stderr.strip().splitlines()) == 1
