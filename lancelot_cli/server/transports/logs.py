"""Logging for both transports: everything to stderr (stdout belongs to MCP in `serve`).

Every line goes through ``redact.text`` (issue 46 #2): the HTTP client logs each request's URL, and
``OPENAI_BASE_URL`` may carry a user and password; a traceback or a library's debug line may carry
anything else the redactor knows. The one handler is on the root logger: uvicorn installs none of
its own (``log_config=None`` in server/transports/http.py; its loggers propagate here, in each worker process
too), and the MCP SDK's root handler, which ``MCPServer()`` installs, is replaced here (before this,
at debug, it has logged only the server's own set-up).
"""

from __future__ import annotations

import logging
import sys

from lancelot_cli import redact
from lancelot_cli.settings import Settings

# Each logs every request at INFO or below: the MCP SDK every request and tool error, the HTTP client
# every embeddings call ("HTTP Request: POST <url> ..."). Kept for debug runs only. The openai client
# sends through httpx2/httpcore2 (httpx/httpcore with other openai releases, and under the MCP SDK).
CHATTY = ("mcp", "httpx", "httpcore", "httpx2", "httpcore2")


class RedactingFormatter(logging.Formatter):
    """A ``logging.Formatter`` whose whole line, traceback included, is passed through ``redact.text``."""

    def format(self, record: logging.LogRecord) -> str:
        return redact.text(super().format(record))


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level_number)
    quiet = settings.log_level_number > logging.DEBUG
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.WARNING if quiet else logging.NOTSET)
