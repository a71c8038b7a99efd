"""Prometheus metrics for `serve --http` (issue 50 #2): ``GET /metrics`` in the text exposition
format 0.0.4, written by hand (a few counters and one histogram need no client library).

``CountingMetrics`` is the server's ``Metrics`` (the usage counters behind ``lancelot://stats``)
that also keeps, per tool, a latency histogram with fixed buckets, and, per HTTP status, the
requests answered. It is what `serve --http` always uses (counting costs a lock and a few additions
a call); only the ``/metrics`` page is off unless ``LANCELOT_METRICS`` is on. Each worker process of
``--workers N`` keeps its own: a scrape reports the worker that answered, named by the ``pid``
label of ``lancelot_info``.

``lancelot_table_version{table="documents"}`` is the version of the default table being served: the
pinned ``LANCELOT_TABLE_VERSION`` when it is a number, else the version the engine last read (a
tag's version, or the latest one's) as the searches left it in memory. A scrape never asks the
database: before the first read of an unpinned or tag-pinned table there is no sample.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lancelot_cli.server.metrics import Metrics

# Seconds: a text search answers in milliseconds, a vector search waits on an embeddings call.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"


class _Histogram:
    __slots__ = ("calls", "counts", "errors", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # the last is +Inf
        self.total = 0.0
        self.calls = 0
        self.errors = 0


def _label(value: str) -> str:
    """A label value escaped as the text format wants (backslash, quote, newline)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


class CountingMetrics(Metrics):
    """``Metrics`` plus what ``/metrics`` shows: per-tool latency histograms and HTTP status counts."""

    def __init__(self, log_file: Path | None = None, pid: int | None = None) -> None:
        super().__init__(log_file, pid)
        self._histograms: dict[str, _Histogram] = {}
        self._statuses: dict[int, int] = {}
        # table name -> the version served; set by `create_asgi_app` (see ``served_versions``)
        self.table_versions: Callable[[], Mapping[str, int]] | None = None

    def record(self, tool: str, seconds: float, argument_chars: int, reply_chars: int, error: str | None) -> None:
        super().record(tool, seconds, argument_chars, reply_chars, error)
        with self._lock:
            histogram = self._histograms.setdefault(tool, _Histogram())
            histogram.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            histogram.total += seconds
            histogram.calls += 1
            histogram.errors += error is not None

    def answered(self, status: int) -> None:
        """Count one HTTP response by its status."""
        with self._lock:
            self._statuses[status] = self._statuses.get(status, 0) + 1

    def exposition(self, version: str) -> bytes:
        """Every metric in the Prometheus text format."""
        with self._lock:
            statuses = sorted(self._statuses.items())
            tools = sorted((name, list(h.counts), h.total, h.calls, h.errors) for name, h in self._histograms.items())
        pid = self.pid if self.pid is not None else os.getpid()
        lines = [
            "# HELP lancelot_info The server: its version and process id (one per worker).",
            "# TYPE lancelot_info gauge",
            f'lancelot_info{{version="{_label(version)}",pid="{pid}"}} 1',
            "# HELP lancelot_start_time_seconds When this process started, in seconds since the epoch.",
            "# TYPE lancelot_start_time_seconds gauge",
            f"lancelot_start_time_seconds {self._started:.3f}",
            "# HELP lancelot_http_requests_total HTTP requests answered, by status code.",
            "# TYPE lancelot_http_requests_total counter",
            *(f'lancelot_http_requests_total{{code="{code}"}} {count}' for code, count in statuses),
            "# HELP lancelot_tool_calls_total MCP tool calls, by tool.",
            "# TYPE lancelot_tool_calls_total counter",
            *(f'lancelot_tool_calls_total{{tool="{_label(name)}"}} {calls}' for name, _, _, calls, _ in tools),
            "# HELP lancelot_tool_errors_total MCP tool calls answered with an error, by tool.",
            "# TYPE lancelot_tool_errors_total counter",
            *(f'lancelot_tool_errors_total{{tool="{_label(name)}"}} {errors}' for name, _, _, _, errors in tools),
            "# HELP lancelot_table_version The table version served: the pinned one, else the one last read.",
            "# TYPE lancelot_table_version gauge",
            *(f'lancelot_table_version{{table="{_label(name)}"}} {number}' for name, number in self._versions()),
            "# HELP lancelot_tool_duration_seconds Time to answer an MCP tool call, by tool.",
            "# TYPE lancelot_tool_duration_seconds histogram",
        ]
        for name, counts, total, calls, _ in tools:
            tool = _label(name)
            running = 0
            for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
                running += count
                le = "+Inf" if bound == float("inf") else _number(bound)
                lines.append(f'lancelot_tool_duration_seconds_bucket{{tool="{tool}",le="{le}"}} {running}')
            lines.append(f'lancelot_tool_duration_seconds_sum{{tool="{tool}"}} {total:.6f}')
            lines.append(f'lancelot_tool_duration_seconds_count{{tool="{tool}"}} {calls}')
        return ("\n".join(lines) + "\n").encode("utf-8")

    def _versions(self) -> list[tuple[str, int]]:
        if self.table_versions is None:
            return []
        try:
            return sorted(self.table_versions().items())
        except Exception:  # noqa: BLE001 - a scrape reports what it can; the gauge is left out
            return []


def served_versions(table: str, pin: str | None, engine: Any) -> Callable[[], dict[str, int]]:
    """What ``lancelot_table_version`` reports for the default ``table``: the pin when it is a
    version number, else the version ``engine`` (an ``Engine``) last read, from what its reader
    keeps in memory; nothing when it has read none yet. No database call."""
    fixed = pin.strip() if pin else ""

    def versions() -> dict[str, int]:
        if fixed.isdigit():
            return {table: int(fixed)}
        version = _last_read(getattr(engine, "_db", None), table)
        return {} if version is None else {table: version}

    return versions


def _last_read(database: Any, table: str) -> int | None:
    """The version of ``table`` a ``ReadOnlyDatabase`` last read, from its caches only: a pinned
    table's facts, a folder's facts cache, an object store's kept handle's facts."""
    if database is None:
        return None
    pinned = getattr(database, "_pinned", {}).get(table)
    kept = getattr(database, "_open", {}).get(table)
    for handle in (getattr(pinned, "table", None), kept):
        facts = getattr(handle, "_facts", None)  # (version, facts) of the version last searched
        if facts:
            return int(facts[0])
    cached = getattr(database, "_facts", {}).get(table)
    return int(cached[1]) if cached else None
