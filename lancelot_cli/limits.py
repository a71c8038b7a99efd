"""Limits every layer agrees on (the MCP schemas, the engine's checks, the CLI's options).

A leaf module: it imports nothing, so any layer may use it.
"""

MAX_LIMIT = 200  # most hits, chunks or window size one request may ask for
MAX_PHRASINGS = 6  # other phrasings besides the query (`queries`, `--also`)
# Characters of one phrasing (the query, or one of `queries`/`--also`), and of all of them together
# (issue 46): a person's question is under 200 and an agent's rewrite a line; 4,000 still takes a
# pasted error message or paragraph of about 50 lines to match, more than a search reads (a local
# model embeds the first 256 tokens, about 1,000 characters of English). Without a cap seven
# phrasings of 1 MB took 9.7 s and 398 MiB of one server; checked before any search, they are refused.
MAX_PHRASING_CHARS = 4_000
MAX_PHRASINGS_CHARS = 12_000  # the query and every other phrasing: three long ones, or seven of 1,700
MIN_BUDGET = 200  # smallest context budget, in characters
# Largest context budget: about 250,000 tokens, more than a client's context window; a larger one
# let one call build a 100 MB reply (issue 37). Checked by the engine, not advertised in tools/list.
MAX_BUDGET = 1_000_000
# The budget parameter of the tools, as the engine's texts name it (a document's "cut to fit" line);
# the CLI shows its own option (`--budget`) in its place.
BUDGET_PARAMETER = "contextBudget"
MAX_WORKERS = 64  # most processes `serve --http --workers N` starts
