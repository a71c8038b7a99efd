"""The table layout `lancelot index` writes, shared by the reader and the writer.

Kept free of lancedb and pyarrow imports so the reader can use the names without paying for them.
"""

from __future__ import annotations

import os

from lancelot_cli.location import Location

# Columns written by `lancelot index`, in order. `id` = "<path>#<chunk>", `hash` = sha256 of the
# chunk's title and text (lets a re-run skip unchanged rows).
ID, PATH, TITLE, CHUNK, TEXT, HASH = "id", "path", "title", "chunk", "text", "hash"
# The state of each row's file when it was read (on every chunk of the file): a re-run reads only
# files whose size or mtime changed, and skips those whose content hash did not.
FILE_SIZE, FILE_MTIME, FILE_HASH = "file_size", "file_mtime", "file_hash"
FILE_STATE = (FILE_SIZE, FILE_MTIME, FILE_HASH)
# Where a chunk sits: its heading path ("Doc > Section") and, for source code, its lines.
HEADING, LINE_START, LINE_END = "heading", "line_start", "line_end"
PAGE = "page"  # a PDF's page number (from 1) the chunk is on; null for other documents
# What a document is to its project, a column like front matter's (issue 47): a source file's role
# (indexer/code.py ``code_role``), or "adr" for a decision record (indexer/decisions.py).
KIND = "kind"
CODE_KINDS = frozenset({"code", "test", "migration"})
COLUMNS = (ID, PATH, TITLE, CHUNK, TEXT, HASH, *FILE_STATE, HEADING, LINE_START, LINE_END, PAGE)
# Columns newer than the first tables: added to an existing table when missing.
ADDED_LATER = (*FILE_STATE, HEADING, LINE_START, LINE_END, PAGE)
# `lancelot index --embed` adds this column; its field metadata names the model (LanceDB's tag convention).
VECTOR = "vector"
MODEL_TAG = "lancedb:tag:model"

# Where a row's source comes from, most specific first: AnythingLLM's layout, then ours.
SOURCE_COLUMNS = ("chunkSource", "docSource", "path")

# Name of the FTS index the indexer builds on the text column.
FTS_INDEX_NAME = "text_idx"
# Full-text indexes the indexer also builds so a search can weigh matches in a chunk's title, heading
# path and file path (column -> index name); a table indexed before them gets them on the next run.
FIELD_INDEX_NAMES = {TITLE: "title_idx", HEADING: "heading_idx", PATH: "path_idx"}

# Key in the table's schema metadata under which the indexer records what it wrote.
META_KEY = "lancelot"
# Field metadata of the ``path`` column that keeps the options a run was given (LanceDB's tag
# convention): --exclude, site detection, and the folder descriptions of .lancelotdescribe.
OPTIONS_TAG = "lancedb:tag:index-options"


def is_local(uri: str) -> bool:
    """True for a folder path; False for object-store URIs such as ``s3://bucket/db``."""
    return Location.parse(uri).is_local


def local_path(uri: str) -> str:
    """A local database as a folder path, read as every command and ``serve`` read it (location.py:
    ``file://`` dropped, ``~`` and ``~user`` expanded; a relative path stays relative, read in the
    working folder); an object-store URI as it is."""
    location = Location.parse(uri)
    return location.given if location.is_local else location.uri


def languages_path(uri: str, table: str) -> str | None:
    """Where a local database keeps a copy of ``table``'s languages beside it, for the server's
    instructions (read before lancedb is imported); None for an object store."""
    return os.path.join(local_path(uri), f"{table}.languages.json") if is_local(uri) else None


def contents_path(uri: str, table: str) -> str | None:
    """Where a local database keeps, beside ``table``, how many of its documents are code, tests,
    migrations and decision records (the ``kind`` column), for the server's instructions; None for
    an object store."""
    return os.path.join(local_path(uri), f"{table}.contents.json") if is_local(uri) else None


def describe_path(uri: str, table: str) -> str | None:
    """Where a local database keeps a copy of ``table``'s folder descriptions, beside the table, for
    the server's instructions (read before lancedb is imported); None for an object store."""
    return os.path.join(local_path(uri), f"{table}.describe.json") if is_local(uri) else None
