"""Where the warm process listens: a private folder of ours, and file names that change with the code.

The folder is ``$XDG_RUNTIME_DIR/lancelot`` when that variable is set, else ``<temp dir>/lancelot-<uid>``.
It must be a real folder (not a link) owned by this user with no group or other access (0700);
otherwise there is no warm process at all (the CLI runs in-process, silently). The socket and lock
names carry a fingerprint of the code (version, package folder, newest module time, the Python and
its environment, and the folder lancedb is installed in): an upgraded or edited install never talks to an older warm
process, which idles out. Standard library only, and cheap: every read command computes it.
"""

from __future__ import annotations

import binascii
import os
import stat
import sys
from typing import NamedTuple

PROTOCOL = 1  # bump when the request or reply format changes
MAX_SOCKET_PATH = 100  # AF_UNIX paths: 107 bytes on Linux, 103 on macOS


class Place(NamedTuple):
    """The files of one warm process: its folder, socket, lock file, and the folder's shared log."""

    folder: str
    socket: str
    lock: str
    log: str


def supported() -> bool:
    """AF_UNIX sockets, file locks and uids: POSIX only (the warm process is off on Windows)."""
    return os.name == "posix" and hasattr(os, "getuid")


def folder() -> str:
    """The per-user folder for warm-process files (it may not exist yet)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "lancelot")
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"lancelot-{os.getuid()}")


def safe(path: str) -> bool:
    """True when ``path`` is a folder (not a link to one) owned by us that no one else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def make_folder(path: str) -> bool:
    """Create ``path`` with mode 0700 when missing; True when it is safe to use (see ``safe``)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    return safe(path)


def fingerprint() -> str:
    """16 hex digits that change with the code a warm process would run (see the module doc)."""
    import lancelot_cli

    package = os.path.dirname(os.path.abspath(lancelot_cli.__file__))
    newest, pending = 0, [package]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    newest = max(newest, entry.stat().st_mtime_ns)
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    site, site_time = _lancedb_folder()
    text = "\0".join(map(str, (PROTOCOL, lancelot_cli.__version__, package, newest, sys.prefix, sys.version,
                               site, site_time))).encode()
    return f"{binascii.crc32(text):08x}{binascii.crc32(text[::-1]):08x}"


def _lancedb_folder() -> tuple[str, int]:
    """The sys.path folder lancedb would be imported from, and its modification time (an install
    or upgrade there changes it), found without importing anything."""
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "lancedb")
        if os.path.isdir(candidate):
            try:
                return entry, os.stat(entry or ".").st_mtime_ns
            except OSError:
                break
    return "", 0


def place(where: str, code: str) -> Place | None:
    """The files for fingerprint ``code`` in folder ``where``; None when the socket path is too long."""
    sock = os.path.join(where, f"w{code}.sock")
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        return None
    return Place(where, sock, os.path.join(where, f"w{code}.lock"), os.path.join(where, "warm.log"))
