"""Which documents are architecture decision records, and their status and date
(indexer/decisions.py, issue 47): by folder, by file name and by sections, and precise about
numbered files that are not records."""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_cli.indexer.decisions import decision_meta
from lancelot_cli.indexer.markup import asciidoc_to_markdown, rst_to_markdown
from tests.support.growth import assert_linear

FIXTURES = Path(__file__).parent / "fixtures" / "markup"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


NYGARD = _fixture("0001-record-architecture-decisions.md")


@pytest.mark.parametrize(
    ("path", "fixture", "expected"),
    [
        (
            "doc/adr/0001-record-architecture-decisions.md",
            "0001-record-architecture-decisions.md",
            {"kind": "adr", "status": "accepted", "date": "2019-02-11"},
        ),
        (
            "docs/decisions/0004-use-madr.md",
            "0004-use-madr.md",
            {"kind": "adr", "status": "accepted", "date": "2024-05-10"},
        ),
        (
            "docs/architecture/decisions/0003-store-vectors-in-lancedb.rst",
            "0003-store-vectors-in-lancedb.rst",
            {"kind": "adr", "status": "accepted", "date": "2024-03-18"},
        ),
        (
            "docs/decisions/0005-sphinx-status-section.rst",
            "0005-sphinx-status-section.rst",
            {"kind": "adr", "status": "superseded"},
        ),
        (
            "docs/adr/0002-use-postgresql.adoc",
            "0002-use-postgresql.adoc",
            {"kind": "adr", "status": "accepted", "date": "2023-11-02"},
        ),
    ],
)
def test_records_give_kind_status_and_date(path: str, fixture: str, expected: dict[str, str]) -> None:
    assert decision_meta(path, None, _fixture(fixture)) == expected


@pytest.mark.parametrize(
    ("fixture", "convert"),
    [
        ("0003-store-vectors-in-lancedb.rst", rst_to_markdown),
        ("0005-sphinx-status-section.rst", rst_to_markdown),
        ("0002-use-postgresql.adoc", asciidoc_to_markdown),
    ],
)
def test_the_converted_markdown_reads_the_same(fixture: str, convert: object) -> None:
    """Status and sections survive the conversion (an AsciiDoc page's attributes do not: its date is
    then the first ISO date near the top, the header's status is lost, so pass the file as written)."""
    assert callable(convert)
    source = _fixture(fixture)
    title, markdown = convert(source)
    raw = decision_meta(f"docs/decisions/{fixture}", title, source)
    converted = decision_meta(f"docs/decisions/{fixture}", title, markdown)
    assert converted["kind"] == "adr"
    if fixture.endswith(".rst"):
        assert converted == raw


def test_a_nygard_record_outside_any_adr_folder_is_known_by_its_sections() -> None:
    assert decision_meta("notes/use-adrs.md", "Record architecture decisions", NYGARD.replace("# 1. ", "# ")) == {
        "kind": "adr",
        "status": "accepted",
        "date": "2019-02-11",
    }


@pytest.mark.parametrize(
    ("path", "text"),
    [
        # a numbered chapter of a Sphinx manual: no Status / Context / Decision
        ("docs/guide/01-introduction.rst", "Introduction\n============\n\nReleased 2021-04-01.\n\nContext\n-------\n"),
        ("docs/0002-install.md", "# Install\n\n## Context\n\nRun pip.\n\n## Usage\n"),
        # a how-to with a Context section and a Decision table, but no status
        ("docs/howto.md", "# How to decide\n\n## Context\n\nText.\n\n## Decision\n\nText.\n"),
        # the folder's index and its template are not records
        ("docs/adr/README.md", "# Decisions\n\n## Status\n\nProposed, Accepted\n\n## Context\n\n## Decision\n"),
        ("docs/adr/index.rst", "Decisions\n=========\n\n.. toctree::\n   :glob:\n\n   *\n"),
        ("docs/adr/0000-template.md", NYGARD),
        ("docs/guide.md", "# Guide\n\nStatus: beta\n\nSome text.\n"),
    ],
)
def test_other_documents_are_not_records(path: str, text: str) -> None:
    assert decision_meta(path, None, text) == {}


def test_a_numbered_file_in_an_adr_folder_is_a_record_without_sections() -> None:
    assert decision_meta("docs/adr/0007-drop-python-3-9.md", None, "# Drop Python 3.9\n\nWe drop it.\n") == {
        "kind": "adr"
    }


def test_an_adr_named_file_needs_one_section() -> None:
    text = "# ADR-012: Use Redis\n\n**Status:** Proposed\n**Date:** 2025-01-09\n\n## Context\n\nCaching.\n"
    assert decision_meta("design/ADR-012-use-redis.md", None, text) == {
        "kind": "adr",
        "status": "proposed",
        "date": "2025-01-09",
    }
    assert decision_meta("design/ADR-012-use-redis.md", None, "# Use Redis\n\nCaching.\n") == {}


@pytest.mark.parametrize(
    ("status_line", "status"),
    [
        ("Accepted", "accepted"),
        ("**Accepted**", "accepted"),
        ("Superseded by [ADR-0009](0009-x.md)", "superseded"),
        ("Deprecated", "deprecated"),
        ("Rejected (2020-01-01)", "rejected"),
        ("* Proposed", "proposed"),
        ("Proposed | Accepted | Deprecated | Superseded", None),  # a template's choices
    ],
)
def test_status_is_its_first_word_lower_cased(status_line: str, status: str | None) -> None:
    text = f"# 3. Use X\n\n## Status\n\n{status_line}\n\n## Context\n\nC.\n\n## Decision\n\nD.\n"
    assert decision_meta("docs/decisions/0003-use-x.md", None, text).get("status") == status


@pytest.mark.parametrize(
    "field",
    ["Status: Accepted", ":Status: Accepted", "* Status: accepted", "- **Status**: Accepted", "**Status:** accepted"],
)
def test_status_fields_in_their_forms(field: str) -> None:
    text = f"# Use X\n\n{field}\n\n## Context\n\nC.\n\n## Decision\n\nD.\n"
    assert decision_meta("docs/decisions/use-x.md", None, text)["status"] == "accepted"


def test_the_date_field_wins_over_an_earlier_date_and_bad_dates_are_skipped() -> None:
    text = "# 2. Use X\n\nSee notes of 2018-13-40 and 2018-02-03.\n\nDate: 2019-05-06\n\n## Status\n\nAccepted\n"
    assert decision_meta("adr/0002-use-x.md", None, text)["date"] == "2019-05-06"
    assert decision_meta("adr/0002-use-x.md", None, text.replace("Date: 2019-05-06", ""))["date"] == "2018-02-03"


def test_a_status_heading_inside_a_code_fence_does_not_count() -> None:
    text = "# Guide\n\n```markdown\n## Status\n\nAccepted\n\n## Context\n\n## Decision\n```\n"
    assert decision_meta("docs/guide.md", None, text) == {}


def test_reading_is_linear() -> None:
    assert_linear(lambda text: decision_meta("docs/adr/0001-x.md", None, text), lambda n: "Status" + ":" * n, 256)
    assert_linear(lambda text: decision_meta("docs/adr/0001-x.md", None, text), lambda n: "0" * n + "-" * n, 256)
