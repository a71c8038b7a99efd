"""Text from documents and file names as a terminal is given it: control characters shown, never obeyed.

A document can hold escape sequences that set the window title (``ESC ] 0 ; … BEL``), clear the
screen, move the cursor or draw an OSC 8 link whose target is not its text; a file name can hold
a carriage return that overwrites the line before it. Every human-readable renderer passes such
text through ``shown``: C0 controls other than newline and tab, DEL, the C1 controls and the
Unicode direction overrides (which reorder what is shown, "Trojan source") become visible ``\\x1b``
/ ``\\u202e`` escapes. ``--json``, ``--jsonl`` and MCP replies carry the text as it is (JSON
escapes it already)."""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """``text`` with every control character written out (``\\x1b``); the rest as it is."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
