"""LanceDB access. ``reader`` is what the server and the engine use; ``writer`` is the indexer's only."""
