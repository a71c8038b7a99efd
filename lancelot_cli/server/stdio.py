"""`lancelot serve` over stdio: stdout carries MCP messages and nothing else.

While serving, ``sys.stdout`` is pointed at stderr, so a stray ``print`` in any library lands on
stderr instead of corrupting the protocol stream (the SDK itself writes through private copies
of the file descriptors). Logs go to stderr. The server exits 0 when the client closes stdin.
"""

from __future__ import annotations

import logging
import sys
import threading

from lancelot_cli.settings import Settings


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level_number)


def _warm_up() -> None:
    """Import lancedb in the background so the first tool call does not pay for it."""
    try:
        import lancedb  # noqa: F401
    except Exception:  # the first tool call will report any real problem
        pass


def run_stdio(settings: Settings) -> None:
    from lancelot_cli.server.app import build_server

    server = build_server(settings)
    configure_logging(settings)  # after MCPServer(), which installs its own root handler
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    threading.Thread(target=_warm_up, name="lancelot-warm-up", daemon=True).start()
    try:
        server.run()
    finally:
        sys.stdout = real_stdout
