"""AWS Lambda: ``handler(event, context)`` for an API Gateway HTTP API (payload format 2.0).

Mangum turns the event into an ASGI request (base64 bodies, cookies, multi-value headers, query
strings) and the response back into ``{statusCode, headers, body}``; the app is the same
``Guard`` + MCP app as ``serve --http``, with the same rules. Differences from HTTP mode:

* Path: with ``LANCELOT_BASE_PATH`` unset every path is served; set (e.g. ``/lancelot``), only
  that path (and ``<base>/mcp``) is, after removing the stage prefix of a named API Gateway
  stage (``/prod/lancelot`` -> ``/lancelot``). Other paths are 404.
* Host: not checked unless ``LANCELOT_ALLOWED_HOSTS`` is set (API Gateway owns the host name).
* Settings and anything else Lancelot would write live under ``/tmp`` (the only writable place).

The engine (with its LanceDB connection) and the app are built on the first invocation and
reused by warm ones; Mangum runs the app's lifespan per invocation, which starts a fresh, cheap
MCP session manager each time.
"""

from __future__ import annotations

import os
from typing import Any

_handler: Any = None


def _route(base_path: str | None):  # type: ignore[no-untyped-def]
    base = "/" + base_path.strip("/") if base_path and base_path.strip("/") else None

    def route(scope: dict[str, Any]) -> bool:
        if base is None:
            return True
        raw = scope.get("path") or "/"
        path = raw
        stage = (scope.get("aws.event") or {}).get("requestContext", {}).get("stage")
        if stage and stage != "$default" and (path == f"/{stage}" or path.startswith(f"/{stage}/")):
            path = path[len(stage) + 1:] or "/"
        # Either form matches: the path without the stage prefix, or as the request gave it
        # (a base path that includes the stage, or a stage named like the base path).
        candidates = {path.rstrip("/") or "/", raw.rstrip("/") or "/"}
        return bool(candidates & {base, f"{base}/mcp"})

    return route


def build_handler() -> Any:
    """A Mangum handler over the HTTP app, configured from the environment."""
    from mangum import Mangum

    from lancelot_cli.engine import Engine
    from lancelot_cli.server.http import create_asgi_app
    from lancelot_cli.settings import load

    os.environ.setdefault("LANCELOT_CONFIG_DIR", "/tmp/lancelot")
    settings = load()
    app = create_asgi_app(settings, host="0.0.0.0", port=443, engine=Engine(settings), route=_route(settings.base_path))
    return Mangum(app, lifespan="on", api_gateway_base_path="/")


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda entry point (`lancelot_cli.server.aws_lambda.handler`, the Dockerfile's CMD)."""
    global _handler
    if _handler is None:
        _handler = build_handler()
    return _handler(event, context)
