"""The read-only engine behind every MCP tool and every CLI command.

``Engine`` (``facade``) is the one entry point; it returns ``lancelot_cli.models`` values and never
writes: it only reaches ``storage.read``. The work is split by job:

- ``search``: a request planned (text, vector or hybrid) and run, with fallbacks explained;
- ``ranking``: BM25 with identifier re-ranking, the substring scan, reciprocal rank fusion, hits;
- ``documents``: document windows and the overview of a collection;
- ``packing``: ranked chunks packed into one Markdown block within a budget;
- ``prompts``: documents offered as MCP prompts (agent slugs);
- ``status``: status of the database and tables, and the version.
"""

from lancelot_cli.engine.facade import Embedder, Engine
from lancelot_cli.engine.search import SearchRequest

__all__ = ["Embedder", "Engine", "SearchRequest"]
