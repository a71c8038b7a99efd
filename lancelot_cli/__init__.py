"""Lancelot: search your own documents from an AI assistant (MCP) and from a terminal.

Importing the package does no work; every heavy library is imported where it is used.
"""

__version__ = "0.1.0"
