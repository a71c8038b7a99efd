"""One JSON form for replies, shared by the MCP tools and `--json`, so both print the same bytes."""

from __future__ import annotations

import json
from typing import Any


def to_json(data: Any) -> str:
    """Compact JSON, UTF-8 kept as is (fewer tokens for an agent, still valid for `jq`)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
