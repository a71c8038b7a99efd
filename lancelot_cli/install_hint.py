"""The install command for an extra, as it works for the copy of Lancelot that is running.

Until ``lancelot-cli`` is on PyPI, ``pip install "lancelot-cli[local]"`` fails for anyone who
installed from a clone. pip records where an install came from in the distribution's
``direct_url.json`` (PEP 610), read here through ``importlib.metadata``:

* none (an index install): ``pip install "lancelot-cli[local]"``
* a local folder: ``pip install '/path/to/clone[local]'`` (``pip install -e ...`` when editable)
* a wheel or sdist file that still exists: ``pip install '/path/to/file.whl[local]'``
* a VCS URL: ``pip install 'lancelot-cli[local] @ git+https://...'``

Standard library only, and nothing is read until a hint is asked for.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

if TYPE_CHECKING:
    from importlib import metadata

DIST = "lancelot-cli"


def install_command(extra: str | None = "local", distribution: metadata.Distribution | None = None) -> str:
    """``pip install ...`` for ``lancelot-cli`` with ``extra``, in the form that works for this install.

    ``distribution`` is the installed ``lancelot-cli`` (looked up by name when omitted); with none
    installed (a source tree on ``PYTHONPATH``), the folder holding ``pyproject.toml`` is named."""
    from importlib import metadata  # here: ~14 ms, and every `lancelot` command imports this module

    suffix = f"[{extra}]" if extra else ""
    if distribution is None:
        # The code that runs may be a checkout that is not the installed copy (PYTHONPATH): name it.
        tree = _source_tree()
        try:
            distribution = metadata.distribution(DIST)
        except metadata.PackageNotFoundError:
            return f"pip install {shlex.quote(str(tree) + suffix)}" if tree else _index(suffix)
        if tree and _installed_folder(distribution) != tree:
            return f"pip install {shlex.quote(str(tree) + suffix)}"
    origin = _direct_url(distribution)
    if not origin:
        return _index(suffix)
    url = str(origin.get("url") or "")
    vcs_info, dir_info = origin.get("vcs_info"), origin.get("dir_info")
    if isinstance(vcs_info, dict):
        vcs = str(vcs_info.get("vcs") or "git")
        commit = vcs_info.get("commit_id")
        ref = f"{vcs}+{url}" + (f"@{commit}" if commit else "")
        return f"pip install {shlex.quote(f'{DIST}{suffix} @ {ref}')}"
    path = _file_path(url)
    if path is None:
        return f"pip install {shlex.quote(f'{DIST}{suffix} @ {url}')}" if url else _index(suffix)
    if isinstance(dir_info, dict):
        editable = "-e " if dir_info.get("editable") else ""
        return f"pip install {editable}{shlex.quote(str(path) + suffix)}"
    # an archive (wheel or sdist): its file, while it is still there
    return f"pip install {shlex.quote(str(path) + suffix)}" if path.exists() else _index(suffix)


def _index(suffix: str) -> str:
    return f'pip install "{DIST}{suffix}"'


def _direct_url(distribution: metadata.Distribution) -> dict[str, object] | None:
    try:
        text = distribution.read_text("direct_url.json")
    except OSError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _file_path(url: str) -> Path | None:
    from urllib.request import url2pathname  # here: urllib.request pulls in http.client and more

    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(url2pathname(parsed.path))


def _installed_folder(distribution: metadata.Distribution) -> Path | None:
    origin = _direct_url(distribution) or {}
    path = _file_path(str(origin.get("url") or "")) if isinstance(origin.get("dir_info"), dict) else None
    return path.resolve() if path else None


def _source_tree() -> Path | None:
    """The folder above this package when it is a project checkout (it has ``pyproject.toml``)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def uvx_source(distribution: metadata.Distribution | None = None) -> str | None:
    """What ``uvx --from`` needs to run this copy again: None for an index install (``uvx lancelot-cli``
    finds it by name), else the folder, archive or VCS URL it was installed from (PEP 610)."""
    from importlib import metadata

    try:
        distribution = distribution or metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return None
    origin = _direct_url(distribution)
    if not origin:
        return None
    url = str(origin.get("url") or "")
    vcs_info = origin.get("vcs_info")
    if isinstance(vcs_info, dict):
        commit = vcs_info.get("commit_id")
        return f"{vcs_info.get('vcs') or 'git'}+{url}" + (f"@{commit}" if commit else "")
    path = _file_path(url)
    return str(path) if path is not None else (url or None)
