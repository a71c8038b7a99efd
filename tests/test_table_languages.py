"""Each table's languages, found at index time, and a full-text analysis made for them (issue 38).

`detect` on texts of each language; then real folders indexed by ``index_folder``: the languages
kept with the table's options and beside it (for the server's instructions), the indexes built
for them (German stemming, Korean n-grams), searches that only that analysis answers, `status`
and the instructions naming them, and when a run reads them anew (a new table, ``--rebuild``, a
table made before languages were kept) or keeps them (every other run).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import lancedb
import pytest

from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.languages import detect
from lancelot_cli.server.app import instructions
from lancelot_cli.settings import load
from lancelot_cli.storage.schema import OPTIONS_TAG, PATH
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

TEXTS = {
    "en": "The dialog changes the size of the canvas. You can choose where the layers are placed, and which "
    "of them are kept when the image is saved with the new size.",
    "de": "Der Dialog ändert die Größe der Leinwand. Sie können wählen, wo die Ebenen liegen und welche "
    "davon erhalten bleiben, wenn das Bild mit der neuen Größe gespeichert wird.",
    "fr": "Cette boîte de dialogue change la taille du canevas. Vous pouvez choisir où sont placés les "
    "calques, et lesquels sont gardés quand l'image est enregistrée avec sa nouvelle taille.",
    "es": "El diálogo cambia el tamaño del lienzo. Puede elegir dónde se colocan las capas y cuáles de "
    "ellas se conservan cuando la imagen se guarda con el nuevo tamaño.",
    "ko": "이 대화 상자는 캔버스의 크기를 바꿉니다. 레이어를 어디에 둘지, 새 크기로 이미지를 저장할 때 어떤 레이어를 "
    "남길지 고를 수 있습니다.",
    "ja": "このダイアログはキャンバスのサイズを変更します。レイヤーをどこに置くか、新しいサイズで画像を保存するときに"
    "どのレイヤーを残すかを選べます。",
    "zh": "此对话框用于更改画布的大小。您可以选择图层放在哪里\uff0c以及以新的大小保存图像时保留哪些图层。",
}
CODE = "def resize(canvas, width, height):\n    canvas.width = width\n    return canvas.layers[0]\n" * 3


@pytest.mark.parametrize("code", sorted(TEXTS))
def test_each_language_is_told_apart(code: str) -> None:
    assert detect([TEXTS[code]] * 3) == [code]


def test_a_manual_with_english_code_samples_names_both_its_language_first() -> None:
    assert detect([TEXTS["ko"] * 3, CODE]) == ["ko", "en"]
    assert detect([TEXTS["de"] * 3, TEXTS["en"]]) == ["de", "en"]
    assert detect([TEXTS["de"] * 3, CODE]) == ["de"]  # code holds none of English's short words


def test_code_alone_is_english_and_no_letters_is_nothing() -> None:
    assert detect([CODE]) == ["en"]
    assert detect(["", "12345 67 -- ++", "    "]) == []


# -- tables ------------------------------------------------------------------------------------------


def write(folder: Path, pages: dict[str, str]) -> Path:
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def table(db: Path) -> tuple[list[str], dict[str, str]]:
    """The languages saved with the table, and each full-text index's base tokenizer and language."""
    tbl = lancedb.connect(str(db)).open_table("documents")
    options = json.loads((tbl.schema.field(PATH).metadata or {})[OPTIONS_TAG.encode()])
    analysis = {
        index.columns[0]: f"{index.index_details['base_tokenizer']}/{index.index_details['language']}"
        for index in tbl.list_indices()
    }
    return options.get("languages"), analysis


KOREAN = {
    "save.md": "# 파일 저장\n\n메뉴에서 파일을 저장하면 작업 내용이 디스크에 기록됩니다. "
    "저장한 파일은 다시 열 수 있습니다.\n",
    "print.md": "# 인쇄\n\n프린터를 고르고 인쇄 버튼을 누르면 문서가 인쇄됩니다.\n",
    "layers.md": "# 레이어\n\n레이어는 이미지 위에 겹쳐 놓은 투명한 판입니다. 레이어마다 따로 편집합니다.\n",
}
GERMAN = {
    "haus.md": "# Das Haus\n\nDas Haus hat einen Garten. Im Garten stehen zwei Bäume und eine Bank.\n",
    "ebenen.md": "# Ebenen\n\nEbenen liegen übereinander wie durchsichtige Folien. "
    "Jede Ebene wird einzeln bearbeitet.\n",
    "druck.md": "# Drucken\n\nWählen Sie einen Drucker und klicken Sie auf Drucken, um das Dokument zu drucken.\n",
}


def test_a_korean_folder_gets_korean_n_grams_and_a_noun_is_found_whatever_particle_follows(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", KOREAN)
    index_folder(docs, str(tmp_path / "db"))
    languages, analysis = table(tmp_path / "db")
    assert languages == ["ko"]
    # issue 51: the n-grams are in a column of the Korean rows' own; the text index is never Korean's
    assert analysis["text_ko"] == "ngram/English" and analysis["text"] == "icu/split/English"
    assert json.loads((tmp_path / "db" / "documents.languages.json").read_text()) == ["ko"]
    engine = engine_for(tmp_path / "db")
    # "파일에서" (from the file) and "레이어를" (the layers, object) are not written on any page:
    # the pages say 파일을 / 파일은 and 레이어는 / 레이어마다. With ICU words they match nothing.
    assert engine.search("파일에서", limit=3).hits[0].source == "save.md"
    found = engine.search("레이어를 편집", limit=3)
    assert found.hits[0].source == "layers.md" and found.hits[0].strength and found.hits[0].strength >= 0.5


def test_a_german_folder_gets_german_stemming(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", GERMAN)
    index_folder(docs, str(tmp_path / "db"))
    languages, analysis = table(tmp_path / "db")
    assert languages == ["de"] and set(analysis.values()) == {"icu/split/German"}
    # "Häusern" and "Gärten" stem to the pages' "Haus" and "Garten" in German, not in English.
    assert engine_for(tmp_path / "db").search("Häusern Gärten", limit=3).hits[0].source == "haus.md"


def test_status_and_the_server_instructions_name_the_languages(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", KOREAN)
    index_folder(docs, str(tmp_path / "db"))
    status = to_wire(engine_for(tmp_path / "db").status())
    assert status["tables"][0]["languages"] == ["ko"]
    said = instructions(load(environ={**os.environ, "LANCEDB_PATH": str(tmp_path / "db")}))
    assert "table documents is in Korean" in said and "queries" in said


def test_a_rerun_keeps_the_languages_and_rebuild_reads_them_anew(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", {"a.md": "# A\n\n" + TEXTS["en"], "b.md": "# B\n\n" + TEXTS["en"]})
    index_folder(docs, str(tmp_path / "db"))
    assert table(tmp_path / "db") == (["en"], dict.fromkeys(["text", "title", "heading", "path"], "icu/split/English"))
    for name in ("a.md", "b.md"):  # every page now German: a plain run keeps the table's analysis
        (docs / name).write_text("# A\n\n" + TEXTS["de"] * 3, encoding="utf-8")
    report = index_folder(docs, str(tmp_path / "db"))
    assert report.languages == ["en"] and table(tmp_path / "db")[0] == ["en"]
    report = index_folder(docs, str(tmp_path / "db"), rebuild=True)
    assert report.languages == ["de"] and report.indexes_built
    assert table(tmp_path / "db") == (["de"], dict.fromkeys(["text", "title", "heading", "path"], "icu/split/German"))


def test_a_table_made_before_languages_were_kept_gets_them_on_its_next_run(tmp_path: Path) -> None:
    docs = write(tmp_path / "docs", GERMAN)
    index_folder(docs, str(tmp_path / "db"))
    tbl = lancedb.connect(str(tmp_path / "db")).open_table("documents")
    options = json.loads((tbl.schema.field(PATH).metadata or {})[OPTIONS_TAG.encode()])
    del options["languages"]  # as an earlier Lancelot left it, with English indexes
    tbl.update_field_metadata({"path": PATH, "metadata": {OPTIONS_TAG: json.dumps(options)}})
    from lancedb.index import FTS

    from lancelot_cli.storage.analyzer import FTS_OPTIONS

    tbl.create_index("text", config=FTS(**FTS_OPTIONS), name="text_idx", replace=True)
    (tmp_path / "db" / "documents.languages.json").unlink()
    (docs / "druck.md").write_text(GERMAN["druck.md"] + "\nAuch farbig.\n", encoding="utf-8")
    report = index_folder(docs, str(tmp_path / "db"))
    assert report.languages == ["de"] and "text" in report.indexes_built
    assert table(tmp_path / "db")[1]["text"] == "icu/split/German"
