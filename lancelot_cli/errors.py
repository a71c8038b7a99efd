"""Lancelot's errors: each says what went wrong and what to do next, in one line.

The CLI turns them into a message on stderr and an exit code; the MCP server turns them into
a tool result with ``isError`` so the agent can read the message and try again.
"""

from __future__ import annotations


class LancelotError(Exception):
    """Base class. ``exit_code`` 1 is a user error (SPEC §2); 2 is kept for usage errors."""

    exit_code = 1


class ConfigError(LancelotError):
    """A setting is missing or malformed (LANCEDB_PATH unset, a limit that is not a number...)."""


class DatabaseNotFoundError(LancelotError):
    """LANCEDB_PATH names a folder that does not exist (the server never creates it)."""


class TableNotFoundError(LancelotError):
    """The table asked for is not in the database."""


class DocumentNotFoundError(LancelotError):
    """No indexed document (or chunk) has the source or id asked for."""


class ColumnNotFoundError(LancelotError):
    """The column asked for (text or vector) is not in the table."""


class InvalidArgumentError(LancelotError):
    """A call's argument is out of range (limit 0, budget too small, unknown search type...)."""

    exit_code = 2


class EmbeddingError(LancelotError):
    """The embeddings endpoint could not turn text into a vector (network, 401, wrong model)."""


class VectorMismatchError(LancelotError):
    """The query vector's size differs from the vectors stored in the table."""


class IndexingError(LancelotError):
    """The indexer could not write the table (the old table is left as it was)."""
