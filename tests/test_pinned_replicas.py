"""The CI-builds-then-replicas-switch recipe (issue 50 item 3) on S3 (moto on loopback, the
fixtures of test_object_store.py): CI indexes into the bucket and tags the version ``live``; two
`serve --http` replicas pinned to ``live`` keep answering from it while CI commits a newer
version, write nothing to the bucket, and both switch once CI moves the tag."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import lancelot_command
from tests.test_object_store import BUCKET, S3, _env, http_servers, s3  # noqa: F401 (fixtures)
from tests.test_pinned_table import FIRST, SECOND, write_release

pytestmark = pytest.mark.slow

CONSISTENCY = 1.0  # LANCELOT_READ_CONSISTENCY of the replicas: how often they look at the tag


def ci_index(store: S3, config: Path, src: Path, uri: str, *flags: str) -> None:
    out = subprocess.run(
        [*lancelot_command(), "index", str(src), uri, "--no-embed", *flags],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(store, config),
    )
    assert out.returncode == 0, out.stderr


async def answers(client: Client) -> set[str]:
    """Which releases a replica's text search finds."""
    found = set()
    for word in (FIRST, SECOND):
        result = await client.call_tool("lancedb_search", {"query": word, "searchType": "text"})
        assert not result.is_error, result.content
        if result.structured_content["hits"]:
            found.add(word)
    return found


@pytest.mark.anyio
async def test_two_replicas_serve_the_tag_until_ci_moves_it(s3: S3, tmp_path: Path, http_servers: Any) -> None:  # noqa: F811
    src, uri, ci = tmp_path / "docs", f"s3://{BUCKET}/pinned", tmp_path / "ci"
    write_release(src, FIRST)
    ci_index(s3, ci, src, uri, "--tag", "live")
    env = _env(
        s3,
        tmp_path / "replica",
        LANCEDB_PATH=uri,
        LANCELOT_READ_CONSISTENCY=str(CONSISTENCY),
        LANCELOT_TABLE_VERSION="live",
    )
    replicas = http_servers([env, env])
    async with Client(replicas[0].url) as one, Client(replicas[1].url) as two:
        for client in (one, two):
            assert await answers(client) == {FIRST}
            status = (await client.call_tool("lancedb_status", {})).structured_content
            assert status["tables"][0]["search"].startswith("at tag 'live' ")

        write_release(src, SECOND)
        ci_index(s3, ci, src, uri)  # CI builds the next version; replicas stay on 'live'
        mark, before = len(s3.log.lines), s3.objects()
        await anyio.sleep(CONSISTENCY * 2)
        for client in (one, two):
            assert await answers(client) == {FIRST}
            status = (await client.call_tool("lancedb_status", {})).structured_content
            assert "the latest is" in status["tables"][0]["search"]
        assert s3.log.writes(mark) == [] and s3.objects() == before  # the replicas wrote nothing

        ci_index(s3, ci, src, uri, "--tag", "live")  # nothing changed: 'live' moves to the latest
        deadline = time.monotonic() + CONSISTENCY + 10
        switched = [False, False]
        while not all(switched) and time.monotonic() < deadline:
            for n, client in enumerate((one, two)):
                switched[n] = switched[n] or await answers(client) == {SECOND}
            await anyio.sleep(0.1)
        assert all(switched), f"replicas switched: {switched}"
