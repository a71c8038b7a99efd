"""The read side of storage: what the server and the engine use (an import-linter contract keeps
them, and this package, away from ``storage.write``)."""
