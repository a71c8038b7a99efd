"""The garbage collector paused while `lancelot serve` starts (server/process/collector.py): really off after
``pause``, back on, after one full collection, with what is left frozen once the server has warmed
up or the deadline passes; a collector someone else turned off stays off; only `lancelot serve` on
stdio pauses it as the command loads. The spawned servers show it over the MCP SDK's stdio client
(the ``gc`` part of ``lancelot://stats``). What the pause saves is a benchmark
(tests/benchmarks/startup.py), not a test."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from lancelot_cli.server.process import collector
from tests.conftest import lancelot_command, subprocess_env


@pytest.fixture
def collector_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test process's collector as it was, whatever the test did to it."""
    monkeypatch.setattr(collector, "SETTLE_SECONDS", 0.05)
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        collector.resume()
        gc.unfreeze()  # pytest's own objects go back to the normal generations
        (gc.enable if was_enabled else gc.disable)()


def _wait_until(done: Any, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if done():
            return True
        time.sleep(0.01)
    return bool(done())


def test_pause_turns_the_collector_off_until_the_warm_up_settles(collector_state: None) -> None:
    assert collector.pause() is True
    assert not gc.isenabled() and collector.paused()
    cycle: list[Any] = []
    cycle.append(cycle)
    del cycle  # a cycle: only the collector frees it
    assert gc.get_freeze_count() == 0
    collector.warmed_up()
    assert _wait_until(gc.isenabled)
    assert not collector.paused()
    assert gc.get_freeze_count() > 1000  # what survived the full collection is frozen
    assert collector.state()["enabled"] is True


def test_the_deadline_resumes_without_a_warm_up(collector_state: None) -> None:
    collector.pause()
    collector.deadline(0.05)
    time.sleep(0.01)
    assert not gc.isenabled()  # not before the deadline
    assert _wait_until(gc.isenabled)
    assert gc.get_freeze_count() > 0


def test_warmed_up_resumes_once_and_later_calls_change_nothing(collector_state: None) -> None:
    collector.pause()
    collector.warmed_up()
    collector.warmed_up()
    assert _wait_until(gc.isenabled)
    assert collector.resume() is False  # nothing left to undo
    gc.disable()  # someone else's choice now: a late warm-up or deadline must not undo it
    collector.warmed_up()
    collector.deadline(0.01)
    time.sleep(0.2)
    assert not gc.isenabled()


def test_a_collector_turned_off_elsewhere_stays_off(collector_state: None) -> None:
    gc.disable()
    assert collector.pause() is False
    collector.deadline(0.01)
    collector.warmed_up()
    time.sleep(0.2)
    assert not gc.isenabled()
    assert collector.resume() is False


@pytest.mark.parametrize(
    ("args", "stdio"),
    [
        (["serve"], True),
        (["serve", "--db", "/tmp/db"], True),
        (["--db", "/tmp/db", "serve"], True),
        (["--db=/tmp/db", "serve", "--metrics-log", "calls.jsonl"], True),
        (["serve", "--http"], False),
        (["serve", "--http=8080"], False),
        (["serve", "--port", "8080"], False),
        (["serve", "--socket", "/tmp/s"], False),
        (["serve", "--help"], False),
        (["serve", "-h"], False),
        (["search", "serve"], False),
        (["--db", "serve"], False),  # "serve" is the --db value here
        ([], False),
    ],
)
def test_only_serve_on_stdio_pauses_as_the_command_loads(args: list[str], stdio: bool) -> None:
    assert collector.stdio_serve(args) is stdio


# -- a spawned `lancelot serve` ---------------------------------------------------------------------


async def _gc_of(client: Client) -> dict[str, Any]:
    result = await client.read_resource("lancelot://stats")
    (content,) = result.contents
    return json.loads(content.text)["gc"]


async def _until_enabled(client: Client, seconds: float = 60.0) -> dict[str, Any]:
    with anyio.move_on_after(seconds):
        while not (state := await _gc_of(client))["enabled"]:
            await anyio.sleep(0.1)
    return state


def _params(db: Path, config: Path, *args: str) -> StdioServerParameters:
    command = lancelot_command()
    return StdioServerParameters(
        command=command[0],
        args=[*command[1:], *args],
        env=subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(config)),
    )


@pytest.mark.slow
@pytest.mark.anyio
async def test_spawned_server_collects_again_after_its_first_search(sample_db: Path, tmp_path: Path) -> None:
    async with Client(_params(sample_db, tmp_path, "serve"), mode="legacy") as client:
        result = await client.call_tool("lancedb_search", {"query": "refund", "limit": 3})
        assert not result.is_error
        state = await _until_enabled(client)
    assert state["enabled"] is True
    assert state["frozen"] > 10_000  # the startup's objects (typer, mcp, pydantic, lancedb) were frozen
    # Paused from the command's load on: without it the imports alone make a few hundred.
    young, *_ = state["collections"]
    assert young < 100, state


@pytest.mark.slow
@pytest.mark.anyio
async def test_spawned_server_that_gets_no_call_collects_again(sample_db: Path, tmp_path: Path) -> None:
    """Reading a resource is no tool call: the warm-up step (or at worst the deadline) resumes it."""
    async with Client(_params(sample_db, tmp_path, "--db", str(sample_db), "serve"), mode="legacy") as client:
        state = await _until_enabled(client, collector.DEADLINE_SECONDS + 30)
    assert state["enabled"] is True
    assert state["frozen"] > 10_000
