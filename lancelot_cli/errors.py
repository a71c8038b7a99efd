"""Lancelot's errors: each says what went wrong and what to do next, in one line.

The CLI turns them into a message on stderr and an exit code; the MCP server turns them into
a tool result with ``isError`` so the agent can read the message and try again.
"""

from __future__ import annotations


class LancelotError(Exception):
    """Base class. ``exit_code`` 1 is a user error (docs/design.md#spec-2); 2 is kept for usage errors."""

    exit_code = 1
    # What to do next, as a key each surface words its own way ("use lancedb_search" for an agent,
    # "run `lancelot search`" for a person); the message itself stays neutral. See ``worded``.
    hint: str | None = None

    def __init__(self, message: str = "", *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    def worded(self, hints: dict[str, str]) -> str:
        """The message followed by this surface's wording of the hint (nothing for an unknown key)."""
        return str(self) + (hints.get(self.hint, "") if self.hint else "")


class ConfigError(LancelotError):
    """A setting is missing or malformed (LANCEDB_PATH unset, a limit that is not a number...)."""


class DatabaseNotFoundError(LancelotError):
    """LANCEDB_PATH names a folder that does not exist (the server never creates it)."""


class TableNotFoundError(LancelotError):
    """The table asked for is not in the database."""


class TableDamagedError(LancelotError):
    """The table's files are missing or unreadable (storage/damage.py); rebuilding it is the way out."""


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
