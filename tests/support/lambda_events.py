"""API Gateway HTTP API (payload format 2.0) events, as Lambda hands them to
``lancelot_cli.server.aws_lambda.handler``: built by tests/test_lambda.py for one request each, and
by tests/test_protocol_revisions.py under the SDK's own HTTP client (``LambdaTransport``)."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs

API_HOST = "abc123.execute-api.eu-west-1.amazonaws.com"


def make_event(
    body: str | bytes | dict[str, Any] | None = None,
    *,
    method: str = "POST",
    path: str = "/mcp",
    stage: str = "$default",
    headers: dict[str, str] | None = None,
    cookies: list[str] | None = None,
    raw_query: str = "",
    base64_body: bool = False,
    content_length: bool = True,
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload format 2.0) event, as Lambda receives it."""
    if isinstance(body, dict):
        body = json.dumps(body)
    raw = body.encode() if isinstance(body, str) else body
    all_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": API_HOST,
        "user-agent": "pytest-lambda/1.0",
        "x-forwarded-for": "203.0.113.7",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
        "x-amzn-trace-id": "Root=1-65f0c0de-0123456789abcdef01234567",
    }
    if raw is not None and content_length:
        all_headers["content-length"] = str(len(raw))
    for name, value in (headers or {}).items():
        if value is None:
            all_headers.pop(name.lower(), None)
        else:
            all_headers[name.lower()] = value
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": raw_query,
        "headers": all_headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": API_HOST,
            "domainPrefix": "abc123",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "pytest-lambda/1.0",
            },
            "requestId": "JKJaXmPLvHcESHA=",
            "routeKey": "$default",
            "stage": stage,
            "time": "10/Mar/2025:12:00:00 +0000",
            "timeEpoch": 1741608000000,
        },
        "isBase64Encoded": base64_body,
    }
    if cookies is not None:
        event["cookies"] = cookies
    if raw_query:
        # API Gateway joins repeated parameters with commas.
        parsed = parse_qs(raw_query, keep_blank_values=True)
        event["queryStringParameters"] = {name: ",".join(values) for name, values in parsed.items()}
    if raw is not None:
        event["body"] = base64.b64encode(raw).decode() if base64_body else raw.decode()
    return event


class LambdaTransport:
    """An ``httpx2`` transport that hands each request to a Lambda ``handler(event, context)`` as the
    API Gateway event it would become, and turns the handler's ``{statusCode, headers, body}`` back
    into the HTTP response: so the mcp SDK's own Streamable HTTP client can talk to the handler.

    The handler runs on one thread of its own, as a Lambda runtime runs it (Mangum keeps an event
    loop per thread), never on the test's event loop."""

    def __init__(self, handler: Any) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.handler = handler
        self.events: list[dict[str, Any]] = []
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lambda")

    def transport(self) -> Any:
        import httpx2

        outer = self

        class _Transport(httpx2.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
                return await outer.handle(request)

            async def aclose(self) -> None:
                outer._thread.shutdown(wait=True)

        return _Transport()

    async def handle(self, request: Any) -> Any:
        import asyncio

        import httpx2

        body = await request.aread()
        headers = {name.lower(): value for name, value in request.headers.items()}
        event = make_event(body or None, method=request.method, path=request.url.path, headers=headers)
        self.events.append(event)
        reply = await asyncio.wrap_future(self._thread.submit(self.handler, event, None))
        content = reply.get("body") or ""
        data = base64.b64decode(content) if reply.get("isBase64Encoded") else content.encode()
        return httpx2.Response(reply["statusCode"], headers=reply.get("headers") or {}, content=data, request=request)
