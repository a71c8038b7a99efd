"""Login for `serve --http` and the Lambda handler (issue 50 #1): static bearer tokens, and OAuth
access tokens through ``oauth.py``.

With ``LANCELOT_HTTP_TOKENS`` set (or, unset, tokens `lancelot init --http-token` stored in the
keychain or the encrypted file: ``http_tokens``), a request to the MCP endpoint (and to ``/metrics``) must carry
``Authorization: Bearer <one of them>``; anything else is answered 401 with a ``WWW-Authenticate:
Bearer`` challenge (RFC 6750 §3: no ``error`` when no credentials came, ``invalid_token`` when the
ones that came are wrong). The token is read from that header only, never from the query string
(the MCP authorization spec forbids it: URLs end up in logs).

Comparison: the SHA-256 of what was sent against the SHA-256 of every configured token, each with
``hmac.compare_digest`` and without stopping at a match, so neither the length of a token nor which
one matched shows in the time taken. The tokens are handed to ``redact`` so that no log line or
reply carries them, and Guard drops the ``Authorization`` header before the MCP SDK sees a request.

With OAuth on as well, a token that is none of the static ones is checked as an access token of
the authorization server, and every challenge names the protected-resource metadata document.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lancelot_cli import redact
from lancelot_cli.errors import ConfigError

MIN_TOKEN = 16  # characters: shorter is guessable, and redact would not hide it (its minimum is 8)
# RFC 6750 §2.1 b64token: what may follow "Bearer " in a header
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~+/-]+=*")
REALM = "lancelot"
ON = ("1", "on", "true", "yes")
OFF = ("0", "off", "false", "no")

Header = tuple[bytes, bytes]

if TYPE_CHECKING:
    from pathlib import Path

    from lancelot_cli.server.transports.oauth import OAuthVerifier


def switch(name: str, value: str | None) -> bool:
    """A yes/no setting: 1, on, true, yes (any case) -> True; unset, 0, off, false, no -> False.

    Raises:
        ConfigError: any other value (one line naming the setting).
    """
    if value is None or not value.strip():
        return False
    word = value.strip().lower()
    if word in ON:
        return True
    if word in OFF:
        return False
    raise ConfigError(f"{name} must be 1 or 0 (on/off, true/false, yes/no), got {value.strip()!r}")


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


@dataclass(frozen=True)
class Refusal:
    """A request the login turned away: the HTTP status, a message, and the challenge header."""

    status: int
    message: str
    headers: list[Header]


class Login:
    """Checks the ``Authorization`` header of a request against the configured bearer tokens.

    Args:
        tokens: the accepted tokens (each at least ``MIN_TOKEN`` characters of the RFC 6750 token
            alphabet; see ``from_settings``).
        oauth: the access-token check of an authorization server, or None; when set, every
            challenge names its protected-resource metadata document (the MCP authorization spec).
    """

    def __init__(self, tokens: Iterable[str], oauth: OAuthVerifier | None = None) -> None:
        self._digests = tuple(_digest(token.encode("ascii")) for token in tokens)
        self.oauth = oauth
        self.resource_metadata = oauth.metadata_url if oauth is not None else None

    @classmethod
    def from_settings(
        cls,
        tokens: tuple[str, ...],
        issuer: str | None = None,
        resource: str | None = None,
        jwks_url: str | None = None,
        config_dir: Path | None = None,
    ) -> Login | None:
        """The login for ``LANCELOT_HTTP_TOKENS`` and the ``LANCELOT_OAUTH_*`` settings, or None when
        none is set. Every token is handed to ``redact`` first, so that from here on no log line or
        reply carries it. With no ``tokens``, the ones `lancelot init --http-token` stored in the
        keychain or the encrypted file of ``config_dir`` (the environment's config folder when None)
        count instead (``http_tokens``).

        Raises:
            ConfigError: a token too short or with characters a Bearer header cannot carry (the
                message says which one by position, never the token); OAuth settings incomplete; a
                stored token file that cannot be decrypted.
        """
        origin = "LANCELOT_HTTP_TOKENS"
        if not tokens:
            from lancelot_cli import http_tokens
            from lancelot_cli.settings import config_dir as environment_config_dir

            stored = http_tokens.find(config_dir or environment_config_dir())
            if stored is not None:
                tokens, origin = stored.tokens, f"the stored tokens ({stored.source})"
        for token in tokens:
            redact.remember(token)
        for number, token in enumerate(tokens, 1):
            which = f"token {number} of {len(tokens)} in {origin}"
            if not TOKEN_SHAPE.fullmatch(token):
                raise ConfigError(
                    f"{which} has characters a bearer token cannot have; use letters, digits and - . _ ~ + /"
                )
            if len(token) < MIN_TOKEN:
                raise ConfigError(
                    f"{which} is {len(token)} characters; use at least {MIN_TOKEN} (e.g. `openssl rand -hex 32`)"
                )
        oauth = None
        if issuer or resource or jwks_url:
            from lancelot_cli.server.transports.oauth import OAuthVerifier

            oauth = OAuthVerifier.from_settings(issuer, resource, jwks_url)
        return cls(tokens, oauth) if tokens or oauth else None

    async def refusal(self, authorization: str | None) -> Refusal | None:
        """None when ``authorization`` (the header's value, or None) carries an accepted token."""
        scheme, _, presented = (authorization or "").strip().partition(" ")
        presented = presented.strip()
        if scheme.lower() != "bearer" or not presented:
            return Refusal(401, "Unauthorized: send Authorization: Bearer <token>", [self.challenge()])
        accepted = self._accepted(presented.encode("utf-8", "surrogateescape"))
        if not accepted and self.oauth is not None and TOKEN_SHAPE.fullmatch(presented):
            accepted = await self.oauth.accepts(presented)
        if not accepted:
            return Refusal(
                401,
                "Unauthorized: the bearer token is not valid here",
                [self.challenge("invalid_token", "The access token is not valid")],
            )
        return None

    def _accepted(self, presented: bytes) -> bool:
        sent = _digest(presented)
        found = False
        for digest in self._digests:  # every one, even after a match: the time says nothing
            found |= hmac.compare_digest(sent, digest)
        return found

    def challenge(self, error: str | None = None, description: str | None = None) -> Header:
        """The ``WWW-Authenticate`` header of a 401."""
        parts = [f'realm="{REALM}"']
        if self.resource_metadata:
            parts.append(f'resource_metadata="{self.resource_metadata}"')
        if error:
            parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
        return (b"www-authenticate", ("Bearer " + ", ".join(parts)).encode("ascii"))
