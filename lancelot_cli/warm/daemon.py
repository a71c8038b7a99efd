"""The warm process: lancedb loaded once, the CLI's engine calls answered one at a time.

Started by ``client.start_pending`` as ``python -m lancelot_cli.warm.daemon --fingerprint FP --minutes M``,
detached, with /dev/null for stdin, stdout and stderr. It takes the lock file for its fingerprint
(a second one started at the same time exits at once), imports lancedb, replaces a stale socket
file and listens. For each request it takes on the client's environment and working folder, calls
the Engine method on an Engine kept per (settings, folder, credentials) so table handles stay open
(for a folder; an object store read with a consistency interval gets a new Engine per call, as a
new CLI process would), and sends back the model, the LancelotError, or "fallback" for anything
unexpected (the client then runs the call itself). It exits after ``LANCELOT_WARM`` idle minutes
(the latest client's value), when its socket file is removed or replaced, or on SIGTERM/SIGHUP/SIGINT.

Read-only: it imports the engine and storage.reader, never the indexer or a write path (the first
import-linter contract in pyproject.toml). A few lines of log go to ``warm.log`` in its folder.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import json
import os
import signal
import socket
import sys
import time
from typing import Any

from lancelot_cli.errors import LancelotError
from lancelot_cli.settings import ENVIRONMENT
from lancelot_cli.warm import protocol, runtime

REQUEST_TIMEOUT = 5.0  # a client that connects and sends nothing must not hold the others up
REPLY_TIMEOUT = 30.0  # nor one that stops reading
CHECK_EVERY = 5.0  # seconds between checks that our socket file is still ours
KEEP_ENGINES = 8
MAX_LOG = 256 << 10
# Variables that change what an Engine opens or which key it finds, besides the settings themselves.
CREDENTIALS = ("AWS_", "AZURE_", "GOOGLE_", "OPENAI_", "HOME", "XDG_", "PYTHON_KEYRING_BACKEND")


class Warm:
    """One warm process's state: its files, the engines it keeps, how long it may stay idle."""

    def __init__(self, place: runtime.Place, minutes: float) -> None:
        self.place = place
        self.idle_seconds = minutes * 60
        self.engines: collections.OrderedDict[tuple[Any, ...], Any] = collections.OrderedDict()
        self.inode: int | None = None  # of the socket file we bound

    def log(self, message: str) -> None:
        try:
            with open(self.place.log, "a", encoding="utf-8") as fh:
                if fh.tell() > MAX_LOG:  # a few lines per request: keep the newest ones only
                    fh.truncate(0)
                fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()} {message}\n")
        except OSError:
            pass

    def serve(self, server: socket.socket) -> str:
        """Answer connections until idle for too long; the reason it stopped."""
        last = time.monotonic()
        while True:
            left = last + self.idle_seconds - time.monotonic()
            if left <= 0:
                return "idle"
            server.settimeout(min(left, CHECK_EVERY))
            try:
                conn, _ = server.accept()
            except socket.timeout:
                try:
                    if os.stat(self.place.socket).st_ino != self.inode:
                        return "socket replaced"
                except OSError:
                    return "socket removed"
                continue
            with conn:
                try:
                    self.answer(conn)
                except Exception as exc:  # noqa: BLE001 - one bad request must not end the process
                    self.log(f"request failed: {type(exc).__name__}: {exc}")
            last = time.monotonic()

    def answer(self, conn: socket.socket) -> None:
        """One request: read it, run it, send the reply (a client that has gone is not an error)."""
        try:
            who = protocol.peer(conn)
            if who is not None and who[1] != os.getuid():
                return
            conn.settimeout(REQUEST_TIMEOUT)
            conn.sendall(protocol.ACK)
            request = json.loads(protocol.recv_frame(conn, protocol.MAX_REQUEST))
            kind, value = self.run(request)
            try:
                reply = protocol.dump_reply(kind, value)
            except Exception as exc:  # noqa: BLE001 - a value pickle cannot carry: the client runs it
                kind, value = "fallback", f"{type(exc).__name__}: {exc}"
                reply = protocol.dump_reply(kind, value)
            method = request.get("method") if isinstance(request, dict) else None
            why = f" ({value})" if kind == "fallback" else ""
            self.log(f"{method} for pid {who[0] if who else '?'}: {kind}{why}")  # before the client exits
            conn.settimeout(REPLY_TIMEOUT)
            protocol.send_frame(conn, reply)
        except (OSError, EOFError, ValueError) as exc:  # the client left, timed out, or sent nonsense
            self.log(f"dropped a request: {type(exc).__name__}: {exc}")

    def run(self, request: Any) -> tuple[str, Any]:
        """``("ok", model)``, ``("error", LancelotError)`` or ``("fallback", why)`` for one request."""
        try:
            method, options, environ, cwd, settings_json = _checked(request)
            _take_environment(environ)
            os.chdir(cwd)
            settings = protocol.settings_from_json(settings_json)
        except (ValueError, TypeError, KeyError, OSError) as exc:
            return "fallback", f"{type(exc).__name__}: {exc}"
        self.idle_seconds = settings.warm_minutes * 60
        key = (json.dumps(settings_json, sort_keys=True), cwd,
               tuple(sorted((k, v) for k, v in environ.items() if k in ENVIRONMENT or k.startswith(CREDENTIALS))))
        engine = self._engine(key, settings)
        try:
            return "ok", getattr(engine, method)(**options)
        except LancelotError as exc:
            return "error", exc
        except Exception as exc:  # noqa: BLE001 - unexpected: the client runs the call itself and reports it
            self.engines.pop(key, None)
            return "fallback", f"{type(exc).__name__}: {exc}"

    def _engine(self, key: tuple[Any, ...], settings: Any) -> Any:
        from lancelot_cli.engine import Engine

        if settings.consistency_seconds > 0:  # a handle kept would be up to that many seconds stale
            return Engine(settings)
        engine = self.engines.get(key)
        if engine is None:
            engine = self.engines[key] = Engine(settings)
            while len(self.engines) > KEEP_ENGINES:
                self.engines.popitem(last=False)
        self.engines.move_to_end(key)
        return engine


def _checked(request: Any) -> tuple[str, dict[str, Any], dict[str, str], str, Any]:
    if not isinstance(request, dict) or request.get("protocol") != runtime.PROTOCOL:
        raise ValueError("not a request of this protocol version")
    method, options, environ, cwd = (request.get(k) for k in ("method", "options", "environ", "cwd"))
    if method not in protocol.METHODS or not isinstance(options, dict) or not isinstance(cwd, str) \
            or not os.path.isabs(cwd) or not isinstance(environ, dict) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in environ.items()):
        raise ValueError("a malformed request")
    return method, options, environ, cwd, request.get("settings")


def _take_environment(environ: dict[str, str]) -> None:
    """Make os.environ the client's, changing only what differs (lancedb's threads read it too)."""
    zone = os.environ.get("TZ")
    for name in [name for name in os.environ if name not in environ]:
        del os.environ[name]
    for name, value in environ.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
    if os.environ.get("TZ") != zone:
        time.tzset()


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lancelot_cli.warm.daemon")
    parser.add_argument("--fingerprint", required=True)
    parser.add_argument("--minutes", type=float, required=True)
    args = parser.parse_args(argv)
    os.chdir("/")  # hold no client folder busy
    where = runtime.folder()
    if not runtime.make_folder(where) or runtime.fingerprint() != args.fingerprint:
        return 0  # not ours alone, or the code changed since the client looked: the next client decides
    place = runtime.place(where, args.fingerprint)
    if place is None:
        return 0
    lock = os.open(place.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another warm process for this code is starting or serving
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _stop)
    warm = Warm(place, args.minutes)
    server = None
    reason = "stopped"
    try:
        import lancelot_cli.engine  # noqa: F401 - what the first call needs, loaded before we listen
        from lancelot_cli.storage.reader import warm_up

        warm_up()
        try:
            os.unlink(place.socket)  # stale: only the lock holder serves
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)
        try:
            server.bind(place.socket)
        finally:
            os.umask(mask)
        warm.inode = os.stat(place.socket).st_ino
        server.listen(16)
        warm.log(f"listening on {place.socket} ({args.minutes:g} idle minutes)")
        reason = warm.serve(server)
    except SystemExit:
        reason = "signal"
    except Exception as exc:  # noqa: BLE001 - said in the log (stderr is /dev/null); the next client starts another
        reason = f"failed: {type(exc).__name__}: {exc}"
    finally:
        if server is not None:
            server.close()
        try:
            if warm.inode is not None and os.stat(place.socket).st_ino == warm.inode:
                os.unlink(place.socket)  # ours still, not a successor's
        except OSError:
            pass
        try:
            os.unlink(place.lock)
        except OSError:
            pass
        warm.log(f"exiting: {reason}")
    return 0


if __name__ == "__main__":
    code = main()
    os._exit(code)  # no slow lancedb teardown
