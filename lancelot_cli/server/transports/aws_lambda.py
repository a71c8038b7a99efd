"""AWS Lambda: ``handler(event, context)`` for an API Gateway HTTP API (payload format 2.0).

Mangum turns the event into an ASGI request (base64 bodies, cookies, multi-value headers, query
strings) and the response back into ``{statusCode, headers, body}``; the app is the same
``Guard`` + MCP app as ``serve --http``, with the same rules. Differences from HTTP mode:

* Path: with ``LANCELOT_BASE_PATH`` unset every path is served; set (e.g. ``/lancelot``), only
  that path (and ``<base>/mcp``) is, after removing the stage prefix of a named API Gateway
  stage (``/prod/lancelot`` -> ``/lancelot``). Other paths are 404.
* Host: not checked unless ``LANCELOT_ALLOWED_HOSTS`` is set (API Gateway owns the host name).
* Settings and anything else Lancelot would write live under ``/tmp`` (the only writable place).
* Login: with ``LANCELOT_HTTP_TOKENS`` set, the same bearer-token check as HTTP mode (a request
  without an accepted token is 401); unset, the function has none of its own (API Gateway's
  authorizers can be in front). No ``/healthz`` or ``/metrics``.

The engine (with its LanceDB connection) and the app are built on the first invocation and
reused by warm ones; Mangum runs the app's lifespan per invocation, which starts a fresh, cheap
MCP session manager each time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
from typing import Any

_handler: Any = None
# Mangum is the `lambda` extra: nobody but the Lambda image needs it.
MISSING_MANGUM = "the Lambda handler needs Mangum, which is not installed here: {install}"


def _route(base_path: str | None) -> Callable[[MutableMapping[str, Any]], bool]:
    base = "/" + base_path.strip("/") if base_path and base_path.strip("/") else None

    def route(scope: MutableMapping[str, Any]) -> bool:
        if base is None:
            return True
        raw = scope.get("path") or "/"
        path = raw
        stage = (scope.get("aws.event") or {}).get("requestContext", {}).get("stage")
        if stage and stage != "$default" and (path == f"/{stage}" or path.startswith(f"/{stage}/")):
            path = path[len(stage) + 1 :] or "/"
        # Either form matches: the path without the stage prefix, or as the request gave it
        # (a base path that includes the stage, or a stage named like the base path).
        candidates = {path.rstrip("/") or "/", raw.rstrip("/") or "/"}
        return bool(candidates & {base, f"{base}/mcp"})

    return route


def build_handler() -> Any:
    """A Mangum handler over the HTTP app, configured from the environment."""
    try:
        from mangum import Mangum
    except ImportError:
        from lancelot_cli.install_hint import install_command

        raise ImportError(MISSING_MANGUM.format(install=install_command("lambda"))) from None

    from lancelot_cli.engine import Engine
    from lancelot_cli.server.transports.http import create_asgi_app
    from lancelot_cli.settings import load
    from lancelot_cli.startup import start

    start()  # the lancedb import deferral, before anything loads lancedb (issue 48 #4)

    os.environ.setdefault("LANCELOT_CONFIG_DIR", "/tmp/lancelot")
    settings = load()
    # pages=False: no /healthz or /metrics (every path may be the MCP endpoint here, and a function
    # instance's counters are not what anyone scrapes); the login of LANCELOT_HTTP_TOKENS holds.
    app = create_asgi_app(
        settings, host="0.0.0.0", port=443, engine=Engine(settings), route=_route(settings.base_path), pages=False
    )
    return Mangum(app, lifespan="on", api_gateway_base_path="/")


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The Lambda entry point (`lancelot_cli.server.aws_lambda.handler`, the Dockerfile's CMD).

    An event that is not an HTTP API request (not an object, no ``requestContext.http``, headers
    that are not strings, a body that is not base64 when it says it is...) gets a 400 with a
    JSON-RPC error saying so, never an exception: Mangum reads events with ``[]`` and ``.items()``
    and raised on them (docs/design.md#issue-27 item 7)."""
    global _handler
    problem = _malformed(event)
    if problem:
        return _bad_event(problem)
    if _handler is None:
        _handler = build_handler()
    if event.get("headers") is None:  # "no headers" as null: Mangum wants an object
        event = {**event, "headers": {}}
    try:
        return _handler(event, context)
    except (KeyError, TypeError, AttributeError, ValueError, RuntimeError) as exc:
        # Mangum's event parsing (the app answers its own errors as HTTP responses)
        return _bad_event(f"{type(exc).__name__}: {exc}"[:200])


def _malformed(event: Any) -> str | None:
    """What makes ``event`` no API Gateway HTTP API (payload 2.0) request, or None."""
    if not isinstance(event, dict):
        return f"the event is {type(event).__name__}, not an object"
    http = (event.get("requestContext") or {}).get("http") if isinstance(event.get("requestContext"), dict) else None
    if not isinstance(http, dict) or not isinstance(http.get("method"), str) or not isinstance(http.get("path"), str):
        return "requestContext.http with a method and a path is missing"
    headers = event.get("headers", {})
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
    ):
        return "headers must be an object of strings"
    cookies = event.get("cookies")
    if cookies is not None and not (isinstance(cookies, list) and all(isinstance(c, str) for c in cookies)):
        return "cookies must be a list of strings"
    for key in ("body", "rawQueryString", "rawPath"):
        if event.get(key) is not None and not isinstance(event[key], str):
            return f"{key} must be a string"
    if event.get("isBase64Encoded") and event.get("body"):
        import base64
        import binascii

        try:
            base64.b64decode(event["body"], validate=True)
        except (binascii.Error, ValueError):
            return "the body is marked base64 but is not"
    return None


def _bad_event(problem: str) -> dict[str, Any]:
    import json

    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": f"Invalid Request: not an API Gateway HTTP API event ({problem})"},
    }
    return {
        "statusCode": 400,
        "headers": {"content-type": "application/json"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
