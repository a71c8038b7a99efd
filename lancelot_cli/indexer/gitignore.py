"""Which of the documents found git ignores: asked of git itself (``check-ignore``), and only
when the folder can be in a git work tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def git_ignored(root: Path, paths: list[str]) -> set[str]:
    """The paths that git would ignore, when ``root`` is in a git work tree (else none)."""
    if not paths or not _maybe_in_git(root) or shutil.which("git") is None:
        return set()
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, timeout=10
        )
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return set()
        answer = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "--no-index", "-z", "--stdin"],
            input="\0".join(paths) + "\0",
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    return {p for p in answer.stdout.split("\0") if p}


def in_git_work_tree(root: Path) -> bool:
    """Whether ``root`` is in a git work tree: a repository's ``.git`` folder (one with a ``HEAD``) or
    a worktree's ``.git`` file in it or above it. Read off the files: git need not be installed."""
    folder = os.path.realpath(root)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isfile(os.path.join(dot_git, "HEAD")):
            return True
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8", errors="replace") as pointer:
                    if pointer.read(8) == "gitdir: ":
                        return True
            except OSError:
                pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _maybe_in_git(root: Path) -> bool:
    """False when no ``.git`` is in ``root`` or above it and no GIT_DIR/GIT_WORK_TREE is set: then
    git would find no work tree, and asking it costs a process start (~10 ms) on every run."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    folder = os.path.realpath(root)  # git -C resolves links too
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
