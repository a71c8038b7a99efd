"""Embeddings through the ``openai`` client (any OpenAI-compatible endpoint via ``OPENAI_BASE_URL``).

``openai`` is imported on first use: it costs ~0.6 s and most calls (text search) never need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lancelot_cli.errors import EmbeddingError


class OpenAIEmbedder:
    """Turns texts into vectors with one model. Raises ``EmbeddingError`` with a next step."""

    def __init__(self, api_key: str, model: str, base_url: str | None = None, *, timeout: float = 30.0,
                 max_retries: int = 2) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._client: Any = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def _openai(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self._timeout,
                                         max_retries=self._max_retries)
        return self._client

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import openai

        where = self.base_url or "the OpenAI API"
        try:
            reply = self._openai().embeddings.create(model=self.model, input=list(texts))
        except openai.AuthenticationError:
            raise EmbeddingError(
                f"{where} rejected the API key (401); check OPENAI_API_KEY or run `lancelot init`"
            ) from None
        except openai.NotFoundError:
            raise EmbeddingError(
                f"{where} does not know the model {self.model!r} (404); set EMBEDDING_MODEL to a model it serves"
            ) from None
        except openai.RateLimitError:
            raise EmbeddingError(f"{where} is rate-limiting requests (429); wait and try again") from None
        except openai.APITimeoutError:
            raise EmbeddingError(f"{where} did not answer in {self._timeout:.0f} s; check OPENAI_BASE_URL") from None
        except openai.APIConnectionError:
            raise EmbeddingError(
                f"cannot reach {where}; check your network or OPENAI_BASE_URL"
            ) from None
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"{where} answered HTTP {exc.status_code}: {_short(exc.message)}") from None
        vectors = [list(item.embedding) for item in sorted(reply.data, key=lambda item: item.index)]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{where} returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors


def _short(text: str, size: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= size else text[: size - 1] + "…"
