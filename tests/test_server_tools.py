"""`lancelot_cli.server.tools`: the MCP tools made from the request types (issue 48 #6: a test module
per core module; the tools' replies are tested over real clients in test_tools.py and test_golden.py)."""

from __future__ import annotations

from pathlib import Path

from lancelot_cli.requests import Search
from lancelot_cli.server import tools
from lancelot_cli.settings import load


def test_a_tools_parameters_are_its_requests_fields_by_wire_name(isolated_env: Path) -> None:
    """camelCase names, and the default an agent sees is the server's setting (here LANCEDB_DEFAULT_LIMIT)."""
    signature = tools.published(Search, load(environ={"LANCEDB_DEFAULT_LIMIT": "7"}))
    assert {"query", "limit", "searchType", "pathPrefix", "perDocument", "queries"} <= set(signature.parameters)
    assert signature.parameters["limit"].default == 7
    assert not any("_" in name for name in signature.parameters)
