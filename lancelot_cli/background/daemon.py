"""Where the background server lives and how it is started and stopped: its per-user folder and
socket (named by a fingerprint of the settings), starting it detached once a command's output is
written, telling servers to exit, and what `lancelot status` says of it (the package doc says why)."""

from __future__ import annotations

import hashlib
import os
import stat
import sys

from lancelot_cli.settings import FIELDS, OTHER_ENVIRONMENT, Settings

MAX_SOCKET_PATH = 100  # AF_UNIX paths: 107 bytes on Linux, 103 on macOS
MAX_LOG = 256 << 10
ANNOUNCED = "announced"  # a file in the folder: the first start was said (once per folder's life)
# Variables besides the settings that change which key or credentials an engine finds.
CREDENTIALS = ("AWS_", "AZURE_", "GOOGLE_", "OPENAI_", "HOME", "XDG_CONFIG_HOME", "PYTHON_KEYRING_BACKEND")

# Variables that change no answer: LANCEDB_LOG is set by lancelot_cli.startup.start
# at start-up, so a command that ran in-process would otherwise name another server.
UNFELT = frozenset({"LANCEDB_LOG"})

_pending: tuple[Settings, str] | None = None  # a server to start once the output is written


def supported() -> bool:
    """AF_UNIX sockets, file locks and uids: POSIX only."""
    return os.name == "posix" and hasattr(os, "getuid")


def folder() -> str:
    """The per-user folder for the background servers' files (it may not exist yet)."""
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


def fingerprint(settings: Settings) -> str:
    """16 hex digits naming the server for these settings (see the module doc)."""
    from lancelot_cli._version import __version__

    parts = [
        __version__,
        os.path.dirname(os.path.abspath(__file__)),
        os.path.realpath(sys.executable),
        sys.prefix,
        sys.version,
        str(settings.config_dir),
    ]
    parts += [f"{field.name}={getattr(settings, field.attr)!r}" for field in FIELDS if field.name != "LANCEDB_PATH"]
    parts += sorted(
        f"{name}={value}"
        for name, value in os.environ.items()
        if (name in OTHER_ENVIRONMENT or name.startswith(CREDENTIALS)) and name not in UNFELT
    )
    location = settings.database
    if location is None or location.relative:
        parts.append(os.getcwd())  # a relative database path (or none) means something only here
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_path(settings: Settings) -> str | None:
    """The socket for these settings; None when the background server is off or cannot be used."""
    if settings.warm_minutes <= 0 or not supported():
        return None
    try:
        where = folder()
        path = os.path.join(where, f"s{fingerprint(settings)}.sock")
    except OSError:  # no working folder, no temporary folder
        return None
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    if os.path.lexists(where) and not safe(where):
        return None  # not ours alone: never used, nothing started
    return path


def want(settings: Settings, path: str) -> None:
    """Start a server at ``path`` once the command's output is written (``start_pending``)."""
    global _pending
    _pending = (settings, path)


def pending() -> bool:
    """True when this command starts a server once its output is written."""
    return _pending is not None


def start_pending() -> None:
    """Start the server the client found missing (detached, not waited for); no-op otherwise. Called
    once the command's output is written and flushed, before the process ends."""
    global _pending
    if _pending is None:
        return
    settings, path = _pending
    _pending = None
    where = os.path.dirname(path)
    try:
        os.mkdir(where, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return
    if not safe(where):
        return
    stop_all(but=path)  # at most one alive: one for other settings (or folder) makes way
    import subprocess

    env = dict(os.environ)
    if settings.sources.get("LANCEDB_PATH") == "flag" and settings.database is not None:
        env["LANCEDB_PATH"] = settings.database.uri  # --db: what the server would not see in its environment
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    log = f"{path[: -len('.sock')]}.log"
    try:
        with open(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as out:
            if out.tell() > MAX_LOG:  # the server's stderr: keep the newest lines only
                out.truncate(0)
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-P",  # not the working folder on sys.path: never code from the caller's folder
                    "-m",
                    "lancelot_cli",
                    "serve",
                    "--socket",
                    path,
                    "--idle",
                    repr(settings.warm_minutes),
                ],
                env=env,
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=out,
                close_fds=True,
            )
    except (OSError, ValueError, subprocess.SubprocessError):  # none this time; the command is done
        return
    _announce(where, process.pid, settings.warm_minutes)


def _announce(where: str, pid: int, minutes: float) -> None:
    """Say once (per life of the folder: a login session, or until the temp folder is cleaned)."""
    try:
        fd = os.open(os.path.join(where, ANNOUNCED), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return
    os.close(fd)
    sys.stderr.write(
        f"lancelot: started a background `lancelot serve` (pid {pid}) so the next searches "
        f"start fast; it exits after {minutes:g} idle minutes. LANCELOT_WARM=0 turns it off.\n"
    )
    sys.stderr.flush()


def running(settings: Settings) -> int | None:
    """The pid of the background server for these settings when one is listening, else None."""
    path = socket_path(settings)
    if path is None or not os.path.exists(path):
        return None
    return _recorded(path)[0]


def _recorded(path: str) -> tuple[int | None, list[str]]:
    """What the server at ``path`` wrote beside it (server/transports/unix.py): its pid and open databases."""
    try:
        with open(f"{path}.lock", encoding="utf-8", errors="replace") as fh:
            first, *databases = fh.read().splitlines()
        return int(first.strip() or 0) or None, databases
    except (OSError, ValueError):
        return None, []


def described(settings: Settings, pid: int) -> str:
    """`lancelot status`'s words for the running server: pid, memory, the databases it has open."""
    path = socket_path(settings)
    databases = _recorded(path)[1] if path else []
    parts = [f"lancelot serve --socket, pid {pid}"]
    rss = _rss_mib(pid)
    if rss is not None:
        parts.append(f"{rss} MiB")
    said = ", ".join(parts)
    return f"{said}; databases open: {', '.join(databases)}" if databases else said


def status_line(settings: Settings) -> str:
    """What `status` says of the background server for these settings."""
    if settings.warm_minutes <= 0:
        return "off (LANCELOT_WARM=0)"
    if not supported():
        return "not available on this system"
    pid = running(settings)
    idle = f"exits after {settings.warm_minutes:g} idle minutes; LANCELOT_WARM=0 turns it off"
    if pid is not None:
        return f"running ({described(settings, pid)}; {idle})"
    if pending():
        return f"starting, for the next read command ({idle})"
    return f"not running ({idle})"


def _rss_mib(pid: int) -> int | None:
    """Resident memory of ``pid`` in MiB (Linux /proc; elsewhere `ps`), None when unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    import subprocess

    try:
        out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True, text=True, timeout=2)
        return int(out.stdout.strip()) // 1024
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def stop_all(but: str | None = None) -> int:
    """Remove every background server's socket but ``but``'s (each exits within seconds); how many
    there were. `lancelot init` does this (a server keeps the key and settings it started with), and
    each start: at most one is alive."""
    where = folder()
    if not safe(where):
        return 0
    stopped = 0
    for name in os.listdir(where):
        found = os.path.join(where, name)
        if name.startswith("s") and name.endswith(".sock") and found != but:
            try:
                os.unlink(found)
                stopped += 1
            except OSError:
                pass
    return stopped
