"""Ids and paths are never cut (issue 39): every table the CLI draws for a person (search, query,
show, ls, status) at 72, 100 and 140 columns shows each id and path whole, on one line, as `lancelot
show` and `--path-prefix` take them; the titles and snippets wrap in what is left. A path wider than
the terminal itself is folded onto the next line, never ended with "…".

The documents sit as deep as a documentation site's (``docs/en/docs/tutorial/security/...``, ids of
up to 66 characters with their "id " label). Terminal runs spawn the installed `lancelot` on a pty of
the given width (tests/test_terminal.py's ``on_terminal``); the expected ids and paths come from the
--json replies, never from the renderer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.test_terminal import cli, on_terminal, visible

WIDTHS = (72, 100, 140)
FOLDER = "docs/en/docs/tutorial/security"
PAGES = {
    "first-steps.md": "Security - First Steps",
    "get-current-user.md": "Get Current User",
    "index.md": "Security",
    "oauth2-jwt.md": "OAuth2 with Password (and hashing), Bearer with JWT tokens",
    "simple-oauth2.md": "Simple OAuth2 with Password and Bearer",
    "oauth2-password-flow-with-jwt.md": "The OAuth2 password flow with JWT, from the token URL to the user",
}
LINK = re.compile(r"\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)")  # OSC 8 hyperlinks around a place


@pytest.fixture(scope="module")
def deep_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six pages in one deep folder, each of several sections about OAuth2, passwords and JWT."""
    from lancelot_cli.indexer import index_folder

    root = tmp_path_factory.mktemp("deep")
    folder = root / FOLDER
    folder.mkdir(parents=True)
    for name, title in PAGES.items():
        sections = "\n\n".join(
            f"## Step {n}\n\n"
            + " ".join(f"The OAuth2 password flow step {n} sends a JWT token, sentence {k}." for k in range(12))
            for n in range(3)
        )
        (folder / name).write_text(f"# {title}\n\n{sections}\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("deep-db") / "db"
    index_folder(str(root), str(db))
    return db


def shown_on(args: list[str], width: int) -> list[str]:
    out, err, code = on_terminal(args, width)
    assert code == 0, err
    lines = [line.rstrip() for line in visible(LINK.sub("", out)).splitlines()]
    assert max(len(line) for line in lines) <= width, "\n".join(lines)
    return lines


def whole(value: str, lines: list[str]) -> bool:
    """``value`` on one line, not followed by more of a longer value's characters."""
    return any(re.search(re.escape(value) + r"(?![\w./#-])", line) for line in lines)


def reply(*args: str | Path) -> Any:
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_search_shows_each_place_and_id_whole(deep_db: Path, width: int) -> None:
    args = ["search", "OAuth2 password flow with JWT", "--db", str(deep_db), "-n", "6"]
    lines = shown_on(args, width)
    found = reply(*args)["hits"]
    assert len(found) == 6
    for hit in found:
        assert whole(f"id {hit['id']}", lines), (hit["id"], "\n".join(lines))
        assert whole(f"{hit['source']}:{hit['metadata']['line_start']}", lines), "\n".join(lines)
    assert not any(re.search(re.escape(FOLDER[:20]) + r"[\w/.-]*…", line) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_ls_shows_each_path_whole(deep_db: Path, width: int) -> None:
    args = ["ls", f"{FOLDER}/", "--db", str(deep_db)]
    lines = shown_on(args, width)
    paths = [entry["source"] for entry in reply(*args)["documents"]]
    assert len(paths) == len(PAGES)
    for path in paths:
        assert whole(path, lines), (path, "\n".join(lines))
    text = " ".join(" ".join(lines).split())
    for title in PAGES.values():
        # titles wrap, never cut: every word is there, in order
        assert " ".join(title.split()) in text or all(word in text for word in title.split()), title
    assert "…" not in text


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_query_and_show_name_ids_and_paths_whole(deep_db: Path, width: int) -> None:
    args = ["query", "OAuth2 password flow with JWT", "--db", str(deep_db), "--budget", "1500"]
    lines = shown_on(args, width)
    ids = re.findall(r"id (\S+#\d+)", reply(*args)["context"])
    assert ids
    for chunk_id in ids:
        assert whole(chunk_id, lines), (chunk_id, "\n".join(lines))
    source = f"{FOLDER}/oauth2-password-flow-with-jwt.md"
    lines = shown_on(["show", source, "--db", str(deep_db), "--budget", "600"], width)
    assert whole(source, lines), "\n".join(lines)
    assert whole(f"{source}#1", lines), "\n".join(lines)  # the "next:" id of the cut line


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_status_keeps_table_names_and_models_whole(tmp_path: Path, width: int) -> None:
    """A vector column made by a local model is labelled with the model's folder: not cut to
    ``local:/opt/…`` (it was at 72 columns)."""
    import lancedb
    import pyarrow as pa

    model = "local:/opt/models/all-MiniLM-L6-v2-onnx"
    meta = {"lancelot": json.dumps({"embedding_model": model, "dimension": 4})}
    schema = pa.schema([pa.field("text", pa.string()), pa.field("vector", pa.list_(pa.float32(), 4))], metadata=meta)
    db = tmp_path / "db"
    rows = [{"text": "a note", "vector": [1.0, 0.0, 0.0, 0.0]}]
    lancedb.connect(str(db)).create_table("handbook_notes_2026", data=pa.Table.from_pylist(rows, schema=schema))
    lines = shown_on(["status", "--db", str(db)], width)
    assert whole("handbook_notes_2026", lines), "\n".join(lines)
    assert "…" not in "\n".join(lines)
    # folded or not, the model's folder is all there
    assert "all-MiniLM-L6-v2-onnx" in "".join(line.strip() for line in lines).replace(" ", ""), "\n".join(lines)


@pytest.mark.slow
def test_a_path_wider_than_the_terminal_is_folded_not_cut(deep_db: Path) -> None:
    """At 40 columns the longest id does not fit: it goes on over the next lines, every character
    there, and nothing ends with "…"."""
    args = ["search", "OAuth2 password flow with JWT", "--db", str(deep_db), "-n", "6"]
    lines = shown_on(args, 40)
    joined = "".join(line.strip() for line in lines)
    for hit in reply(*args)["hits"]:
        assert f"id{hit['id']}" in joined.replace(" ", "") or hit["id"] in joined, hit["id"]
    lines = shown_on(["ls", "--db", str(deep_db)], 40)
    assert not any(line.endswith("…") for line in lines), "\n".join(lines)
    joined = "".join(line.strip() for line in lines)
    for name in PAGES:
        assert f"{FOLDER}/{name}" in joined, name
