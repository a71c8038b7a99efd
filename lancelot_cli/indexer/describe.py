"""What the user says each folder holds: a ``.lancelotdescribe`` file next to ``.lancelotignore`` at the
top of the indexed folder, read on every run and kept with the table's index options, so that search
replies and the server's instructions can tell an agent what a folder is about (docs/design.md#issue-24).

One line per folder, ``FOLDER: what it holds`` (split at the first ``": "``), ``/`` for the whole
collection; a line may also name one document; ``#`` starts a comment line::

    /: Acme Outfitters staff handbook
    policies/: Rules customers ask about: refunds, shipping, warranty, privacy

(Plain lines rather than TOML or YAML: no parser to depend on on Python 3.10, and the file reads
like ``.lancelotignore`` beside it.)
"""

from __future__ import annotations

from pathlib import Path

from lancelot_cli.errors import IndexingError

DESCRIBE_FILE = ".lancelotdescribe"
MAX_DESCRIPTIONS = 200
MAX_CHARS = 500  # per description: it is sent with hits and in every session's instructions


def read_descriptions(root: Path) -> dict[str, str]:
    """The descriptions of ``root/.lancelotdescribe`` by folder (``"/"``, ``"policies/"``), {} without
    one. A line that is not ``FOLDER: text`` fails the run, naming the line."""
    path = root / DESCRIBE_FILE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexingError(f"cannot read {path}: {exc}") from None
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(": ")
        if not sep or not key.strip():
            raise IndexingError(f"{path}:{number}: write FOLDER: what it holds (e.g. policies/: refund rules)")
        if value.strip():
            found[folder_key(key)] = " ".join(value.split())[:MAX_CHARS]
    if len(found) > MAX_DESCRIPTIONS:
        raise IndexingError(f"{path} describes {len(found)} folders; at most {MAX_DESCRIPTIONS} are kept")
    return dict(sorted(found.items()))


def folder_key(key: str) -> str:
    """``"./guides"``, ``"/guides/"`` -> ``"guides/"`` when it names a folder as written with a slash or
    without a dot; the root (``""``, ``"/"``, ``"."``) -> ``"/"``."""
    cleaned = key.strip().replace("\\", "/").removeprefix("./").strip("/")
    if cleaned in ("", "."):
        return "/"
    last = cleaned.rsplit("/", 1)[-1]
    return cleaned if "." in last and not key.rstrip().endswith("/") else cleaned + "/"
