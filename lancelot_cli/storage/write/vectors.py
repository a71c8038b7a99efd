"""The vector column of a table being written: its model, the rows lacking vectors, vectors set.

Which model made the vectors, the rows that still lack one, vectors given and vectors reused by
content hash, and the column replaced for another model or size.

A part of the writer (``TableWriter`` in storage/write/table.py inherits it), never used by the server.
The column's field metadata records the model (``lancedb:tag:model``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lancelot_cli.storage.schema import HASH, ID, MODEL_TAG, TEXT, VECTOR
from lancelot_cli.storage.write.guard import guard


class VectorWrites:
    """The writer's vector column; ``_tbl`` is None while the table does not exist yet."""

    db_uri: str
    name: str
    _tbl: Any

    if TYPE_CHECKING:

        @property
        def version(self) -> int: ...

    @property
    def stored_model(self) -> str | None:
        """The model the table's vectors were made with (None: no table, or no vector column yet).
        The indexer chooses its embedder from it (indexer/run.py), so it needs no reader of its own."""
        return self.vector_info()[0]

    def vector_info(self) -> tuple[str | None, int | None]:
        """(model, dimension) of the table's vector column, or (None, None) without one."""
        if self._tbl is None or VECTOR not in self._tbl.schema.names:
            return None, None
        field = self._tbl.schema.field(VECTOR)
        model = (field.metadata or {}).get(MODEL_TAG.encode())
        return (model.decode() if model else None), int(field.type.list_size)

    def rows_without_vectors(self, model: str) -> list[dict[str, Any]]:
        """id, hash and text of the rows that have no vector made by ``model`` yet (written text
        first): those with none, or every row when the column holds another model's or is missing."""
        if self._tbl is None:
            return []
        search = self._tbl.search()
        if self.vector_info()[0] == model:
            search = search.where(f"{VECTOR} IS NULL")
        with guard("read", self.db_uri, self.name):
            return search.select([ID, HASH, TEXT]).limit(None).to_arrow().to_pylist()

    def use_vector_column(self, model: str, dimension: int) -> bool:
        """Make the vector column the one ``model`` fills (``dimension`` long), emptied when it held
        another model's or size's vectors: one commit, only when it changes (True then). The rows'
        vectors follow (``set_vectors``)."""
        if self._tbl is None or self.vector_info() == (model, dimension):
            return False
        with guard("write", self.db_uri, self.name):
            self._replace_vector_column(model, dimension)
        return True

    def set_vectors(self, vectors: dict[str, list[float]]) -> int:
        """Give the rows named by id their vectors, in one commit (only the vector column is
        written); rows gone meanwhile are passed over. The new version."""
        import pyarrow as pa

        if not vectors:
            return self.version
        field = self._tbl.schema.field(VECTOR)
        data = pa.table(
            {ID: pa.array(list(vectors), pa.string()), VECTOR: pa.array(list(vectors.values()), field.type)},
            schema=pa.schema([pa.field(ID, pa.string(), nullable=False), field]),
        )
        with guard("write", self.db_uri, self.name):
            self._tbl.merge_insert(ID).when_matched_update_all().execute(data)
        return self.version

    def reusable_vectors(self, model: str) -> dict[str, list[float]]:
        """hash -> vector of the rows embedded with ``model`` (empty if the model differs)."""
        stored, _ = self.vector_info()
        if self._tbl is None or stored != model:
            return {}
        with guard("read", self.db_uri, self.name):
            data = self._tbl.search().where(f"{VECTOR} IS NOT NULL").select([HASH, VECTOR]).limit(None).to_arrow()
        return dict(zip(data.column(HASH).to_pylist(), data.column(VECTOR).to_pylist(), strict=True))

    def _replace_vector_column(self, model: str, dimension: int) -> None:
        import pyarrow as pa

        if VECTOR in self._tbl.schema.names:
            self._tbl.drop_columns([VECTOR])
        field = pa.field(VECTOR, pa.list_(pa.float32(), dimension), metadata={MODEL_TAG: model})
        self._tbl.add_columns(field)
