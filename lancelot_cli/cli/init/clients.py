"""The MCP client configurations `lancelot init` prints: Claude Code, Claude Desktop/Cursor, VS Code,
Codex, and the VS Code and Cursor install links.

They start the server by the ABSOLUTE path of the installed `lancelot` script: GUI clients (Claude
Desktop, Cursor) do not see a virtualenv's PATH, so a bare `lancelot` is not found there. Only
``LANCEDB_PATH`` goes into them; the server finds everything else (the key included) in what init
stored, so no configuration ever holds the key.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from urllib.parse import quote

import typer

SERVER_NAME = "lancelot"
SCRIPT = "lancelot"


def server_command() -> str:
    """The absolute path of the `lancelot` script clients should start, else the bare name.

    In order: the script running now (``sys.argv[0]``), the one beside this Python (a virtualenv's
    or pipx's ``bin``), the one on PATH.
    """
    names = {SCRIPT, f"{SCRIPT}.exe"}
    candidates = []
    if Path(sys.argv[0]).name in names:
        candidates.append(Path(sys.argv[0]))
    candidates += [Path(sys.executable).with_name(name) for name in sorted(names)]
    on_path = shutil.which(SCRIPT)
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return SCRIPT


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string (escapes included) is a TOML basic string


def client_configs(db_uri: str, command: str = SCRIPT) -> dict[str, str]:
    """Ready-to-paste MCP client configurations for the database ``db_uri`` (absolute).

    Returns ``claude`` (a shell command), ``json`` (Claude Desktop / Cursor ``mcpServers``), ``vscode_json``
    (``.vscode/mcp.json``), ``codex`` (``~/.codex/config.toml``), ``vscode`` and ``cursor`` (install links).
    """
    env = {"LANCEDB_PATH": db_uri}
    args = ["serve"]
    server = {"command": command, "args": args, "env": env}
    claude = " ".join(
        [
            "claude",
            "mcp",
            "add",
            "--env",
            shlex.quote(f"LANCEDB_PATH={db_uri}"),
            "--transport",
            "stdio",
            SERVER_NAME,
            "--",
            shlex.quote(command),
            *args,
        ]
    )
    desktop = json.dumps({"mcpServers": {SERVER_NAME: server}}, indent=2)
    vscode_json = json.dumps({"servers": {SERVER_NAME: {"type": "stdio", **server}}}, indent=2)
    codex = "\n".join(
        [
            f"[mcp_servers.{SERVER_NAME}]",
            f"command = {_toml_string(command)}",
            f"args = [{', '.join(_toml_string(a) for a in args)}]",
            f"env = {{ LANCEDB_PATH = {_toml_string(db_uri)} }}",
        ]
    )
    vscode = "vscode:mcp/install?" + quote(json.dumps({"name": SERVER_NAME, **server}, separators=(",", ":")), safe="")
    cursor_config = base64.b64encode(json.dumps(server, separators=(",", ":")).encode("utf-8")).decode("ascii")
    cursor = f"cursor://anysphere.cursor-deeplink/mcp/install?name={SERVER_NAME}&config={quote(cursor_config, safe='')}"
    return {
        "claude": claude,
        "json": desktop,
        "vscode_json": vscode_json,
        "codex": codex,
        "vscode": vscode,
        "cursor": cursor,
    }


def print_client_configs(db_uri: str, command: str | None = None) -> None:
    """Print every configuration on stdout (the result of `init`; notes go to stderr)."""
    command = command or server_command()
    configs = client_configs(db_uri, command)
    lines = [
        "",
        f"Server command: {command}",
        "",
        "Claude Code:",
        f"  {configs['claude']}",
        "",
        "Claude Desktop (claude_desktop_config.json) or Cursor (.cursor/mcp.json):",
        configs["json"],
        "",
        "VS Code (.vscode/mcp.json):",
        configs["vscode_json"],
        "",
        "Codex (~/.codex/config.toml):",
        configs["codex"],
        "",
        "VS Code (open the link to install):",
        f"  {configs['vscode']}",
        "",
        "Cursor (open the link to install):",
        f"  {configs['cursor']}",
    ]
    if not os.path.isabs(command):
        lines.append(
            f"\n(The `{SCRIPT}` script was not found here: replace `{command}` with its absolute path, "
            f"which `which {SCRIPT}` prints where it is installed.)"
        )
    typer.echo("\n".join(lines))
