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


def _diagram() -> tuple[dict[str, set[str]], set[str]]:
    """The rooms and arrows of the diagram in docs/design.md ("The layers"), and its leaves."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("## The layers", 1)[1].split("```\n", 2)[1]
    arrows: dict[str, set[str]] = {}
    leaves: set[str] = set()
    lines = iter(block.splitlines())
    for line in lines:
        if line.startswith("leaves:"):
            rest = line.removeprefix("leaves:") + " " + " ".join(lines)
            leaves = {name.strip() for name in rest.split(",") if name.strip()}
            break
        room, _, targets = line.partition("->")
        listed = re.sub(r"\(.*\)", "", targets)  # a note in brackets is not an arrow
        arrows[room.strip()] = {t.strip() for t in listed.split(",") if t.strip()}
    return arrows, leaves


def _room(module: str, rooms: list[str]) -> str | None:
    path = "/".join(module.split(".")[1:])
    if path == "server/aws_lambda":  # the Lambda handler's published name: transports/aws_lambda.py
        return "server/transports"
    for room in sorted(rooms, key=len, reverse=True):
        if path == room or path.startswith(room + "/"):
            return room
    return None


def test_the_design_diagram_is_the_code() -> None:
    """docs/design.md draws each room (a package) and the rooms it imports: the drawing is checked
    against every import, so an arrow added in the code fails here until the drawing shows it, and
    a new top-level module must be drawn as a room or named as a leaf (issue 48 #5)."""
    import grimp

    arrows, leaves = _diagram()
    assert {"cli", "server", "server/transports", "storage/read", "storage/write"} <= set(arrows)
    rooms = list(arrows)
    graph = grimp.build_graph("lancelot_cli", cache_dir=None)
    found: dict[str, set[str]] = {room: set() for room in rooms}
    unplaced = set()
    for module in graph.modules:
        room = _room(module, rooms)
        if room is None:
            if module != "lancelot_cli" and module.split(".")[1] not in leaves:
                unplaced.add(module)
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = _room(imported, rooms) if imported.startswith("lancelot_cli.") else None
            if other is not None and other != room:
                found[room].add(other)
    assert unplaced == set(), "name these in the diagram's leaves or rooms"
    assert found == arrows


def test_the_mcp_surface_never_imports_a_transport() -> None:
    """server/ (tools, replies, schemas, the app) knows no transport; transports wrap it."""
    import grimp

    graph = grimp.build_graph("lancelot_cli", cache_dir=None)
    surface = [
        m
        for m in graph.modules
        if m.startswith("lancelot_cli.server.")
        and not m.startswith(("lancelot_cli.server.transports", "lancelot_cli.server.process"))
        and m != "lancelot_cli.server.aws_lambda"  # the published handler name
    ]
    assert "lancelot_cli.server.tools" in surface and "lancelot_cli.server.app" in surface
    reached = {
        (m, t)
        for m in surface
        for t in graph.find_modules_directly_imported_by(m)
        if t.startswith("lancelot_cli.server.transports")
    }
    assert reached == set()


def test_the_lambda_handler_keeps_its_published_name() -> None:
    """Deployed functions name ``lancelot_cli.server.aws_lambda.handler`` (the Dockerfile's CMD)."""
    from lancelot_cli.server import aws_lambda
    from lancelot_cli.server.transports import aws_lambda as transport

    assert aws_lambda.handler is transport.handler
    assert 'CMD ["lancelot_cli.server.aws_lambda.handler"]' in (REPO / "Dockerfile").read_text(encoding="utf-8")
