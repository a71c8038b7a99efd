"""Embeddings through the ``openai`` client (any OpenAI-compatible endpoint via ``OPENAI_BASE_URL``).

``openai`` is imported on first use: it costs ~0.6 s and most calls (text search) never need it.

One client is kept per (key, endpoint, timeout) for the life of the process, so repeated searches
reuse its HTTP connection instead of opening a new one per query (docs/design.md#issue-13).

Retries are ours, not the client's (its own retry is off): the client retries every connection
error, so an endpoint that refuses connections took 24 s of back-off before its error (docs/design.md#issue-12).
Here a request is retried only when a retry can help (a timeout, a dropped connection, 408, 409,
429, 5xx), with exponential back-off that honours ``Retry-After``, at most ``max_retries`` times
and never starting a retry after ``retry_budget`` seconds. A refused connection, an unknown host,
401/403/404 and other 4xx fail at once.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

from lancelot_cli import redact
from lancelot_cli.errors import EmbeddingError

RETRY_DELAY = 0.5  # first back-off in seconds, doubled per retry (the openai client's own values)
MAX_RETRY_DELAY = 8.0
RETRY_BUDGET = 30.0
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx
MAX_CLIENTS = 4  # a rotated key or a second endpoint; older clients are dropped

_clients: dict[tuple[str, str | None, float], Any] = {}
_clients_lock = threading.Lock()


def shared_client(api_key: str, base_url: str | None, timeout: float) -> Any:
    """The process's ``openai.OpenAI`` for this key, endpoint and timeout (built on first use)."""
    key = (api_key, base_url, timeout)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            import openai

            client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
            while len(_clients) >= MAX_CLIENTS:
                del _clients[next(iter(_clients))]
            _clients[key] = client
        return client


class OpenAIEmbedder:
    """Turns texts into vectors with one model. Raises ``EmbeddingError`` with a next step."""

    def __init__(
        self,
        api_key: str,
        model: str,
        base_url: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_budget: float = RETRY_BUDGET,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_budget = retry_budget
        redact.remember(api_key)  # an endpoint's error may echo it back (issue 37)
        redact.remember_url(base_url)  # and the URL's password, sent as "Authorization: Basic …" (issue 46)

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIEmbedder(model={self.model!r}, base_url={redact.url(self.base_url)!r})"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        client = shared_client(self._api_key, self.base_url, self._timeout)
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                reply = client.embeddings.create(model=self.model, input=list(texts))
                break
            except Exception as exc:  # noqa: BLE001 - the client's, httpx's or the OS's: sorted below
                delay = self._retry_delay(exc, attempt, time.monotonic() - started)
                if delay is None:
                    raise self._error(exc) from None
                time.sleep(delay)
                attempt += 1
        vectors = [list(item.embedding) for item in sorted(reply.data, key=lambda item: item.index)]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{self._where()} returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def _retry_delay(self, exc: Exception, attempt: int, elapsed: float) -> float | None:
        """Seconds to wait before retrying ``exc``, or None when retrying cannot help or is used up."""
        if attempt >= self._max_retries or not _recoverable(exc):
            return None
        delay = min(RETRY_DELAY * 2**attempt, MAX_RETRY_DELAY) * random.uniform(0.75, 1.0)
        after = _retry_after(exc)
        if after is not None:
            delay = after
        if elapsed + delay > self._retry_budget:
            return None
        return delay

    def _where(self) -> str:
        return redact.url(self.base_url) or "the OpenAI API"

    def _error(self, exc: Exception) -> Exception:
        import openai

        where = self._where()
        if isinstance(exc, openai.AuthenticationError):
            return EmbeddingError(f"{where} rejected the API key (401); check OPENAI_API_KEY or run `lancelot init`")
        if isinstance(exc, openai.PermissionDeniedError):
            return EmbeddingError(f"{where} refused this key access (403); check the key's project and permissions")
        if isinstance(exc, openai.NotFoundError):
            return EmbeddingError(
                f"{where} does not know the model {self.model!r} (404); set EMBEDDING_MODEL to a model it serves"
            )
        if isinstance(exc, openai.RateLimitError):
            return EmbeddingError(f"{where} is rate-limiting requests (429); wait and try again")
        if isinstance(exc, openai.APITimeoutError):
            return EmbeddingError(f"{where} did not answer in {self._timeout:.0f} s; check OPENAI_BASE_URL")
        if isinstance(exc, openai.APIConnectionError):
            return EmbeddingError(f"cannot reach {where}; check your network or OPENAI_BASE_URL")
        if isinstance(exc, openai.APIStatusError):
            # A proxy's error body may echo the request's Authorization header: never pass the key on.
            return EmbeddingError(f"{where} answered HTTP {exc.status_code}: {_short(redact.text(exc.message))}")
        return exc  # not from the API (a bug): keep it as it is


def _recoverable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return True
    if isinstance(exc, openai.APIConnectionError):
        # No connection at all (refused, unknown host, unreachable) will not come back in seconds;
        # a connection dropped mid-request may.
        return not _never_connected(exc)
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def _never_connected(exc: BaseException) -> bool:
    """True when the transport could not open a connection: its ``ConnectError`` (httpx or
    httpx2, whichever the client uses), or the OS error under it, is in the exception's chain."""
    seen: BaseException | None = exc
    for _ in range(10):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if seen is None:
            return False
        if type(seen).__name__ == "ConnectError" or isinstance(seen, (ConnectionRefusedError, socket.gaierror)):
            return True
    return False


def _retry_after(exc: Exception) -> float | None:
    """The server's ``Retry-After`` (seconds form) when it is sane, else None."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds <= 60 else None


def _short(text: str, size: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= size else text[: size - 1] + "…"
