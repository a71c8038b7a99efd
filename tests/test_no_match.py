"""The "no good match" signal (issue 24): each hit's strength, and a reply that says when no hit is strong.

Figures for the floor on the tuning corpora: tests/benchmarks/no_match.py and tests/benchmarks/README.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.engine.strength import MATCH_FLOOR
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.support.engines import engine_for

WEAK = "refund kubernetes autoscaling nginx"  # only "refund" is in the sample: a quarter of the terms


def test_every_hit_has_a_strength_and_a_weak_search_says_so(sample_db: Path) -> None:
    engine = engine_for(sample_db)
    strong = engine.search("refund policy")
    assert strong.hits and not strong.no_good_match and strong.note is None
    assert strong.hits[0].strength == 1.0
    assert all(h.strength is not None and 0 <= h.strength <= 1 for h in strong.hits)
    weak = engine.search(WEAK)
    assert weak.hits and weak.no_good_match
    assert max(h.strength or 0 for h in weak.hits) < MATCH_FLOOR
    assert weak.note is not None and weak.note.startswith("no good match: no hit holds half of the query's terms")


def test_strength_counts_words_as_the_index_does_not_substrings(sample_db: Path) -> None:
    """ "do" is in "document" and "how" in "show": a substring share would call this a good match."""
    found = engine_for(sample_db).search("refunds policies", search_type="text")
    assert found.hits[0].strength == 1.0  # stemmed: "refund policy" in the text
    assert found.hits[0].matched < 1.0  # the substring share misses "policies"


def test_an_identifier_lookup_is_not_flagged_when_a_hit_holds_one(sample_db: Path) -> None:
    found = engine_for(sample_db).search("MAX_SAVED DEC-0054 createClient")
    assert found.hits and not found.no_good_match


@pytest.mark.anyio
async def test_the_agent_reads_no_good_match_in_the_reply(sample_db: Path) -> None:
    server = build_server(load(environ={**os.environ, "LANCEDB_PATH": str(sample_db)}))
    async with Client(server) as client:  # the client checks structuredContent against the outputSchema
        weak = await client.call_tool("lancedb_search", {"query": WEAK})
        strong = await client.call_tool("lancedb_search", {"query": "refund policy"})
        context = await client.call_tool("lancedb_query", {"question": WEAK})
    assert not weak.is_error and weak.structured_content is not None
    assert weak.structured_content["noGoodMatch"] is True
    assert "no good match" in weak.structured_content["note"]
    assert all("strength" in hit for hit in weak.structured_content["hits"])
    assert strong.structured_content is not None and "noGoodMatch" not in strong.structured_content
    assert "note: no good match" in context.content[0].text  # type: ignore[union-attr]


def test_the_cli_prints_the_note_and_the_json_carries_the_flag(sample_db: Path) -> None:
    runner = CliRunner()
    env = {"LANCELOT_WARM": "0"}
    shown = runner.invoke(app, ["search", WEAK, "--db", str(sample_db)], prog_name="lancelot", env=env)
    assert shown.exit_code == 0 and "no good match" in shown.stderr
    data = json.loads(runner.invoke(app, ["search", WEAK, "--db", str(sample_db), "--json"], env=env).stdout)
    assert data["noGoodMatch"] is True


def test_the_background_servers_reply_reads_back_the_same(sample_db: Path) -> None:
    """The CLI draws a background server's JSON (requests.Search.reply_from_wire): strength and the flag survive."""
    from lancelot_cli.requests import Search
    from lancelot_cli.wire import to_wire

    weak = engine_for(sample_db).search(WEAK)
    back = Search(WEAK).reply_from_wire(to_wire(weak))
    assert back.no_good_match and [h.strength for h in back.hits] == [h.strength for h in weak.hits]
    assert to_wire(back) == to_wire(weak)
