"""Import boundaries, checked by import-linter's contracts in pyproject.toml (static, indirect
imports included): the server and the engine never reach the indexer or the writer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_import_contracts_are_kept() -> None:
    tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([tool], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout
