"""Limits every layer agrees on (the MCP schemas, the engine's checks, the CLI's options).

A leaf module: it imports nothing, so any layer may use it.
"""

MAX_LIMIT = 200  # most hits, chunks or window size one request may ask for
MAX_PHRASINGS = 6  # other phrasings besides the query (`queries`, `--also`)
MIN_BUDGET = 200  # smallest context budget, in characters
# Largest context budget: about 250,000 tokens, more than a client's context window; a larger one
# let one call build a 100 MB reply (issue 37). Checked by the engine, not advertised in tools/list.
MAX_BUDGET = 1_000_000
# The budget parameter of the tools, as the engine's texts name it (a document's "cut to fit" line);
# the CLI shows its own option (`--budget`) in its place.
BUDGET_PARAMETER = "contextBudget"
MAX_WORKERS = 64  # most processes `serve --http --workers N` starts
