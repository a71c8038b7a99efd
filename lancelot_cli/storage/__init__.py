"""LanceDB access; the only package that imports lancedb and pyarrow (an import-linter contract).

Two rooms and their shared leaves: ``read/`` is what the server and the engine use (plain rows and
table facts out, typed filter expressions in); ``write/`` is the indexer's alone (the server can
import nothing of it: the read-only contract in pyproject.toml names the two packages). Modules at
this level (``schema``, ``analyzer``, ``damage``, ``disk``, ``heap``, ...) serve both and write nothing.

Importing it changes nothing in the process: the lancedb import deferral (``lancedb_import``) and
lancedb's log filter are set up by the entry points, through ``lancelot_cli.startup.start``.
"""
