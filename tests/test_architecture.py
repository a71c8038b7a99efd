"""Import boundaries, checked by import-linter's contracts in pyproject.toml (static, indirect
imports included): the server and the engine never reach the indexer or the writer. Also: no
import cycles inside the package, and importing the package itself pulls in nothing else."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_import_contracts_are_kept() -> None:
    tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([tool], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b[1-9]\d* kept, 0 broken", result.stdout), result.stdout


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), i.e. the import cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    """Every import counts, also those inside functions (issue 15: app -> helpfmt -> reference -> app)."""
    import grimp

    graph = grimp.build_graph("lancelot_cli", cache_dir=None)
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the check works
    assert _cycles(edges) == []


@pytest.mark.slow
def test_the_package_imports_only_its_version() -> None:
    """`import lancelot_cli` (what every entry point does first) loads no server, engine or CLI module."""
    code = "import sys, lancelot_cli; print(sorted(m for m in sys.modules if m.startswith('lancelot_cli')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "['lancelot_cli', 'lancelot_cli._version']", out.stderr
    import grimp  # and not later either: no import anywhere in __init__, not even inside a function

    graph = grimp.build_graph("lancelot_cli", cache_dir=None)
    assert graph.find_modules_directly_imported_by("lancelot_cli") == {"lancelot_cli._version"}
