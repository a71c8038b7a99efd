"""The MCP client configurations `lancelot init` prints: Claude Code, Claude Desktop/Cursor, VS Code,
Codex, and the VS Code and Cursor install links.

They start the server by the ABSOLUTE path of the installed `lancelot` script: GUI clients (Claude
Desktop, Cursor) do not see a virtualenv's PATH, so a bare `lancelot` is not found there. When init
itself runs from uvx's throwaway environment (in uv's cache, gone at the next `uv cache clean`), they
start it the same way instead: `uvx lancelot-cli serve`, or `uvx --from SOURCE lancelot serve` for a
copy that did not come from the package index (``server_launch``). Only
``LANCEDB_PATH`` goes into them; the server finds everything else (the key included) in what init
stored, so no configuration ever holds the key.

With ``LANCELOT_HTTP_TOKENS`` set or a token stored by `init --http-token` (issue 50), init also
prints configurations for a server started with `lancelot serve --http`, carrying ``Authorization:
Bearer`` from the variable ``MCP_LANCELOT_TOKEN`` in each client's own way (``http_client_configs``).
A token is printed once only, the run that made it, as ``MCP_LANCELOT_TOKEN=<token>``; never again.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import typer

SERVER_NAME = "lancelot"
SCRIPT = "lancelot"
TOKEN_VARIABLE = "MCP_LANCELOT_TOKEN"  # where a client finds the bearer token (never in a printed config)
DEFAULT_URL = "http://127.0.0.1:3000/mcp"


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


def server_launch(
    prefix: str = sys.prefix, environ: Mapping[str, str] = os.environ, distribution: Any = None
) -> list[str]:
    """The command and leading arguments clients should start before ``serve`` (``distribution``:
    the installed ``lancelot-cli``, looked up by name when None)."""
    if not _in_uv_cache(Path(prefix), environ):
        return [server_command()]
    from lancelot_cli.install_hint import uvx_source

    uvx = shutil.which("uvx") or "uvx"
    source = uvx_source(distribution)
    return [uvx, "lancelot-cli"] if source is None else [uvx, "--from", source, SCRIPT]


def _in_uv_cache(prefix: Path, environ: Mapping[str, str]) -> bool:
    """Whether ``prefix`` is an environment uvx made in uv's cache (``<cache>/archive-vN/<hash>``)."""
    own = environ.get("UV_CACHE_DIR")
    parts = prefix.parts
    return any(
        re.fullmatch(r"archive-v\d+", part) and (parts[i - 1] == "uv" or (own and Path(*parts[:i]) == Path(own)))
        for i, part in enumerate(parts)
        if i > 0
    )


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string (escapes included) is a TOML basic string


def client_configs(db_uri: str, command: str = SCRIPT, leading: tuple[str, ...] = ()) -> dict[str, str]:
    """Ready-to-paste MCP client configurations for the database ``db_uri`` (absolute), starting
    ``command *leading serve``.

    Returns ``claude`` (a shell command), ``json`` (Claude Desktop / Cursor ``mcpServers``), ``vscode_json``
    (``.vscode/mcp.json``), ``codex`` (``~/.codex/config.toml``), ``vscode`` and ``cursor`` (install links).
    """
    env = {"LANCEDB_PATH": db_uri}
    args = [*leading, "serve"]
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
            *(shlex.quote(a) for a in args),
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


def http_client_configs(url: str = DEFAULT_URL, variable: str = TOKEN_VARIABLE) -> dict[str, str]:
    """Configurations for a `serve --http` server at ``url`` that wants a bearer token, each reading
    the token from the environment variable ``variable`` (VS Code: a password prompt).

    Returns ``claude`` (a shell command; the shell expands the variable), ``json`` (Cursor's
    ``mcp.json``, ``${env:VAR}``), ``vscode_json`` (an input the editor asks for) and ``codex``
    (``bearer_token_env_var``).
    """
    claude = " ".join(
        [
            "claude mcp add --transport http",
            SERVER_NAME,
            shlex.quote(url),
            "--header",
            f'"Authorization: Bearer ${variable}"',
        ]
    )
    cursor = {"mcpServers": {SERVER_NAME: {"url": url, "headers": {"Authorization": f"Bearer ${{env:{variable}}}"}}}}
    prompt = f"{SERVER_NAME}-token"
    vscode = {
        "inputs": [{"type": "promptString", "id": prompt, "description": "Lancelot bearer token", "password": True}],
        "servers": {
            SERVER_NAME: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer ${{input:{prompt}}}"}}
        },
    }
    codex = "\n".join(
        [
            f"[mcp_servers.{SERVER_NAME}]",
            f"url = {_toml_string(url)}",
            f"bearer_token_env_var = {_toml_string(variable)}",
        ]
    )
    return {
        "claude": claude,
        "json": json.dumps(cursor, indent=2),
        "vscode_json": json.dumps(vscode, indent=2),
        "codex": codex,
    }


def http_lines(new_token: str | None = None) -> list[str]:
    """The HTTP configurations to print when ``LANCELOT_HTTP_TOKENS`` is set or a token is stored,
    else nothing; ``new_token``, made by this run, is shown (this once) for the person to hand on."""
    from lancelot_cli import http_tokens
    from lancelot_cli.settings import load

    settings = load()
    if settings.http_tokens:
        why = "LANCELOT_HTTP_TOKENS is set, so each request needs a token"
        what = "one of the tokens"
    elif new_token or http_tokens.stored(settings.config_dir):
        why = "a token is stored, so each request needs it"
        what = "the token" if new_token else "the stored token (shown only when `lancelot init --http-token` made it)"
    else:
        return []
    configs = http_client_configs()
    wins = " (LANCELOT_HTTP_TOKENS, set here, wins over it where it is set)" if settings.http_tokens else ""
    shown = (
        [
            "",
            f"The new token (shown this once; {SCRIPT} keeps it and will not show it again){wins}:",
            f"{TOKEN_VARIABLE}={new_token}",
        ]
        if new_token
        else []
    )
    return [
        "",
        f"Over HTTP (`{SCRIPT} serve --http`; {why}): set {TOKEN_VARIABLE} to {what} where the client runs.",
        *shown,
        "",
        "Claude Code:",
        f"  {configs['claude']}",
        "",
        "Cursor (.cursor/mcp.json):",
        configs["json"],
        "",
        "VS Code (.vscode/mcp.json; it asks for the token):",
        configs["vscode_json"],
        "",
        "Codex (~/.codex/config.toml):",
        configs["codex"],
    ]


def print_client_configs(db_uri: str, launch: list[str] | None = None, new_token: str | None = None) -> None:
    """Print every configuration on stdout (the result of `init`; notes go to stderr), and the HTTP
    token ``new_token`` this run made."""
    command, *leading = launch or server_launch()
    configs = client_configs(db_uri, command, tuple(leading))
    lines = [
        "",
        f"Server command: {shlex.join([command, *leading])}",
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
        *http_lines(new_token),
    ]
    if not os.path.isabs(command):
        lines.append(
            f"\n(The `{SCRIPT}` script was not found here: replace `{command}` with its absolute path, "
            f"which `which {SCRIPT}` prints where it is installed.)"
        )
    typer.echo("\n".join(lines))
