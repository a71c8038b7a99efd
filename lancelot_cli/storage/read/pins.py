"""A table read at a pinned version or tag (``LANCELOT_TABLE_VERSION``, `serve --table-version`):
what the pin names, the version it stands for now, and the one line that says why it cannot be read.

A pin of digits only is a version number (``7``); anything else is a tag (``release-42``), which
`lancelot index --tag NAME` made (storage/write/tagging.py refuses tag names of digits only, so the two
never mix). A tag may move: `index --tag live` moves ``live`` to what it committed, and a reader
pinned to it switches at its next check (storage/read/database.py), from one whole version to another.

Read calls only (``tags.list``, ``tags.get_version``, ``list_versions``, ``checkout``): never a
write, so the read-only server stays read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lancelot_cli.errors import ConfigError

SETTING = "LANCELOT_TABLE_VERSION"


@dataclass(frozen=True)
class Pin:
    """What a pin names: a version number, or a tag."""

    text: str

    @property
    def number(self) -> int | None:
        """The version number a pin of digits names; None for a tag."""
        return int(self.text) if self.text.isdigit() else None

    def described(self) -> str:
        """``tag 'release-42'`` or ``version 7``, as a person reads it."""
        return f"version {self.text}" if self.number is not None else f"tag {self.text!r}"


def parse(raw: str | None) -> Pin | None:
    """The pin of a setting's value; None when it is unset (the latest version is read)."""
    if raw is None or not raw.strip():
        return None
    return Pin(raw.strip())


def resolve(handle: Any, table: str, pin: Pin) -> int:
    """The version ``pin`` names on the (latest-version) LanceDB table ``handle`` now. Raises a
    one-line ``ConfigError`` naming the table's tags and versions when it names none of them."""
    number = pin.number
    try:
        if number is not None:
            versions = _versions(handle)
            if number in versions:
                return number
        else:
            tags = _tags(handle)
            if pin.text in tags:
                return tags[pin.text]
    except (OSError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"cannot read the versions of table {table!r} ({SETTING}): {_short(exc)}") from None
    raise ConfigError(unknown(handle, table, pin))


def unknown(handle: Any, table: str, pin: Pin) -> str:
    """Why ``pin`` cannot be read, with what can: the table's tags, and the versions it keeps."""
    try:
        tags = _tags(handle)
        versions = sorted(_versions(handle))
    except (OSError, RuntimeError, ValueError):
        tags, versions = {}, []
    named = ", ".join(f"{name} (version {number})" for name, number in sorted(tags.items(), key=lambda t: t[1]))
    kept = f"; it keeps version{'s' if len(versions) > 1 else ''} {_spans(versions)}" if versions else ""
    return (
        f"table {table!r} has no {pin.described()} (--table-version, {SETTING}); its tags: {named or 'none'}"
        f"{kept} (tag a version with `lancelot index SRC --tag NAME`)"
    )


def _spans(numbers: list[int]) -> str:
    """``1-3, 5, 7-8`` for sorted ``numbers`` (a cleanup leaves gaps)."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _tags(handle: Any) -> dict[str, int]:
    return {str(name): int(tag["version"]) for name, tag in handle.tags.list().items()}


def _versions(handle: Any) -> set[int]:
    return {int(v["version"]) for v in handle.list_versions()}


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]
