"""Code's compound names found by their words (issue 47): the full-text index keeps ``inflationRate``
as one term, so a camelCase body (Go, Java, JavaScript; Rust's and Python's type names) was found
only by its comments, and design notes saying the same in prose ranked first. A code chunk's text
now ends with the words of those names (lancelot_cli/codewords.py); hits and the file's lines
are shown without them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from lancelot_cli.codewords import compound_name_words, with_name_words, without_name_words
from lancelot_cli.indexer.code import code_chunks

GO = textwrap.dedent(
    """\
    package mint

    import "time"

    func (m Minter) CalculateInflationRate(genesisTime time.Time, now time.Time) float64 {
    \tyearsSinceGenesis := now.Sub(genesisTime).Hours() / HoursPerYear
    \treturn InitialInflationRate * math.Pow(1-DisinflationRate, yearsSinceGenesis)
    }
    """
)


def test_compound_names_give_their_words_once_and_plain_or_snake_case_names_none() -> None:
    assert compound_name_words(GO) == [
        "calculate inflation rate",
        "genesis time",  # used twice, given once
        "years since genesis",
        "hours per year",
        "initial inflation rate",
        "disinflation rate",
    ]
    assert compound_name_words("def years_since_genesis(now): return now") == []  # the index splits these
    assert compound_name_words("parse_HTTPResponse") == ["parse http response"]
    # every word also stands on its own in the text: nothing to add
    assert compound_name_words("inflation = rate; inflationRate = inflation * rate") == []


def test_a_chunk_ends_with_the_words_and_gives_the_files_lines_back_without_them() -> None:
    (chunk,) = code_chunks(GO, ".go", 4000) or []
    assert chunk.text.endswith("\u27eb") and "calculate inflation rate" in chunk.text.rsplit("\n", 1)[1]
    assert without_name_words(chunk.text) == GO
    assert without_name_words("plain text") == "plain text"
    assert with_name_words("x = 1") == "x = 1"  # no compound name: the text as it is


def test_a_camel_case_function_is_found_by_its_words_before_prose_that_names_them(tmp_path: Path) -> None:
    """The question is in words; the Go function spells them only in camelCase, and a design note
    says them once in prose. Before, the function held none of the query's terms and only the note
    was found. The hit's text is the file's lines, without the line of words."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load

    root = tmp_path / "repo"
    (root / "x" / "mint").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "go.mod").write_text("module example.com/chain\n")
    (root / "x" / "mint" / "minter.go").write_text(GO)
    (root / "docs" / "inflation.md").write_text(
        "# Inflation\n\nThe inflation rate falls each year since genesis, as the schedule in the README says.\n"
    )
    db = tmp_path / "db"
    index_folder(root, str(db))
    engine = Engine(load({"LANCEDB_PATH": str(db)}))
    hits = engine.search("where is the inflation rate calculated from the years since genesis", limit=5).hits
    assert [h.source for h in hits][:2] == ["x/mint/minter.go", "docs/inflation.md"], [h.source for h in hits]
    assert hits[0].text == GO
    assert "\u27ea" not in hits[0].snippet
    # Reading the file back (lancedb_document, `lancelot show`) and a context block give its lines only.
    shown = engine.document(source="x/mint/minter.go")
    assert "\u27ea" not in shown.context and "CalculateInflationRate" in shown.context
    context = engine.query("where is the inflation rate calculated from the years since genesis")
    assert "\u27ea" not in context.context and "CalculateInflationRate" in context.context
