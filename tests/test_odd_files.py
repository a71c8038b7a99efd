"""Files a real folder holds that broke a whole run (issue 27 #2): names that are not valid UTF-8
(old archives, Samba shares) are skipped with their name shown and the rest indexed; UTF-16 and
UTF-32 text with a byte-order mark is read, not taken for a binary file. The real CLI in-process,
real LanceDB."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes in names")


def index(src: Path, db: Path) -> tuple[int, dict, str]:
    done = CliRunner().invoke(app, ["index", str(src), str(db), "--json", "--no-embed"], prog_name="lancelot")
    return done.exit_code, json.loads(done.stdout) if done.exit_code == 0 else {}, done.stderr


def search(db: Path, query: str) -> list[str]:
    done = CliRunner().invoke(app, ["search", query, "--db", str(db), "--json"], prog_name="lancelot")
    assert done.exit_code == 0, done.output
    return [hit["source"] for hit in json.loads(done.stdout)["hits"]]


def test_a_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("# Good\n\nA kayak paddle.\n")
    with open(os.path.join(os.fsencode(src), b"badname\xff\xfe.md"), "w") as fh:
        fh.write("# Bad\n\nA kayak seat.\n")
    os.mkdir(os.path.join(os.fsencode(src), b"old\xe9folder"))
    with open(os.path.join(os.fsencode(src), b"old\xe9folder", b"inside.md"), "w") as fh:
        fh.write("# Inside\n\nA kayak hull.\n")
    code, report, err = index(src, tmp_path / "db")
    assert code == 0, err
    assert report["files"] == 1
    skipped = {item["path"]: item["reason"] for item in report["skipped"]}
    assert set(skipped) == {"badname\\xff\\xfe.md", "old\\xe9folder/"}
    assert all("not valid UTF-8" in reason and "rename" in reason for reason in skipped.values())
    assert "badname\\xff\\xfe.md" in err  # the summary names it, visibly
    assert search(tmp_path / "db", "kayak") == ["good.md"]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_text_with_a_byte_order_mark_is_read(tmp_path: Path, codec: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    text = "# Wide notes\n\nThe canoe rental desk opens at nine. 向量搜索\n"
    bom = {"utf-16-le": "\ufeff", "utf-16-be": "\ufeff"}.get(codec, "")
    (src / "wide.md").write_bytes((bom + text).encode(codec))
    code, report, err = index(src, tmp_path / "db")
    assert code == 0 and not report["skipped"], (err, report)
    assert search(tmp_path / "db", "canoe") == ["wide.md"]
    assert search(tmp_path / "db", "向量") == ["wide.md"]


def test_utf16_without_a_byte_order_mark_is_still_a_binary_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("# Good\n\ntext\n")
    (src / "wide.md").write_bytes("# Wide\n\ntext\n".encode("utf-16-le"))
    code, report, _ = index(src, tmp_path / "db")
    assert code == 0 and report["skipped"] == [{"path": "wide.md", "reason": "looks like a binary file"}]


def test_a_nul_in_a_table_name_is_an_unknown_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MCP client can send "doc\\u0000x" as the table (argv cannot): it is a table that does not
    exist, said in the usual one line, not `ValueError: embedded null byte`."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.errors import TableNotFoundError
    from lancelot_cli.settings import load

    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nkayak\n")
    index(src, tmp_path / "db")
    monkeypatch.setenv("LANCEDB_PATH", str(tmp_path / "db"))
    engine = Engine(load())
    for call in (lambda: engine.search("kayak", table="doc\x00x"), lambda: engine.document("a.md", table="doc\x00x")):
        with pytest.raises(TableNotFoundError, match=r"table 'doc\\x00x' not found .*tables here: documents"):
            call()
