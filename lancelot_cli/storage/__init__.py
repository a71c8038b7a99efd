"""LanceDB access; the only package that imports lancedb and pyarrow (an import-linter contract).

``reader`` (with ``facts`` and ``filters``) is what the server and the engine use: plain rows and
table facts out, typed filter expressions in. ``writer`` is the indexer's only; ``schema`` is shared.

Importing it changes nothing in the process: the lancedb import deferral (``lancedb_import``) and
lancedb's log filter are set up by the entry points, through ``lancelot_cli.startup.start``.
"""
