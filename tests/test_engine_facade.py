"""`lancelot_cli.engine.facade`: the read-only engine every command and the server ask (issue 48 #6:
a test module per core module; the behaviour suites are test_cli.py, test_tools.py and test_golden.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_cli.engine.facade import Engine
from lancelot_cli.errors import ConfigError
from lancelot_cli.settings import load


def test_an_engine_without_a_database_says_how_to_name_one(isolated_env: Path) -> None:
    with pytest.raises(ConfigError, match="set LANCEDB_PATH"):
        Engine(load(environ={})).search("refund")


def test_an_engine_opens_the_database_its_settings_name(isolated_env: Path, sample_db: Path) -> None:
    engine = Engine(load(flags={"LANCEDB_PATH": str(sample_db)}, environ={}))
    assert engine.database().uri == str(sample_db)
    assert engine.search("refund").hits
