"""Every client configuration Lancelot hands out starts the server (docs/design.md#issue-22, item 3).

The README's sections (Claude Code, Claude Desktop / Cursor, VS Code), the Claude Code plugin
(``.claude-plugin/marketplace.json`` → ``claude-plugin/``) and the VS Code and Cursor install links
`lancelot init` prints are parsed as their clients parse them, and the server each names is started
with the mcp SDK's client over stdio and lists the tools. Offline, ``uvx lancelot-cli serve`` is
run as what uvx would run: the ``lancelot-cli`` script of this install, with the same arguments."""

from __future__ import annotations

import base64
import json
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pytest
from mcp import Client, StdioServerParameters

from lancelot_cli._version import __version__
from tests.conftest import REPO, subprocess_env
from tests.support.expected import TOOLS

README = (REPO / "README.md").read_text(encoding="utf-8")
PLUGIN_ROOT = REPO / "claude-plugin"


def fenced(language: str) -> list[str]:
    """The README's code blocks in ``language``."""
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def readme_servers() -> dict[str, dict[str, Any]]:
    """The README's server entries: Claude Desktop/Cursor (mcpServers), VS Code (servers), Codex
    (mcp_servers in TOML), Claude Code (the `claude mcp add` command)."""
    found: dict[str, dict[str, Any]] = {}
    for block in fenced("toml"):
        if "lancelot" in (codex := tomllib.loads(block)).get("mcp_servers", {}):
            found["mcp_servers"] = codex["mcp_servers"]["lancelot"]
    for block in fenced("json"):
        data = json.loads(block)
        for key in ("mcpServers", "servers"):
            if "lancelot" in data.get(key, {}):
                found[key] = data[key]["lancelot"]
    claude = next(line for b in fenced("bash") for line in b.splitlines() if line.startswith("claude mcp add"))
    words = shlex.split(claude)
    command = words[words.index("--") + 1 :]
    env = dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "--env")
    found["claude mcp add"] = {"command": command[0], "args": command[1:], "env": env}
    return found


def plugin() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    marketplace = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    entry = next(p for p in marketplace["plugins"] if p["name"] == "lancelot")
    root = (REPO / ".claude-plugin" / ".." / entry["source"]).resolve()
    manifest = json.loads((root / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    servers = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    return entry, manifest, servers


def test_the_readme_configures_every_client_it_names() -> None:
    servers = readme_servers()
    assert set(servers) == {"mcpServers", "servers", "mcp_servers", "claude mcp add"}
    for server in servers.values():
        assert server["command"] == "lancelot" and server["args"] == ["serve"]
        assert server["env"]["LANCEDB_PATH"].startswith("/")


def test_the_claude_code_plugin_starts_uvx_lancelot_cli() -> None:
    entry, manifest, servers = plugin()
    assert manifest["name"] == entry["name"] == "lancelot"
    assert manifest["version"] == entry["version"] == __version__
    assert (REPO / entry["source"]).resolve() == PLUGIN_ROOT
    assert servers == {"lancelot": {"command": "uvx", "args": ["lancelot-cli", "serve"]}}


def local(server: dict[str, Any]) -> tuple[str, list[str]]:
    """The program this install runs for a configuration's command: `lancelot`, or what
    `uvx lancelot-cli ...` would start (the `lancelot-cli` script, arguments unchanged)."""
    bin_dir = Path(sys.executable).parent
    command, args = server["command"], list(server["args"])
    if command == "uvx":
        assert args[0] == "lancelot-cli", args
        command, args = args[0], args[1:]
    script = bin_dir / Path(command).name
    assert script.is_file(), f"{script} is not installed: the configuration names a script the package lacks"
    return str(script), args


def install_links(db: str) -> dict[str, dict[str, Any]]:
    """The VS Code and Cursor links `lancelot init` prints, decoded as each editor decodes them."""
    from lancelot_cli.cli.init.clients import client_configs, server_command

    configs = client_configs(db, server_command())
    vscode = json.loads(unquote(configs["vscode"].split("?", 1)[1]))
    query = parse_qs(urlparse(configs["cursor"]).query)
    cursor = json.loads(base64.b64decode(query["config"][0]))
    assert vscode.pop("name") == query["name"][0] == "lancelot"
    return {"vscode link": vscode, "cursor link": cursor}


def every_configuration(db: str) -> list[Any]:
    entries = {**readme_servers(), **{f"plugin {k}": v for k, v in plugin()[2].items()}, **install_links(db)}
    return [pytest.param(server, id=name) for name, server in entries.items()]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("server", every_configuration("/placeholder"))
async def test_each_configuration_starts_the_server(server: dict[str, Any], sample_db: Path, tmp_path: Path) -> None:
    command, args = local(server)
    env = {**server.get("env", {}), "LANCEDB_PATH": str(sample_db)}  # the README's placeholder path → the sample
    # Most configurations come to the same command, arguments and environment once the placeholder
    # path is the sample's (7 configurations, 2 commands today): a server started and checked for one
    # is the check for the others; a configuration that differs in any of them gets its own.
    key = (command, tuple(args), tuple(sorted(env.items())))
    if key not in _SERVED:
        params = StdioServerParameters(
            command=command, args=args, env=subprocess_env(LANCELOT_CONFIG_DIR=str(tmp_path), **env)
        )
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            hits = json.loads((await client.call_tool("lancedb_search", {"query": "MAX_SAVED"})).content[0].text)
        _SERVED[key] = (tools, hits)
    tools, hits = _SERVED[key]
    assert tools == TOOLS
    assert hits["hits"][0]["source"] == "guides/stock-counts.md"


# What the server a configuration's command started answered, by (command, arguments, environment).
_SERVED: dict[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], tuple[set[str], Any]] = {}
