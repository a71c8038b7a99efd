"""`lancelot_cli.engine.search`: one search run on a table (issue 48 #6: a test module per core
module; the ranking itself is tested in test_ranking*.py, test_relevance.py and test_golden.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_cli.engine import search
from lancelot_cli.engine.plan import Embedding
from lancelot_cli.errors import InvalidArgumentError
from lancelot_cli.models import SEARCH_TYPES
from lancelot_cli.storage.read.database import ReadOnlyDatabase


def test_an_unknown_search_type_names_the_known_ones() -> None:
    for known in SEARCH_TYPES:
        search.check_search_type(known)
    with pytest.raises(InvalidArgumentError, match="search type must be one of auto"):
        search.check_search_type("fuzzy")


def test_a_table_without_vectors_is_searched_by_text(isolated_env: Path, sample_db: Path) -> None:
    table = ReadOnlyDatabase(str(sample_db)).table("documents")
    no_key = Embedding(lambda: None, lambda _key: None, "text-embedding-3-small")
    result = search.run(table, search.SearchRequest("refund policy"), "text", "vector", 5, no_key)
    assert result.search_type == "text" and 0 < len(result.hits) <= 5
    assert result.hits[0].source.startswith("policies/")
