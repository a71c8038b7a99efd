"""Each row analysed in its own language (issue 51): a column of the rows of each language whose
analysis differs from the text index's (``text_ko``, ``text_de``...), with its own full-text index;
a query runs in the indexes its script and words fit, and the scores are summed.

Real LanceDB tables made by ``index_folder``; every expected value is read off the fixture texts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb
import pytest

from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.read.facts import fts_details
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

EN = "Refunds are issued within 14 days of the purchase. Running the refund workflow needs the order number.\n"
# "파일을" (the file, as object) and "업로드하는" (uploading): a query saying "파일에서" or "업로드"
# shares no whole word with them, only 2-3 character pieces.
KO = "# 안내 문서\n\n사용자가 파일을 업로드하는 방법을 설명합니다. 업로드된 파일은 임시 폴더에 저장됩니다.\n"
# German: "Dateien" (plural) in the text, "Datei" in the query: one German stem, two English terms.
DE = "# Hochladen\n\nDie Dateien werden mit einem Formular hochgeladen und auf dem Server gespeichert.\n"


def english_pages(src: Path, count: int = 6) -> None:
    src.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (src / f"page{n}.md").write_text(f"# Page {n}\n\n{EN}\nSee page {n} for the details.\n", encoding="utf-8")


def search(monkeypatch: pytest.MonkeyPatch, db: Path, query: str, **kwargs: Any) -> dict[str, Any]:
    return to_wire(engine_for(db, monkeypatch).search(query, search_type="text", **kwargs))


def table_of(db: Path) -> Any:
    return lancedb.connect(str(db)).open_table("documents")


def column_values(db: Path, column: str) -> dict[str, str | None]:
    rows = table_of(db).search().select(["id", column]).limit(None).to_list()
    return {row["id"]: row[column] for row in rows}


def tokenizers(db: Path) -> dict[str, Any]:
    details = fts_details(table_of(db).list_indices())
    return {column: dict(found).get("base_tokenizer") for column, found in details.items()}


def test_korean_pages_among_english_ones_get_n_grams_and_english_pages_stemming(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An English table's Korean pages: before, one English analysis for all (a Korean word with
    another particle matched nothing); now their text also sits in ``text_ko``, cut into n-grams,
    and only theirs."""
    src = tmp_path / "src"
    english_pages(src)
    (src / "upload.md").write_text(KO, encoding="utf-8")
    db = tmp_path / "db"
    assert index_folder(src, str(db)).languages[0] == "en"
    hits = search(monkeypatch, db, "파일에서 업로드")["hits"]
    assert hits and hits[0]["source"] == "upload.md"
    assert "text_ko" not in hits[0].get("metadata", {})  # the text again: never sent
    korean = column_values(db, "text_ko")
    assert {key for key, value in korean.items() if value} == {"upload.md#0"}
    assert tokenizers(db)["text"] != "ngram" and tokenizers(db)["text_ko"] == "ngram"
    phrased = search(monkeypatch, db, "파일에서 업로드", queries=["업로드한 파일을 저장"])
    assert phrased["hits"][0]["source"] == "upload.md" and not phrased.get("noGoodMatch")
    stemmed = search(monkeypatch, db, "runs refund")["hits"]
    assert stemmed and stemmed[0]["source"].startswith("page")  # "runs" finds "Running"


def test_a_korean_table_cuts_only_its_korean_rows_into_n_grams(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A table mostly in Korean: before, its text index cut every row, English pages too, into
    n-grams (6x slower, 3x bigger); now the text index is English's and the n-grams are the
    Korean rows' alone."""
    src = tmp_path / "src"
    src.mkdir()
    for n in range(4):
        (src / f"ko{n}.md").write_text(KO + f"\n{n}번째 문서입니다.\n", encoding="utf-8")
    (src / "en.md").write_text(f"# Refunds\n\n{EN}", encoding="utf-8")
    db = tmp_path / "db"
    assert index_folder(src, str(db)).languages[0] == "ko"
    assert tokenizers(db)["text"] != "ngram" and tokenizers(db)["text_ko"] == "ngram"
    korean = column_values(db, "text_ko")
    assert not korean["en.md#0"] and all(korean[f"ko{n}.md#0"] for n in range(4))
    hits = search(monkeypatch, db, "파일에서")["hits"]
    assert hits and all(hit["source"].startswith("ko") for hit in hits)
    one_syllable = search(monkeypatch, db, "번")  # shorter than every n-gram: looked for in the text
    assert one_syllable["hits"] and "pieces of 2 or more characters" in one_syllable["note"]


def test_a_german_question_finds_a_german_page_beside_english_ones_by_its_stem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A German page in an English table: the German question runs in the German rows' index
    too (German stemming: "Datei" finds "Dateien"); the English one keeps its stemming."""
    src = tmp_path / "src"
    english_pages(src)
    (src / "hochladen.md").write_text(DE, encoding="utf-8")
    db = tmp_path / "db"
    assert index_folder(src, str(db)).languages[0] == "en"
    hits = search(monkeypatch, db, "Wie kann ich eine Datei speichern")["hits"]
    assert hits and hits[0]["source"] == "hochladen.md"
    assert {key for key, value in column_values(db, "text_de").items() if value} == {"hochladen.md#0"}


def test_the_same_folder_gives_the_same_rows_fresh_or_a_file_at_a_time(tmp_path: Path) -> None:
    """Issue 51: a table built whole and one built a file at a time hold the same rows, each with
    its own language's column."""
    src = tmp_path / "src"
    english_pages(src)
    (src / "upload.md").write_text(KO * 40, encoding="utf-8")
    index_folder(src, str(tmp_path / "fresh"))
    piecewise = tmp_path / "piecewise-src"
    english_pages(piecewise)
    index_folder(piecewise, str(tmp_path / "piecewise"))
    (piecewise / "upload.md").write_bytes((src / "upload.md").read_bytes())
    index_folder(piecewise, str(tmp_path / "piecewise"))
    for column in ("text", "text_ko", "hash"):
        assert column_values(tmp_path / "fresh", column) == column_values(tmp_path / "piecewise", column), column
    assert tokenizers(tmp_path / "fresh") == tokenizers(tmp_path / "piecewise")


def test_an_english_table_has_no_language_columns(tmp_path: Path) -> None:
    """One language: the table is as before (no column added, the same hashes as rows_for's)."""
    src = tmp_path / "src"
    english_pages(src)
    db = tmp_path / "db"
    index_folder(src, str(db))
    assert not [name for name in table_of(db).schema.names if name.startswith("text_")]


def test_a_query_runs_in_the_languages_its_script_and_words_fit() -> None:
    from lancelot_cli.storage.analyzer import query_languages

    assert query_languages("파일 업로드") == ("ko",)
    assert query_languages("Wie kann ich die Datei speichern") == ("de",)
    assert query_languages("How do I upload a file") == ("en",)
    assert query_languages("GZipMiddleware minimum_size") == ()  # names and identifiers: the text index alone
    assert query_languages("how do I 업로드") == ("en", "ko")


def test_fused_scores_are_summed_and_ties_keep_the_first_ranking_order() -> None:
    from lancelot_cli.storage.read.row_languages import fuse

    assert fuse([[("a", 2.0), ("b", 1.0)], [("b", 1.5), ("c", 1.0)]], 3) == [("b", 2.5), ("a", 2.0), ("c", 1.0)]
    assert fuse([[("a", 1.0), ("b", 1.0)], []], 1) == [("a", 1.0)]


def test_a_korean_table_of_an_earlier_lancelot_keeps_its_n_gram_index_until_rebuild(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A table made before rows had their own columns (its text index cut into n-grams, no
    ``text_ko``): a plain run keeps it so (its unchanged rows would lack the column), and its
    search is as before; ``--rebuild`` gives it the new layout."""
    import json

    from lancedb.index import FTS

    from lancelot_cli.indexer.rows import chunk_hash
    from lancelot_cli.storage.analyzer import fts_options
    from lancelot_cli.storage.schema import OPTIONS_TAG, PATH

    src = tmp_path / "src"
    src.mkdir()
    for n in range(3):
        (src / f"ko{n}.md").write_text(KO + f"\n{n}번째 문서입니다.\n", encoding="utf-8")
    db = tmp_path / "db"
    index_folder(src, str(db))
    tbl = table_of(db)  # made as an earlier Lancelot made it
    options = json.loads((tbl.schema.field(PATH).metadata or {})[OPTIONS_TAG.encode()])
    del options["rowLanguages"]
    tbl.update_field_metadata({"path": PATH, "metadata": {OPTIONS_TAG: json.dumps(options)}})
    tbl.drop_index("text_ko_idx")
    tbl.drop_columns(["text_ko"])
    for row in tbl.search().select(["id", "title", "text"]).limit(None).to_list():  # hashes of rows_for
        tbl.update(where=f"id = '{row['id']}'", values={"hash": chunk_hash(row["title"], row["text"])})
    for column in ("text", "title", "heading", "path"):
        tbl.create_index(column, config=FTS(**fts_options(["ko"])), name=f"{column}_idx", replace=True)
    (src / "ko0.md").write_text(KO + "\n다시 고친 문서입니다.\n", encoding="utf-8")
    index_folder(src, str(db))
    assert "text_ko" not in table_of(db).schema.names and tokenizers(db)["text"] == "ngram"
    assert search(monkeypatch, db, "파일에서")["hits"]
    index_folder(src, str(db), rebuild=True)
    assert tokenizers(db)["text"] != "ngram" and tokenizers(db)["text_ko"] == "ngram"
    assert all(column_values(db, "text_ko").values())


def test_the_instructions_ask_for_a_query_in_each_language_of_a_mixed_table(tmp_path: Path) -> None:
    """A table of Korean and English pages: each page is found by words of its own language, so the
    agent is told to write a query in each (before: only in the table's first language)."""
    import os

    from lancelot_cli.server.app import instructions
    from lancelot_cli.settings import load

    mixed, plain = tmp_path / "mixed", tmp_path / "plain"
    mixed.mkdir()
    for n in range(3):
        (mixed / f"ko{n}.md").write_text(KO + f"\n{n}번째 문서입니다.\n", encoding="utf-8")
    for n in range(3):
        (mixed / f"en{n}.md").write_text(f"# Refunds {n}\n\n{EN}", encoding="utf-8")
    english_pages(plain)
    said = {}
    for name, src in (("mixed", mixed), ("plain", plain)):
        db = str(tmp_path / f"{name}-db")
        languages = index_folder(src, db).languages
        said[name] = (languages, instructions(load(environ={**os.environ, "LANCEDB_PATH": db})))
    assert sorted(said["mixed"][0]) == ["en", "ko"] and said["plain"][0] == ["en"]
    assert "also a query in each of its other languages" in said["mixed"][1]
    assert "also a query in each" not in said["plain"][1] and "first language" in said["plain"][1]
