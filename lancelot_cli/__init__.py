"""Lancelot: search your own documents from an AI assistant (MCP) and from a terminal.

Importing the package does no work; every heavy library is imported where it is used.
"""

from lancelot_cli._version import __version__

__all__ = ["__version__", "handler"]


def handler(event: dict, context: object) -> dict:  # pragma: no cover - thin alias
    """AWS Lambda entry point: ``lancelot_cli.handler`` (see ``lancelot_cli.server.aws_lambda``)."""
    from lancelot_cli.server.aws_lambda import handler as lambda_handler

    return lambda_handler(event, context)
