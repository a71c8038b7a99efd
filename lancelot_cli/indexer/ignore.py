"""What the user leaves out of an index: ``--exclude GLOB`` patterns and a ``.lancelotignore`` file.

Both use ``.gitignore`` syntax (``pathspec``'s GitIgnoreSpec: ``*.txt``, ``build/``, ``/top-only``,
``**/drafts``, ``!keep.md``), matched against paths relative to the indexed folder. The
``.lancelotignore`` at the folder's top is read on every run, so the watcher follows edits to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

IGNORE_FILE = ".lancelotignore"


class Excluder:
    """Matches relative paths (forward slashes) against the patterns; no patterns match nothing."""

    def __init__(self, patterns: Iterable[str]) -> None:
        lines = [p for p in patterns if p.strip() and not p.lstrip().startswith("#")]
        self._spec: Any = None
        if lines:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def __bool__(self) -> bool:
        return self._spec is not None

    def excluded(self, rel: str, folder: bool = False) -> bool:
        if self._spec is None:
            return False
        return bool(self._spec.match_file(f"{rel}/" if folder else rel))


def patterns_for(root: Path, exclude: Iterable[str] = ()) -> list[str]:
    """The ``--exclude`` patterns followed by the lines of ``root/.lancelotignore`` (if any)."""
    found = [p.strip() for p in exclude if p and p.strip()]
    try:
        text = (root / IGNORE_FILE).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return found
    return found + [line.rstrip("\r") for line in text.split("\n")]
