"""Kept for older imports only: the JSON form lives in ``lancelot_cli.wire`` (use that)."""

from lancelot_cli.wire import to_json

__all__ = ["to_json"]
