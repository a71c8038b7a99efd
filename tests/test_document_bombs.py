"""Document bombs (issue 37 item 4, with item 7's EPUB findings and issue 39 item 4): small PDF, Word,
PowerPoint and EPUB files that cost their reader far more than their size. Each is built here from
raw bytes (tests/support/document_bombs.py). A run reads such files in a worker process under the
bounds of indexer/bounds.py: a file past one is skipped with a one-line reason naming it, and the
rest of the folder is indexed; each part of a deck or a book is read once.

The run-level tests start the real `lancelot index` with 2 GB of address space (``RLIMIT_AS``), so
a bomb read in the run's own process (as before) ends the run or fails it; they are slow (they
start processes). The reader-level tests run in this process and are fast."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.indexer.pdf_text import Bookmark, place_headings
from lancelot_cli.indexer.sources import SourceError, read_document
from tests.conftest import REPO, lancelot_command, subprocess_env
from tests.support.document_bombs import (
    empty_paragraphs_docx,
    inflating_pdf,
    nested_forms_pdf,
    paragraph,
    raw_docx,
    raw_epub,
    repeated_chapter_epub,
    repeated_image_docx,
    repeated_slide_pptx,
)
from tests.support.document_files import manual_pdf
from tests.support.growth import assert_linear

ADDRESS_SPACE = 2 * 1024**3  # what the runs below may use: a bomb read in the run's process passes it
FINE = "# Fine\n\nAn ordinary note about sprockets.\n"


def put(folder: Path, files: dict[str, bytes | str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return folder


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def index_bounded(src: Path, db: Path, timeout: float = 180) -> tuple[dict[str, Any], str]:
    """`lancelot index SRC DB --no-embed --json` with 2 GB of address space: (its report, stderr)."""
    done = subprocess.run(
        [*lancelot_command(), "index", str(src), str(db), "--no-embed", "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=subprocess_env(),
        cwd=db.parent,
        preexec_fn=_bounded,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout), done.stderr


def reasons(report: dict[str, Any]) -> dict[str, str]:
    return {item["path"]: item["reason"] for item in report["skipped"]}


# -- a run: bombs skipped with a reason, the rest indexed ------------------------------------------------


@pytest.mark.slow
def test_pdf_bombs_are_skipped_with_a_reason_and_the_rest_is_indexed(tmp_path: Path) -> None:
    """Nested forms (2 KB) made PDFium abort the whole run (8.6 GB; 1.9 GB at depth 6); a content
    stream inflating to 256 MB took 4 GB. Now each costs one worker ~3 s and 1 GiB."""
    src = put(
        tmp_path / "src",
        {
            "nested.pdf": nested_forms_pdf(depth=7),
            "inflating.pdf": inflating_pdf(megabytes=256),
            "manual.pdf": manual_pdf(),
            "fine.md": FINE,
        },
    )
    assert (src / "nested.pdf").stat().st_size < 4096
    report, _ = index_bounded(src, tmp_path / "db")
    why = reasons(report)
    assert set(why) == {"nested.pdf", "inflating.pdf"}
    for reason in why.values():
        assert "\n" not in reason and "1.0 GiB of memory, the most one file may use" in reason
    assert report["files"] == 2 and report["chunks"] == 5  # the manual's four pages and the note


@pytest.mark.slow
def test_a_word_document_of_empty_paragraphs_is_skipped_for_its_memory(tmp_path: Path) -> None:
    """36 KB of four million empty paragraphs: 3.9 GB and 261 s before; now ~20 s and 1 GiB.

    The reason says the memory bound came first, before the time bound (60 s of CPU time). Nothing
    here bounds the wall clock: at a load of 10 on 2 cores the run takes minutes, and the timeout
    only guards against a hang."""
    src = put(tmp_path / "src", {"empty.docx": empty_paragraphs_docx(), "fine.md": FINE})
    report, _ = index_bounded(src, tmp_path / "db", timeout=900)
    assert reasons(report) == {"empty.docx": "reading it needs more than 1.0 GiB of memory, the most one file may use"}
    assert report["files"] == 1


@pytest.mark.slow
def test_decks_and_books_that_repeat_a_part_are_read_once_in_a_run(tmp_path: Path) -> None:
    """A 4 KB deck listing one slide 1,000 times and a 2 KB book whose spine repeats a chapter
    1,000 times: 501,001 chunks and 2.3 GB each before; now 501 chunks each."""
    src = put(
        tmp_path / "src",
        {"deck.pptx": repeated_slide_pptx(), "book.epub": repeated_chapter_epub(), "fine.md": FINE},
    )
    report, _ = index_bounded(src, tmp_path / "db")
    assert report["skipped"] == [] and report["files"] == 3
    assert report["chunks"] < 1100


@pytest.mark.slow
def test_watch_goes_on_after_a_pdf_bomb(tmp_path: Path) -> None:
    """`--watch` died with the run's process on the nested-forms PDF; now it skips it and indexes
    the next change."""
    import lancedb

    src = put(tmp_path / "src", {"fine.md": FINE})
    db = tmp_path / "db"
    watcher = subprocess.Popen(
        [*lancelot_command(), "index", str(src), str(db), "--no-embed", "--watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
        cwd=tmp_path,
        preexec_fn=_bounded,
    )
    try:
        assert _wait_for(lambda: db.exists() and "fine.md" in _paths(lancedb, db), 60)
        put(src, {"nested.pdf": nested_forms_pdf(depth=7)})
        time.sleep(1)
        put(src, {"later.md": "# Later\n\nWritten after the bomb.\n"})
        assert _wait_for(lambda: "later.md" in _paths(lancedb, db), 90), "the watcher indexed nothing after the bomb"
        assert watcher.poll() is None
    finally:
        watcher.send_signal(signal.SIGTERM)
        _, err = watcher.communicate(timeout=30)
    assert "skipped (nested.pdf)" in err
    assert "Traceback" not in err


def _paths(lancedb: Any, db: Path) -> set[str]:
    try:
        return {row["path"] for row in lancedb.connect(db).open_table("documents").to_arrow().to_pylist()}
    except Exception:  # noqa: BLE001 - not there yet
        return set()


def _wait_for(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


# -- the worker's deadline: CPU time, with a wall-clock backstop ------------------------------------------

# The first job of each run below warms its worker up under a generous deadline: a worker's start (a
# fresh interpreter, its imports) counts towards the job it starts on. CPU time is read from /proc.
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU time is read from /proc")


def _ended(job: object, ended: Any) -> Any:
    return ended


@pytest.mark.slow
@linux_only
def test_a_reader_that_waits_past_its_deadline_without_the_cpu_goes_on() -> None:
    """On a busy machine a reader waits for the CPU; the wall clock runs on, its CPU time does not.
    Here it sleeps 3 s with a deadline of 1 s of CPU time (and 10 s on the wall clock)."""
    from lancelot_cli.indexer.pool import imap

    results = list(imap(time.sleep, [0.0, 3.0], 1, _ended, deadline=lambda job: 1.0 if job else 60.0))
    assert results == [None, None]


@pytest.mark.slow
@linux_only
def test_a_reader_past_its_cpu_time_is_killed_and_the_next_job_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    from lancelot_cli.indexer import pool
    from tests.support.cpu_jobs import burn

    monkeypatch.setattr(pool, "WALL_FACTOR", 1000.0)  # only the CPU time stops it, however busy the machine
    results = list(pool.imap(burn, [0.0, 30.0, 0.0], 1, _ended, deadline=lambda job: 0.5 if job else 60.0))
    ended = results[1]
    assert isinstance(ended, pool.Ended) and ended.code == -signal.SIGKILL
    assert ended.cpu and ended.seconds is not None and ended.seconds >= 0.5
    assert ended.seconds < 10  # CPU seconds: the parent looks at them every second (pool.POLL) at least
    assert isinstance(results[2], float)  # burn's own result, from the worker that took over


@pytest.mark.slow
def test_a_reader_stuck_without_the_cpu_is_killed_by_the_wall_clock_and_the_next_job_is_done() -> None:
    """A worker that spends no CPU time (a hung file system) is killed after ``WALL_FACTOR`` times
    its deadline on the wall clock (or its deadline, where CPU time cannot be read)."""
    from lancelot_cli.indexer.pool import WALL_FACTOR, Ended, imap

    deadline = 0.2
    results = list(imap(time.sleep, [0.0, 60.0, 0.0], 1, _ended, lambda job: deadline if job else 60.0))
    ended = results[1]
    assert isinstance(ended, Ended) and ended.code == -signal.SIGKILL and not ended.cpu
    backstop = deadline * WALL_FACTOR if sys.platform.startswith("linux") else deadline
    assert ended.seconds is not None and ended.seconds >= backstop
    assert results[0] is None and results[2] is None  # time.sleep's own result, also from the worker that took over


@linux_only
def test_a_workers_cpu_time_and_its_waits_for_a_cpu_are_read_from_proc() -> None:
    from lancelot_cli.indexer.pool import _cpu_seconds, _queued_seconds

    cpu, queued = _cpu_seconds(os.getpid()), _queued_seconds(os.getpid())
    assert cpu is not None and abs(cpu - time.process_time()) < 0.1  # /proc counts in ticks (10 ms)
    assert queued is not None and queued >= 0
    assert _cpu_seconds(None) is None and _queued_seconds(None) is None


def test_a_file_past_its_deadline_is_skipped_with_that_reason() -> None:
    from lancelot_cli.indexer import bounds
    from lancelot_cli.indexer.pool import Ended
    from lancelot_cli.indexer.reading import _crashed

    why = _crashed(("/nowhere", "slow.pdf", 5_000_000), Ended(-9, 61.8, cpu=True))
    assert str(why) == "reading it took more than 61 s of CPU time, the most one file may take"
    why = _crashed(("/nowhere", "stuck.pdf", 5_000_000), Ended(-9, 1100.4))
    assert str(why) == "reading it took longer than 1100 s, the longest one file may take"
    assert bounds.seconds_for(5 * 1024 * 1024) == 110.0


# -- the readers, in this process ---------------------------------------------------------------------


def test_a_deck_that_lists_one_slide_a_thousand_times_reads_it_once(tmp_path: Path) -> None:
    doc = read_document(put(tmp_path, {"deck.pptx": repeated_slide_pptx(words=50)}), "deck.pptx")
    assert len(doc.parts) == 1 and doc.parts[0][1].startswith("# Slide 1\n\nagain again")


def test_a_book_reads_each_file_once_whatever_its_spine_and_fragments_say(tmp_path: Path) -> None:
    """Debian's live manual lists each chapter once per section (`about.xhtml#o8`) and was read up
    to 27 times (2,175 chunks, five identical hits); a spine may also repeat a chapter itself."""
    book = raw_epub(
        {"one.xhtml": "<p>first chapter</p>", "two.xhtml": "<p>second chapter</p>"},
        ["one", "one#a", "two", "two#b", "one", "one"],
        {"one": "one.xhtml", "one#a": "one.xhtml#a", "two": "two.xhtml", "two#b": "two.xhtml#b"},
    )
    doc = read_document(put(tmp_path, {"book.epub": book}), "book.epub")
    assert [text for _, text in doc.parts] == ["first chapter", "second chapter"]


def test_a_book_with_a_missing_chapter_keeps_the_others_and_names_it(tmp_path: Path) -> None:
    chapters = {"one.xhtml": "<p>first chapter</p>", "three.xhtml": "<p>third chapter</p>"}
    spine = ["one", "two", "three"]
    listed = {"one": "one.xhtml", "two": "two.xhtml", "three": "three.xhtml"}
    doc = read_document(put(tmp_path, {"book.epub": raw_epub(chapters, spine, listed)}), "book.epub")
    assert [text for _, text in doc.parts] == ["first chapter", "third chapter"]
    assert doc.notes == ("chapter not indexed: OEBPS/two.xhtml is missing from the archive",)
    put(tmp_path, {"empty.epub": raw_epub({}, spine, listed)})
    with pytest.raises(SourceError, match=r"^none of its 3 chapter\(s\) can be read: OEBPS/one.xhtml is missing"):
        read_document(tmp_path, "empty.epub")


def test_a_file_that_is_no_zip_is_named_with_its_article(tmp_path: Path) -> None:
    put(tmp_path, {"book.epub": b"plain text", "deck.pptx": b"plain text"})
    for name, start in (("book.epub", "not an EPUB book: "), ("deck.pptx", "not a PowerPoint deck (.pptx): ")):
        with pytest.raises(SourceError) as caught:
            read_document(tmp_path, name)
        assert str(caught.value).startswith(start)


def test_text_past_the_bound_is_refused_as_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lancelot_cli.indexer import bounds

    monkeypatch.setattr(bounds, "TEXT_CHARS", 10_000)
    chapters = {f"{n}.xhtml": f"<p>{'words ' * 1000}</p>" for n in range(5)}  # 6,000 characters each
    put(tmp_path, {"long.epub": raw_epub(chapters, list(chapters))})
    with pytest.raises(SourceError, match=r"^its text runs past 10,000 characters, the most one file may give$"):
        read_document(tmp_path, "long.epub")
    put(tmp_path, {"long.docx": raw_docx(paragraph("words " * 2000))})
    with pytest.raises(SourceError, match=r"^its text runs past 10,000 characters"):
        read_document(tmp_path, "long.docx")


def test_a_word_document_never_reads_its_images(tmp_path: Path) -> None:
    """One image drawn 64 times was copied into the HTML as base64 64 times (4.3 GB; 8.5 GB for a
    32 MB image): images are not text and are never read now."""
    put(tmp_path, {"pictures.docx": repeated_image_docx(references=16, megabytes=8)})
    tracemalloc.start()
    try:
        doc = read_document(tmp_path, "pictures.docx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.text == "pictures"
    assert peak < 32 * 1024 * 1024, f"{peak:,} bytes at the peak"


def test_a_word_part_past_the_member_bound_is_refused(tmp_path: Path) -> None:
    from lancelot_cli.indexer.zipped import MAX_MEMBER_BYTES

    put(tmp_path, {"huge.docx": raw_docx(paragraph("a" * MAX_MEMBER_BYTES))})
    with pytest.raises(SourceError, match=r"^word/document.xml inflates to [\d,]+ bytes \(more than 67,108,864\)$"):
        read_document(tmp_path, "huge.docx")


def test_mammoth_is_one_that_opens_no_linked_file() -> None:
    """mammoth before 1.11 opened files an image links to (`r:link`), anywhere on the disk
    (CVE-2025-11849); 1.11 turned that off by default."""
    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("docs", "test"):
        (mammoth,) = [r for r in map(Requirement, extras[extra]) if r.name == "mammoth"]
        assert "1.10.99" not in mammoth.specifier and "1.11.0" in mammoth.specifier, f"{extra}: {mammoth}"


# -- the bookmarks of a page, placed in linear time ---------------------------------------------------------


def _page(n: int) -> tuple[list[str], list[Bookmark]]:
    """A page of ``n`` lines under ``n`` bookmarks: every other one names a line further down, the
    others name no line (each was searched for over the whole rest of the page)."""
    lines = [f"Section {i}" for i in range(n)]
    marks = [Bookmark(1, f"Section {i}" if i % 2 else f"Missing {i}", 0) for i in range(n)]
    return lines, marks


def test_placing_bookmarks_takes_linear_time() -> None:
    """8,000 bookmarks on a page took 98 s, four times as long per doubling."""
    assert_linear(lambda page: place_headings(*page), _page, start=256)


def test_placing_bookmarks_keeps_what_it_placed() -> None:
    """A heading in place of its line, or after the heading placed before it when no line starts
    with its title (as before: the same output as the old search on 100,000 random pages)."""
    lines, marks = _page(4)
    assert place_headings(lines, marks) == [
        "## Missing 0",
        "Section 0",
        "## Section 1",
        "## Missing 2",
        "Section 2",
        "## Section 3",
    ]
    run_in = ["Valid The valid(x) function", "Value. B = value(A)"]
    assert place_headings(run_in, [Bookmark(0, "Valid", 0), Bookmark(0, "The valid", 0), Bookmark(0, "Value", 0)]) == [
        "# Valid",
        "# The valid",
        "(x) function",
        "# Value",
        "B = value(A)",
    ]
