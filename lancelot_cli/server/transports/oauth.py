"""OAuth access tokens for `serve --http` and the Lambda handler (issue 50 #1): the server as an
OAuth 2.1 protected resource, as the MCP authorization spec describes it.

With ``LANCELOT_OAUTH_ISSUER`` and ``LANCELOT_OAUTH_RESOURCE`` set, a bearer token is accepted when
it is a JWT (RFC 9068 access token) signed by one of the issuer's keys (its JWKS:
``LANCELOT_OAUTH_JWKS_URL``, else the ``jwks_uri`` of the issuer's RFC 8414 or OpenID metadata),
with that ``iss``, an ``aud`` naming this server's resource URL (a token issued for another server
is refused), and an ``exp`` not passed (30 s of clock skew allowed). Only asymmetric algorithms
count: ``none`` and HMAC (which a forger could key with the public key) never do.

The server publishes its protected-resource metadata (RFC 9728) at the path the SDK's
``build_resource_metadata_url`` gives for the resource (``/.well-known/oauth-protected-resource/mcp``
for ``https://host/mcp``) and at ``/.well-known/oauth-protected-resource``, and names it in every
``WWW-Authenticate`` challenge, which is how the MCP SDK's client finds the authorization server.

PyJWT (a dependency of the MCP SDK) checks the signature and claims; its key client fetches the JWKS
over HTTPS with the standard library, in a worker thread, and keeps the key set five minutes.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any
from urllib.parse import urlparse

from lancelot_cli.errors import ConfigError

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY = 30  # seconds of clock skew between this server and the issuer
FETCH_TIMEOUT = 10  # seconds for the issuer's metadata or keys
KEYS_LIFESPAN = 300  # seconds the issuer's key set is kept
REFETCH_COOLDOWN = 30  # seconds between refetches for a key id not in the set
METADATA_ROOT = "/.well-known/oauth-protected-resource"

log = logging.getLogger(__name__)


def _http_url(name: str, value: str) -> str:
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"{name} must be an http(s) URL, got {value!r}")
    return value


class OAuthVerifier:
    """Checks access tokens of one issuer for one resource, and serves the resource's metadata.

    Args:
        issuer: the authorization server's issuer identifier (compared exactly with ``iss``).
        resource: this server's public MCP URL (the audience).
        jwks_url: where the issuer's keys are; None to read it from the issuer's metadata.
    """

    def __init__(self, issuer: str, resource: str, jwks_url: str | None = None) -> None:
        from mcp.server.auth.routes import build_resource_metadata_url
        from mcp.shared.auth import ProtectedResourceMetadata

        self.issuer = _http_url("LANCELOT_OAUTH_ISSUER", issuer)
        self.resource = _http_url("LANCELOT_OAUTH_RESOURCE", resource)
        self._jwks_url = _http_url("LANCELOT_OAUTH_JWKS_URL", jwks_url) if jwks_url else None
        self.metadata_url = str(build_resource_metadata_url(resource))  # type: ignore[arg-type]
        self.metadata_paths = {urlparse(self.metadata_url).path, METADATA_ROOT}
        document = ProtectedResourceMetadata(resource=resource, authorization_servers=[issuer])  # type: ignore[arg-type,list-item]
        self.metadata = document.model_dump_json(exclude_none=True).encode()
        trimmed = resource.rstrip("/")
        self._audiences = [trimmed, trimmed + "/"]
        self._keys: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, issuer: str | None, resource: str | None, jwks_url: str | None) -> OAuthVerifier | None:
        """The verifier the settings ask for, or None when neither issuer nor resource is set.

        Raises:
            ConfigError: one of the two without the other, or a value that is not an http(s) URL.
        """
        if not issuer and not resource:
            if jwks_url:
                raise ConfigError("LANCELOT_OAUTH_JWKS_URL needs LANCELOT_OAUTH_ISSUER and LANCELOT_OAUTH_RESOURCE")
            return None
        if not issuer or not resource:
            missing = "LANCELOT_OAUTH_ISSUER" if not issuer else "LANCELOT_OAUTH_RESOURCE"
            raise ConfigError(f"OAuth needs both LANCELOT_OAUTH_ISSUER and LANCELOT_OAUTH_RESOURCE; set {missing}")
        return cls(issuer, resource, jwks_url)

    async def accepts(self, token: str) -> bool:
        """Whether ``token`` is a valid access token of the issuer for this resource."""
        import anyio

        return await anyio.to_thread.run_sync(self._accepts, token)

    def _accepts(self, token: str) -> bool:
        import jwt

        try:
            if jwt.get_unverified_header(token).get("alg") not in ALGORITHMS:
                return False
            key = self._key_client().get_signing_key_from_jwt(token).key
            jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self._audiences,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWKClientConnectionError, ConfigError) as exc:
            log.warning("cannot fetch the signing keys of %s: %s", self.issuer, exc)
            return False
        except (jwt.PyJWTError, ValueError) as exc:
            log.debug("access token refused: %s", type(exc).__name__)
            return False
        return True

    def _key_client(self) -> Any:
        with self._lock:
            if self._keys is None:
                import jwt

                url = self._jwks_url or self._discovered_jwks_url()
                # The key set is cached for KEYS_LIFESPAN; a token naming an unknown key refetches it
                # at most once per REFETCH_COOLDOWN (a flood of forged key ids cannot flood the
                # issuer). No per-key cache: PyJWT keeps those with no expiry, so a key the issuer
                # withdrew would stay good here.
                self._keys = jwt.PyJWKClient(
                    url, lifespan=KEYS_LIFESPAN, timeout=FETCH_TIMEOUT, cooldown_duration=REFETCH_COOLDOWN
                )
            return self._keys

    def _discovered_jwks_url(self) -> str:
        """``jwks_uri`` from the issuer's RFC 8414 metadata, else its OpenID configuration."""
        import urllib.request

        parsed = urlparse(self.issuer)
        path = parsed.path.rstrip("/")
        base = f"{parsed.scheme}://{parsed.netloc}"
        for url in (
            f"{base}/.well-known/oauth-authorization-server{path}",
            f"{base}{path}/.well-known/openid-configuration",
        ):
            try:
                with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as response:
                    metadata = json.loads(response.read(1_000_000))
            except (OSError, ValueError):
                continue
            if isinstance(metadata, dict) and metadata.get("issuer") == self.issuer and metadata.get("jwks_uri"):
                return _http_url("jwks_uri", str(metadata["jwks_uri"]))
        raise ConfigError(f"found no jwks_uri in the metadata of {self.issuer}; set LANCELOT_OAUTH_JWKS_URL")
