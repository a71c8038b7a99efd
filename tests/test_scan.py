"""The folder scan (``indexer.sources.scan``): the (size, mtime) it records during the walk, what it
counts as a file's extension, and when it asks git about ``.gitignore``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lancelot_cli.indexer import index_folder
from lancelot_cli.indexer.sources import OUTSIDE_LINK, scan


def _write(path: Path, text: str = "# Title\n\nSome words.\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_scan_records_the_size_and_mtime_of_each_document_links_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "docs", tmp_path / "outside"
    _write(root / "a.md", "# A\n\nshort\n")
    _write(root / "sub" / "deep" / "b.txt", "longer text " * 50)
    _write(outside / "secret.md")
    os.symlink(root / "sub" / "deep" / "b.txt", root / "link.txt")
    os.symlink(root / "gone.md", root / "broken.md")  # inside, but nothing there
    os.symlink(outside / "secret.md", root / "out.md")
    found = scan(root)
    assert found.paths == ["a.md", "broken.md", "link.txt", "sub/deep/b.txt"]
    assert ("out.md", OUTSIDE_LINK) in found.skipped
    assert set(found.stats) == set(found.paths)
    for rel in ("a.md", "link.txt", "sub/deep/b.txt"):
        info = (root / rel).stat()  # a link's target, as the reader will read it
        assert found.stats[rel] == (info.st_size, info.st_mtime_ns)
    assert found.stats["broken.md"] == (None, None)  # read_document says why it is skipped


def test_a_name_ending_in_a_dot_has_no_extension(tmp_path: Path) -> None:
    _write(tmp_path / "notes.")
    _write(tmp_path / "Upper.MD")
    found = scan(tmp_path)
    assert found.paths == ["Upper.MD"]
    assert dict(found.other) == {"(no extension)": 1}


def test_an_unchanged_file_is_not_read_again_and_a_touched_one_is(tmp_path: Path) -> None:
    docs, db = tmp_path / "docs", str(tmp_path / "db")
    _write(docs / "a.md")
    page = _write(docs / "b" / "c.md")
    assert index_folder(docs, db).read == 2
    assert index_folder(docs, db).read == 0
    os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 1_000_000))
    assert index_folder(docs, db).read == 1


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True, timeout=30)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_applies_when_the_repository_is_above_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _git("init", "-q", str(repo))
    _write(repo / ".gitignore", "drafts/\n")
    root = repo / "site" / "docs"
    _write(root / "kept.md")
    _write(root / "drafts" / "left.md")
    found = scan(root)
    assert found.paths == ["kept.md"] and found.ignored == 1
    assert set(found.stats) == {"kept.md"}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_applies_with_git_dir_and_work_tree_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No `.git` in or above the folder, but GIT_DIR/GIT_WORK_TREE make it a work tree for git."""
    store, root = tmp_path / "store.git", tmp_path / "docs"
    _git("init", "-q", "--separate-git-dir", str(store), str(tmp_path / "init"))
    _write(root / ".gitignore", "*.txt\n")
    _write(root / "kept.md")
    _write(root / "left.txt")
    assert scan(root).paths == ["kept.md", "left.txt"]  # git is not asked: no work tree here
    monkeypatch.setenv("GIT_DIR", str(store))
    monkeypatch.setenv("GIT_WORK_TREE", str(root))
    found = scan(root)
    assert found.paths == ["kept.md"] and found.ignored == 1
