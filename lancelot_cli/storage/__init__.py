"""LanceDB access; the only package that imports lancedb and pyarrow (an import-linter contract).

``reader`` (with ``facts`` and ``filters``) is what the server and the engine use: plain rows and
table facts out, typed filter expressions in. ``writer`` is the indexer's only; ``schema`` is shared.
"""

from lancelot_cli.storage import lancedb_import

lancedb_import.install()  # before anything imports lancedb: see that module
