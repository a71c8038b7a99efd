"""Lancelot: search your own documents from an AI assistant (MCP) and from a terminal.

Importing the package does no work and imports nothing but the version; every heavy library is
imported where it is used. Entry points: the `lancelot` command (`lancelot_cli.cli.app:main`) and
the AWS Lambda handler `lancelot_cli.server.aws_lambda.handler`.
"""

from lancelot_cli._version import __version__

__all__ = ["__version__"]
