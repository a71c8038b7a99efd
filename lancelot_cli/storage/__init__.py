"""LanceDB access. ``reader`` is what the server and the engine use; ``writer`` is the indexer's only."""

from lancelot_cli.storage import lancedb_import

lancedb_import.install()  # before anything imports lancedb: see that module
