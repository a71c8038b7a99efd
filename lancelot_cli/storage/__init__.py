"""LanceDB access; the only package that imports lancedb and pyarrow (an import-linter contract).

``reader`` (with ``facts`` and ``filters``) is what the server and the engine use: plain rows and
table facts out, typed filter expressions in. ``writer`` is the indexer's only; ``schema`` is shared.
"""

import os

from lancelot_cli.storage import lancedb_import

lancedb_import.install()  # before anything imports lancedb: see that module
# lancedb's Rust log (env_logger, read when lancedb loads) prints WARN lines such as "Failed to read full
# text search configuration…" with source paths to stderr; what matters reaches us as an error anyway.
# LANCELOT_LOG_LEVEL=debug, or LANCEDB_LOG set by hand, shows them.
if os.environ.get("LANCELOT_LOG_LEVEL", "").strip().lower() not in ("debug", "silly"):
    os.environ.setdefault("LANCEDB_LOG", "error")
