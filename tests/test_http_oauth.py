"""OAuth access tokens (issue 50 #1, the MCP authorization spec): `lancelot serve --http` as a
protected resource of a small authorization server these tests start on 127.0.0.1 (RFC 8414
metadata, a JWKS, and a client-credentials token endpoint that signs RFC 9068 JWTs with RS256).

The MCP SDK's own client (``ClientCredentialsOAuthProvider``) logs in from nothing: it gets the
401, reads ``resource_metadata`` from the challenge, fetches the protected-resource metadata, the
authorization server's metadata, a token for this resource, and calls the tools. Then forged
tokens, one at a time: expired, for another server, from another issuer, signed with another key,
``alg: none``, HMAC keyed with the public key, no ``exp``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import signal
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from lancelot_cli.server.transports import aws_lambda
from tests.support.lambda_events import make_event
from tests.support.servers import Served, free_port
from tests.test_http import assert_error, assert_tool_reply, request, start_server

CLIENT_ID, CLIENT_SECRET = "lancelot-tests", "client-secret-0123456789"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "test-key-1"


class AuthorizationServer:
    """RFC 8414 metadata, a JWKS and a client_credentials token endpoint, on 127.0.0.1."""

    def __init__(self) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.tokens_issued = 0
        self.key_fetches = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
                    return self._json(200, server.metadata())
                if self.path == "/jwks":
                    server.key_fetches += 1
                    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
                    return self._json(200, {"keys": [{**public, "kid": KID, "use": "sig", "alg": "RS256"}]})
                return self._json(404, {"error": "not_found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                basic = self.headers.get("Authorization", "")
                sent = base64.b64decode(basic[6:]).decode() if basic.startswith("Basic ") else ""
                if self.path != "/token" or form.get("grant_type") != "client_credentials":
                    return self._json(400, {"error": "unsupported_grant_type"})
                if sent != f"{CLIENT_ID}:{CLIENT_SECRET}":
                    return self._json(401, {"error": "invalid_client"})
                server.tokens_issued += 1
                token = server.sign(aud=form.get("resource", "urn:nothing"))
                return self._json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "response_types_supported": ["code"],
        }

    def sign(self, *, key: Any = KEY, algorithm: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.issuer, "sub": CLIENT_ID, "client_id": CLIENT_ID, "iat": now, "exp": now + 300}
        payload.update(claims)
        payload = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": KID})


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    server = AuthorizationServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture(scope="module")
def protected(
    tmp_path_factory: pytest.TempPathFactory, sample_db: Path, issuer: AuthorizationServer
) -> Iterator[Served]:
    """`serve --http` whose tokens come from ``issuer`` (its JWKS found through its metadata)."""
    port = free_port()
    served = start_server(
        ["--http", str(port)],
        port,
        tmp_path_factory.mktemp("oauth-server"),
        sample_db,
        LANCELOT_OAUTH_ISSUER=issuer.issuer,
        LANCELOT_OAUTH_RESOURCE=f"http://127.0.0.1:{port}/mcp",
        LANCELOT_LOG_LEVEL="debug",
    )
    yield served
    served.stop(signal.SIGTERM)


class MemoryTokens(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- the SDK's client, from nothing to a tool call ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_sdk_client_credentials_flow_logs_in_and_calls_a_tool(
    protected: Served, issuer: AuthorizationServer
) -> None:
    storage = MemoryTokens()
    provider = ClientCredentialsOAuthProvider(
        server_url=protected.url,
        storage=storage,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        issuer=issuer.issuer,
    )
    before = issuer.tokens_issued
    async with (
        create_mcp_http_client(auth=provider) as http,
        Client(streamable_http_client(protected.url, http_client=http)) as client,
    ):
        search = await client.call_tool("lancedb_search", {"query": "refund policy", "limit": 2})
    assert not search.is_error
    assert issuer.tokens_issued > before and storage.tokens is not None
    assert storage.tokens.access_token not in protected.stderr  # the token is not logged


@pytest.mark.slow
def test_a_request_without_a_token_is_told_where_the_metadata_is(
    protected: Served, issuer: AuthorizationServer
) -> None:
    reply = request(protected.port)
    assert_error(reply, 401)
    challenge = reply.headers["WWW-Authenticate"]
    metadata_url = f"http://127.0.0.1:{protected.port}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata_url}"' in challenge
    document = request(protected.port, "GET", "/.well-known/oauth-protected-resource/mcp")
    assert document.status == 200
    body = document.json()
    assert body["resource"] == protected.url
    assert [server.rstrip("/") for server in body["authorization_servers"]] == [issuer.issuer]
    assert request(protected.port, "GET", "/.well-known/oauth-protected-resource").json() == body


# -- forged and misdirected tokens ----------------------------------------------------------------------


def _part(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def forged(issuer: AuthorizationServer, resource: str) -> dict[str, str]:
    """Tokens that must all be refused, by name (built by hand where PyJWT would refuse to)."""
    now = int(time.time())
    claims = _part({"iss": issuer.issuer, "aud": resource, "exp": now + 300})
    unsigned = f"{_part({'alg': 'none', 'typ': 'JWT', 'kid': KID})}.{claims}."
    # The classic confusion: HMAC keyed with the (public) verification key.
    public_pem = KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{_part({'alg': 'HS256', 'typ': 'JWT', 'kid': KID})}.{claims}"
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    hs256 = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    return {
        "expired": issuer.sign(aud=resource, exp=now - 600, iat=now - 900),
        "other-server": issuer.sign(aud="http://127.0.0.1:1/mcp"),
        "other-issuer": issuer.sign(aud=resource, iss="http://127.0.0.1:1"),
        "other-key": issuer.sign(aud=resource, key=OTHER_KEY),
        "no-exp": issuer.sign(aud=resource, exp=None),
        "no-aud": issuer.sign(),
        "alg-none": unsigned,
        "hs256-with-public-key": hs256,
        "garbage": "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.AAAA",
    }


FORGERIES = [
    "expired",
    "other-server",
    "other-issuer",
    "other-key",
    "no-exp",
    "alg-none",
    "hs256-with-public-key",
    "garbage",
]


@pytest.mark.slow
@pytest.mark.parametrize("kind", FORGERIES)
def test_a_forged_or_misdirected_token_is_401(protected: Served, issuer: AuthorizationServer, kind: str) -> None:
    token = forged(issuer, protected.url)[kind]
    reply = request(protected.port, headers=bearer(token))
    assert_error(reply, 401)
    assert 'error="invalid_token"' in reply.headers["WWW-Authenticate"]


@pytest.mark.slow
def test_a_good_token_is_accepted_and_the_same_token_replayed_elsewhere_is_not(
    protected: Served, issuer: AuthorizationServer, tmp_path: Path, sample_db: Path
) -> None:
    token = issuer.sign(aud=protected.url)
    assert_tool_reply(request(protected.port, headers=bearer(token)))
    # Another server of the same issuer: its own resource URL, so this token is not for it.
    port = free_port()
    other = start_server(
        ["--http", str(port)],
        port,
        tmp_path,
        sample_db,
        LANCELOT_OAUTH_ISSUER=issuer.issuer,
        LANCELOT_OAUTH_RESOURCE=f"http://127.0.0.1:{port}/mcp",
        LANCELOT_OAUTH_JWKS_URL=f"{issuer.issuer}/jwks",
    )
    try:
        assert_error(request(port, headers=bearer(token)), 401)
        assert_tool_reply(request(port, headers=bearer(issuer.sign(aud=other.url))))
    finally:
        other.stop()


@pytest.mark.slow
def test_forged_key_ids_do_not_make_the_server_flood_the_issuer(protected: Served, issuer: AuthorizationServer) -> None:
    assert_tool_reply(request(protected.port, headers=bearer(issuer.sign(aud=protected.url))))  # keys fetched
    before = issuer.key_fetches
    for number in range(30):
        token = jwt.encode(
            {"iss": issuer.issuer, "aud": protected.url, "exp": int(time.time()) + 300},
            OTHER_KEY,
            algorithm="RS256",
            headers={"kid": f"forged-{number}"},
        )
        assert_error(request(protected.port, headers=bearer(token)), 401)
    assert issuer.key_fetches - before <= 1, issuer.key_fetches - before


# -- the Lambda handler ----------------------------------------------------------------------------------


def test_lambda_accepts_only_tokens_for_its_resource(
    monkeypatch: pytest.MonkeyPatch, sample_db: Path, issuer: AuthorizationServer
) -> None:
    resource = "https://abc123.execute-api.eu-west-1.amazonaws.com/mcp"
    monkeypatch.setattr(aws_lambda, "_handler", None)
    for name, value in {
        "LANCEDB_PATH": str(sample_db),
        "LANCELOT_OAUTH_ISSUER": issuer.issuer,
        "LANCELOT_OAUTH_RESOURCE": resource,
    }.items():
        monkeypatch.setenv(name, value)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

    def invoke(**kwargs: Any) -> dict[str, Any]:
        return json.loads(json.dumps(aws_lambda.handler(make_event(**kwargs), None)))

    refused = invoke(body=listing)
    assert refused["statusCode"] == 401
    assert "resource_metadata=" in refused["headers"]["www-authenticate"]
    document = invoke(method="GET", path="/.well-known/oauth-protected-resource/mcp")
    assert document["statusCode"] == 200 and json.loads(document["body"])["resource"] == resource
    for kind, token in forged(issuer, resource).items():
        assert invoke(body=listing, headers=bearer(token))["statusCode"] == 401, kind
    accepted = invoke(body=listing, headers=bearer(issuer.sign(aud=resource)))
    assert accepted["statusCode"] == 200 and "lancedb_search" in accepted["body"]


def test_incomplete_oauth_settings_are_one_line_errors() -> None:
    from lancelot_cli.errors import ConfigError
    from lancelot_cli.server.transports.auth import Login

    with pytest.raises(ConfigError, match="set LANCELOT_OAUTH_RESOURCE"):
        Login.from_settings((), "https://issuer.example", None)
    with pytest.raises(ConfigError, match="http"):
        Login.from_settings((), "issuer.example", "https://mcp.example/mcp")
