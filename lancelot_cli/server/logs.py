"""Logging for both transports: everything to stderr (stdout belongs to MCP in `serve`)."""

from __future__ import annotations

import logging
import sys

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
