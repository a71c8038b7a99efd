"""Prometheus metrics for `serve --http` (issue 50 #2): ``GET /metrics`` in the text exposition
format 0.0.4, written by hand (a few counters and one histogram need no client library).

``CountingMetrics`` is the server's ``Metrics`` (the usage counters behind ``lancelot://stats``)
that also keeps, per tool, a latency histogram with fixed buckets, and, per HTTP status, the
requests answered. It is what `serve --http` always uses (counting costs a lock and a few additions
a call); only the ``/metrics`` page is off unless ``LANCELOT_METRICS`` is on. Each worker process of
``--workers N`` keeps its own: a scrape reports the worker that answered, named by the ``pid``
label of ``lancelot_info``.
"""

from __future__ import annotations

import bisect
import os
from pathlib import Path

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
