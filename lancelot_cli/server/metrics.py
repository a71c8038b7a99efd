"""Usage metrics kept in memory: per tool, calls, errors, p50/p95 latency and approximate reply
tokens (characters / 4). Never written to the database; optionally appended as JSON lines to a
log file (``serve --metrics-log``) in the config folder. Each worker process of
``serve --http --workers N`` keeps its own, and says which it is with a ``pid`` field in its log
lines and its snapshot (the workers append to the same file, one ``write`` a line).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

KEEP = 1000  # latencies kept per tool for the percentiles (a rolling window)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class Metrics:
    """Thread-safe counters for the tools (sync tools run in worker threads)."""

    def __init__(self, log_file: Path | None = None, pid: int | None = None) -> None:
        self.pid = pid  # set in a worker of `serve --http --workers N`: its lines and stats say which
        self._lock = threading.Lock()
        self._tools: dict[str, dict[str, Any]] = {}
        self._started = time.time()
        self.log_file = log_file

    def record(self, tool: str, seconds: float, argument_chars: int, reply_chars: int, error: str | None) -> None:
        tokens = (reply_chars + 3) // 4
        with self._lock:
            entry = self._tools.setdefault(tool, {"calls": 0, "errors": 0, "tokens": 0, "ms": []})
            entry["calls"] += 1
            entry["errors"] += error is not None
            entry["tokens"] += tokens
            entry["ms"].append(seconds * 1000)
            del entry["ms"][:-KEEP]
            if self.log_file is not None:
                line = {
                    "time": round(time.time(), 3),
                    "tool": tool,
                    "argumentChars": argument_chars,
                    "ms": round(seconds * 1000, 2),
                    "tokens": tokens,
                    "error": error,
                }
                if self.pid is not None:
                    line["pid"] = self.pid
                with self.log_file.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line) + "\n")

    def snapshot(self) -> dict[str, Any]:
        """``{"since", "tools": {name: {calls, errors, p50Ms, p95Ms, tokens, tokensPerCall}}}``."""
        with self._lock:
            tools = {
                name: {
                    "calls": e["calls"],
                    "errors": e["errors"],
                    "p50Ms": round(_percentile(e["ms"], 0.5), 2),
                    "p95Ms": round(_percentile(e["ms"], 0.95), 2),
                    "tokens": e["tokens"],
                    "tokensPerCall": round(e["tokens"] / e["calls"], 1),
                }
                for name, e in sorted(self._tools.items())
            }
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started))
        return (
            {"since": since, "tools": tools} if self.pid is None else {"since": since, "pid": self.pid, "tools": tools}
        )
