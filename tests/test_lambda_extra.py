"""Mangum is the `lambda` extra: without it the Lambda handler says in one line what to install.

The subprocess hides mangum behind a ``sys.meta_path`` blocker (it is installed here for the other
Lambda tests), then invokes the handler with a well-formed API Gateway HTTP API event."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

BLOCKED = r"""
import sys
from importlib.abc import MetaPathFinder

class NoMangum(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "mangum" or name.startswith("mangum."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoMangum())
from lancelot_cli.server import aws_lambda  # importing the module needs no mangum
event = {"version": "2.0", "rawPath": "/mcp", "headers": {},
         "requestContext": {"http": {"method": "POST", "path": "/mcp"}}}
try:
    aws_lambda.handler(event, None)
except ImportError as exc:
    print(type(exc).__name__ + ": " + str(exc))
else:
    print("no error")
"""


@pytest.mark.slow
def test_without_mangum_the_handler_says_what_to_install() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "LANCEDB_PATH": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    expected = "ImportError: the Lambda handler needs Mangum, which is not installed here: pip install "
    assert lines[0].startswith(expected)
    assert "[lambda]" in lines[0]
