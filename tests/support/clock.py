"""A clock for the embeddings client's retries (lancelot_cli.providers): its back-off sleeps are
kept and move the clock on at once, so tests count how long it would have waited instead of
waiting and timing it. The ``openai`` client's own retries (its ``max_retries``) would wait
elsewhere: `client_retries` says what the clients were built with."""

from __future__ import annotations

import pytest


class Clock:
    """Stands in for the ``time`` module in lancelot_cli.providers."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []  # the back-off sleeps, in seconds

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def install(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Put a `Clock` in the providers' place for this test (undone with ``monkeypatch``)."""
    clock = Clock()
    monkeypatch.setattr("lancelot_cli.providers.time", clock)
    return clock


def client_retries() -> set[int]:
    """The ``max_retries`` of the openai clients the providers built (0: the client never retries)."""
    from lancelot_cli import providers

    return {client.max_retries for client in providers._clients.values()}
