"""The background server: the CLI's read commands answered by a `lancelot serve --socket` kept running.

A CLI process spends most of its second in ``import lancedb``. With ``LANCELOT_WARM`` above 0 (minutes,
default 10) `search`, `query`, `show` and `status` send an MCP ``tools/call`` to a background
`lancelot serve --socket PATH --idle MINUTES` (server/transports/unix.py) and render the tool's reply; the
request's `_meta` asks for the engine's whole reply (server/app.py ``WHOLE_REPLY_KEY``), which is the
command's ``--json`` form, so output is the same as in-process. When no server answers, the command
runs in-process as always and ``start_pending`` (called once the output is written) starts one for
the next command, saying so on stderr the first time. Anything wrong on the way (no server, a
refused or unreadable reply, an argument the tool rejects, no reply in ``REPLY_TIMEOUT``) runs the
call in-process instead: never a worse answer than without it. This module is standard library
only: no SDK, no pydantic, no lancedb.

One server for every database, at most one alive. The server answers for whichever database a call
names (``DATABASE_KEY`` in the call's `_meta`; server/databases.py keeps three open); its socket is
named by a fingerprint of the version, the Python, every other setting's value, the variables that
choose a key or object-store credentials, and the working folder when the database path is relative.
A call names its database as location.py parses it (``~`` expanded by the command, a relative path
made absolute in the command's folder), never as typed: the server's home and folder may differ. The
server keeps the environment and folder it was started with; a command whose fingerprint differs
starts its own and the others are told to exit (their sockets removed), so no server answers with
another environment's settings or key and at most one holds memory. A command that failed starts
none (app.py ``main``): a mistyped `--db` would otherwise leave a server behind. Its files live in a
folder only this user may enter: 0700, owned by us, not a link (``$XDG_RUNTIME_DIR/lancelot``, else
``<temp dir>/lancelot-<uid>``); otherwise nothing is started. POSIX only.

Why one server for every database rather than one per database with at most one alive (issue 39):
100 searches alternating between three databases (the sample, the FastAPI docs: 1,396 chunks, and
these docs: 219) on a shared 2-core machine left, one server per database (before): 3 servers,
584 MiB, 0.16 s a search; one alive serving one database: 1 server of 207 MiB (30 searches), but each
search after a switch ran in-process and started a server (0.82 s median with three in a row per
database, 1.26 s alternating each time, 4 processes for a moment); one for every database: 1
server of 218 MiB, 0.17 s a search after a switch, 0.29 s the first time a database is opened.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from lancelot_cli import errors
from lancelot_cli.requests import DATABASE_KEY, ERROR_KEY, WHOLE_REPLY
from lancelot_cli.settings import FIELDS, OTHER_ENVIRONMENT, Settings

PROTOCOL_VERSION = "2025-11-25"  # the newest MCP revision with the initialize handshake (tests check the SDK has it)
CONNECT_TIMEOUT = 0.05  # a live server accepts at once (AF_UNIX)
HANDSHAKE_TIMEOUT = 2.0  # no `initialize` answer by then: stuck, run in-process
# No reply to the call by then: stuck mid-request (issue 46: `kill -STOP` hung the command for ever),
# so its socket is removed (it exits once it runs again) and the call runs in-process. Above the
# slowest answer a working server gives: an embeddings endpoint that times out (30 s) on a retry
# started at the end of the 30-s retry budget (providers.py), or a large table and a local model
# opened on a slow machine.
REPLY_TIMEOUT = 90.0
MAX_SOCKET_PATH = 100  # AF_UNIX paths: 107 bytes on Linux, 103 on macOS
MAX_REPLY = 64 << 20
MAX_LOG = 256 << 10
ANNOUNCED = "announced"  # a file in the folder: the first start was said (once per folder's life)
# Variables besides the settings that change which key or credentials an engine finds.
CREDENTIALS = ("AWS_", "AZURE_", "GOOGLE_", "OPENAI_", "HOME", "XDG_CONFIG_HOME", "PYTHON_KEYRING_BACKEND")

# Variables that change no answer: LANCEDB_LOG is set by lancelot_cli.startup.start
# at start-up, so a command that ran in-process would otherwise name another server.
UNFELT = frozenset({"LANCEDB_LOG"})

_pending: tuple[Settings, str] | None = None  # a server to start once the output is written


def call(settings: Settings, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The tool's whole reply (the `--json` form) from the background server, None to run in-process.
    An engine error the server reports is raised here as the LancelotError it was."""
    path = socket_path(settings)
    location = settings.database
    if path is None or location is None:  # no database: in-process says how to name one
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    with sock:
        try:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):  # none yet, or a stale socket file
            _want(settings, path)
            return None
        except OSError:
            return None
        try:
            result = _exchange(sock, tool, dict(arguments), location.uri)
        except _NoReply:
            _retire(path)
            return None
        except (OSError, ValueError, EOFError):  # gone, stuck, or an unreadable reply: in-process
            return None
    return _reply(result)


def initialize_request(request_id: int, client: str, version: str = "1") -> dict[str, Any]:
    """The ``initialize`` request of a raw JSON-RPC client of `lancelot serve` (this module, the docs'
    sample session, the benchmarks): the handshake revision the SDK is checked to have."""
    info = {"name": client, "version": version}
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _exchange(sock: socket.socket, tool: str, arguments: dict[str, Any], database: str) -> Any:
    lines = _lines(sock)
    sock.settimeout(HANDSHAKE_TIMEOUT)
    _send(sock, initialize_request(1, "lancelot-cli", _version()))
    _answer(lines, 1)
    _send(sock, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(
        sock,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {**WHOLE_REPLY, DATABASE_KEY: database}},
        },
    )
    sock.settimeout(REPLY_TIMEOUT)  # a long search is fine; Ctrl-C ends the wait sooner
    try:
        return _answer(lines, 2)
    except TimeoutError:
        raise _NoReply from None


class _NoReply(Exception):
    """The server took the call and gave no reply within ``REPLY_TIMEOUT``."""


def _retire(path: str) -> None:
    """A server stuck mid-request: its socket removed, so it exits and the next command starts another."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    sys.stderr.write(
        f"lancelot: the background server gave no answer in {REPLY_TIMEOUT:g} s; answering here (it was told to exit)\n"
    )
    sys.stderr.flush()


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")


def _lines(sock: socket.socket) -> Iterator[bytes]:
    reader = sock.makefile("rb")
    while True:
        line = reader.readline(MAX_REPLY)
        if not line.endswith(b"\n"):
            raise EOFError("the server closed the connection")
        yield line


def _answer(lines: Iterator[bytes], request_id: int) -> Any:
    """The result of request ``request_id`` (notifications in between are skipped)."""
    for line in lines:
        message = json.loads(line)
        if isinstance(message, dict) and message.get("id") == request_id:
            if "result" not in message:
                raise ValueError(f"the server refused the request: {message.get('error')}")
            return message["result"]
    raise EOFError("no answer")


def _reply(result: Any) -> dict[str, Any] | None:
    if not isinstance(result, dict):
        return None
    if result.get("isError"):
        found = (result.get("_meta") or {}).get(ERROR_KEY)
        if isinstance(found, dict):
            raise _error(found)
        return None  # arguments the tool rejects, or an unexpected failure: in-process says it our way
    whole = result.get("structuredContent")
    return whole if isinstance(whole, dict) else None


def _error(found: dict[str, Any]) -> errors.LancelotError:
    kinds = {kind.__name__: kind for kind in _subclasses(errors.LancelotError)}
    kind = kinds.get(str(found.get("kind")), errors.LancelotError)
    hint = found.get("hint")
    return kind(str(found.get("message", "")), hint=hint if isinstance(hint, str) else None)


def _subclasses(kind: type[errors.LancelotError]) -> Iterator[type[errors.LancelotError]]:
    yield kind
    for sub in kind.__subclasses__():
        yield from _subclasses(sub)


def _version() -> str:
    from lancelot_cli._version import __version__

    return __version__


# -- where the server lives ------------------------------------------------------------------------


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


def _want(settings: Settings, path: str) -> None:
    global _pending
    _pending = (settings, path)


def pending() -> bool:
    """True when this command starts a server once its output is written."""
    return _pending is not None


def start_pending() -> None:
    """Start the server ``call`` found missing (detached, not waited for); no-op otherwise. Called
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
