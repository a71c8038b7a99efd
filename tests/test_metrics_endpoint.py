"""``GET /healthz`` and ``GET /metrics`` of `serve --http` (issue 50 #2), against real servers.

/healthz: 200 with no login, no database (a server whose database folder does not exist is
healthy: it answers), whatever the Host (a load balancer probes by address). /metrics: 404 unless
``LANCELOT_METRICS`` is on; then the Prometheus text format (each line checked against the
format, the histogram's buckets cumulative, ``+Inf`` equal to the count), counting what was
really served, behind the login when there is one, and under the Host and Origin rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.servers import Served, free_port
from tests.test_http import assert_error, assert_tool_reply, request, rpc, server_pool

pytestmark = pytest.mark.slow

TOKEN = "lt_metrics_0123456789abcdef01234567"

SAMPLE = re.compile(r'^([a-z_]+)(\{([a-z_]+="[^"\\\n]*"(,[a-z_]+="[^"\\\n]*")*)\})? (-?[0-9.e+]+|\+Inf)$')
COMMENT = re.compile(r"^# (HELP [a-z_]+ .+|TYPE [a-z_]+ (counter|gauge|histogram))$")


@pytest.fixture(scope="module")
def spawn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    with server_pool(tmp_path_factory, "metrics") as start:

        def _spawn(db: Path, *args: str, **env: str) -> Served:
            port = free_port()
            return start(["--http", str(port), *args], port, db, **env)

        yield _spawn


@pytest.fixture(scope="module")
def plain(spawn: Callable[..., Served], sample_db: Path) -> Served:
    """Defaults: no login, metrics off."""
    return spawn(sample_db)


@pytest.fixture(scope="module")
def counted(spawn: Callable[..., Served], sample_db: Path) -> Served:
    return spawn(sample_db, LANCELOT_METRICS="1")


@pytest.fixture(scope="module")
def counted_with_login(spawn: Callable[..., Served], sample_db: Path) -> Served:
    return spawn(sample_db, LANCELOT_METRICS="on", LANCELOT_HTTP_TOKENS=TOKEN)


def parse(text: str) -> dict[str, float]:
    """``{'name{labels}': value}`` for every sample; every line must be in the text format."""
    samples: dict[str, float] = {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("#"):
            assert COMMENT.match(line), line
            continue
        match = SAMPLE.match(line)
        assert match, line
        key = line.rsplit(" ", 1)[0]
        assert key not in samples, f"duplicate sample {key}"
        samples[key] = float(match.group(5))
    return samples


# -- /healthz ------------------------------------------------------------------------------------------


def test_healthz_is_200_ok_without_login_or_database(spawn: Callable[..., Served], tmp_path: Path) -> None:
    served = spawn(tmp_path / "no-such-db", LANCELOT_HTTP_TOKENS=TOKEN)
    reply = request(served.port, "GET", "/healthz")
    assert (reply.status, reply.body) == (200, b"ok\n")
    assert reply.headers["Content-Type"].startswith("text/plain")
    assert reply.headers["Cache-Control"] == "no-store"
    # the tools are still behind the login, and say the database is missing once past it
    assert_error(request(served.port), 401)
    answered = request(
        served.port, body=rpc("lancedb_search", {"query": "x"}), headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert assert_tool_reply(answered)["isError"] is True


def test_healthz_answers_any_host_and_head_and_refuses_post(plain: Served) -> None:
    assert request(plain.port, "GET", "/healthz", headers={"Host": "10.0.0.7:3000"}).status == 200
    head = request(plain.port, "HEAD", "/healthz")
    assert (head.status, head.body) == (200, b"")
    posted = request(plain.port, "POST", "/healthz")
    assert_error(posted, 405)
    assert posted.headers["Allow"] == "GET, HEAD"
    # the MCP endpoint's Host rule is unchanged
    assert_error(request(plain.port, headers={"Host": "10.0.0.7:3000"}), 403)


# -- /metrics --------------------------------------------------------------------------------------------


def test_metrics_are_off_by_default(plain: Served) -> None:
    assert_error(request(plain.port, "GET", "/metrics"), 404)
    assert request(plain.port, "GET", "/healthz").status == 200  # while the health page is on


def test_metrics_count_what_was_served(counted: Served) -> None:
    for query in ("refund policy", "gift cards"):
        assert_tool_reply(request(counted.port, body=rpc("lancedb_search", {"query": query})))
    bad = assert_tool_reply(request(counted.port, body=rpc("lancedb_search", {"query": "x", "limit": 0})))
    assert bad["isError"] is True
    assert_error(request(counted.port, "PUT", body=rpc()), 405)
    reply = request(counted.port, "GET", "/metrics")
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = parse(reply.body.decode())
    assert samples['lancelot_tool_calls_total{tool="lancedb_search"}'] == 3
    assert samples['lancelot_tool_errors_total{tool="lancedb_search"}'] == 1
    assert samples['lancelot_http_requests_total{code="200"}'] == 3
    assert samples['lancelot_http_requests_total{code="405"}'] == 1
    buckets = [
        (key, value)
        for key, value in samples.items()
        if key.startswith('lancelot_tool_duration_seconds_bucket{tool="lancedb_search"')
    ]
    assert len(buckets) == 12 and buckets[-1][0].endswith('le="+Inf"}')
    values = [value for _, value in buckets]
    assert values == sorted(values), buckets  # cumulative
    assert values[-1] == samples['lancelot_tool_duration_seconds_count{tool="lancedb_search"}'] == 3
    assert 0 < samples['lancelot_tool_duration_seconds_sum{tool="lancedb_search"}'] < 60
    assert any(key.startswith("lancelot_info{") for key in samples)
    # a second scrape counts the first one
    again = parse(request(counted.port, "GET", "/metrics").body.decode())
    assert again['lancelot_http_requests_total{code="200"}'] == 4


def test_metrics_keep_the_host_and_origin_rules(counted: Served) -> None:
    assert_error(request(counted.port, "GET", "/metrics", headers={"Host": "evil.example"}), 403)
    assert_error(request(counted.port, "GET", "/metrics", headers={"Origin": "https://evil.example"}), 403)
    assert_error(request(counted.port, "POST", "/metrics"), 405)


def test_metrics_are_behind_the_login(counted_with_login: Served) -> None:
    port = counted_with_login.port
    refused = request(port, "GET", "/metrics")
    assert_error(refused, 401)
    assert refused.headers["WWW-Authenticate"].startswith("Bearer ")
    assert_error(request(port, "GET", "/metrics", headers={"Authorization": "Bearer lt_wrong_000000000000000000"}), 401)
    reply = request(port, "GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status == 200
    samples = parse(reply.body.decode())
    assert samples['lancelot_http_requests_total{code="401"}'] == 2
    assert TOKEN not in reply.body.decode()
    # /healthz still needs nothing
    assert request(port, "GET", "/healthz").status == 200


def test_workers_each_serve_health_metrics_and_login(spawn: Callable[..., Served], sample_db: Path) -> None:
    served = spawn(sample_db, "--workers", "2", LANCELOT_METRICS="1", LANCELOT_HTTP_TOKENS=TOKEN)
    for _ in range(4):  # connections are shared out between the workers: each must hold the rules
        assert request(served.port, "GET", "/healthz").status == 200
        assert_error(request(served.port), 401)
        assert_tool_reply(request(served.port, headers={"Authorization": f"Bearer {TOKEN}"}))
    reply = request(served.port, "GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status == 200 and "lancelot_info{" in reply.body.decode()
