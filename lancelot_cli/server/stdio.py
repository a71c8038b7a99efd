"""`lancelot serve` over stdio: stdout carries MCP messages and nothing else.

While serving, the SDK writes the protocol through a private copy of fd 1 and points fd 1 itself
at stderr, so a flushed ``print`` from any library lands on stderr. What such a print leaves in
``sys.stdout``'s buffer would be flushed at exit, after the SDK has put fd 1 back; so once the
session ends, fd 1 is pointed at stderr for good. Logs go to stderr. The server exits 0 when the
client closes stdin.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from lancelot_cli.settings import Settings


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level_number)
    if settings.log_level_number > logging.DEBUG:
        # The SDK logs every request and every tool error at INFO; keep that for debug runs.
        logging.getLogger("mcp").setLevel(logging.WARNING)


def run_stdio(settings: Settings, metrics_log: Path | None = None) -> None:
    from lancelot_cli.server.app import build_server
    from lancelot_cli.server.metrics import Metrics

    server = build_server(settings, metrics=Metrics(metrics_log))
    configure_logging(settings)  # after MCPServer(), which installs its own root handler
    try:
        server.run()
    except KeyboardInterrupt:  # Ctrl-C is how a person stops a server: not an error
        pass
    finally:
        _divert_stdout_for_good()


def _divert_stdout_for_good() -> None:
    """Send whatever is still buffered for stdout (flushed at exit) to stderr, never to the client."""
    try:
        sys.stderr.flush()
        os.dup2(sys.stderr.fileno(), 1)
    except (OSError, ValueError):  # no real descriptors (embedded use): nothing to protect
        pass
