"""Lancelot: search your own documents from an AI assistant (MCP) and from a terminal.

Importing the package does no work and imports nothing but the version; every heavy library is
imported where it is used. Entry points: the `lancelot` command (`lancelot_cli.cli.app:main`) and
the AWS Lambda handler `lancelot_cli.server.aws_lambda.handler`.
"""

import sys

from lancelot_cli._version import __version__

if sys.version_info < (3, 11):  # noqa: UP036 # pragma: no cover - a checkout run on 3.10 (pip refuses it)
    # A copy run from a checkout on 3.10: one line rather than a SyntaxError or a failed pattern deep
    # in a run (issue 46 #1). 3.10 reached its end of life in October 2026.
    raise SystemExit(
        f"lancelot needs Python 3.11 or newer; this is {sys.version.split()[0]}: "
        "run it with python3.11 (or newer), e.g. `python3.11 -m pip install .`"
    )

__all__ = ["__version__"]
