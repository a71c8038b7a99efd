"""Limits every layer agrees on (the MCP schemas, the engine's checks, the CLI's options).

A leaf module: it imports nothing, so any layer may use it.
"""

MAX_LIMIT = 200  # most hits, chunks or window size one request may ask for
MIN_BUDGET = 200  # smallest context budget, in characters
MAX_WORKERS = 64  # most processes `serve --http --workers N` starts
