"""Spawning real `lancelot serve` processes for tests: a free loopback port, a `Served` handle that
always stops its process, and a bounded wait until the server listens.

Every server listens on 127.0.0.1 only. Output goes to files (a pipe nobody reads can fill and
block the server), readable through `Served.stdout`/`Served.stderr`.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT = 30.0  # seconds a server may take to listen (the machine is shared and slow)
STOP_TIMEOUT = 10.0


def free_port() -> int:
    """A loopback port nothing listens on right now (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def closed_url(path: str = "/v1") -> str:
    """A loopback URL where nothing listens: connections are refused."""
    return f"http://127.0.0.1:{free_port()}{path}"


@dataclass
class Served:
    """A running `lancelot serve --http PORT` process; its stdout and stderr go to files."""

    proc: subprocess.Popen[bytes]
    port: int
    stdout_path: Path
    stderr_path: Path
    url: str = field(init=False)

    def __post_init__(self) -> None:
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    @property
    def stdout(self) -> bytes:
        return self.stdout_path.read_bytes()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> tuple[int | None, float]:
        """Send ``sig`` and wait; returns (exit code or None if it had to be killed, seconds taken)."""
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code: int | None = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=timeout)
            code = None
        return code, time.monotonic() - start


class ServerDidNotStart(AssertionError):
    """The server exited, or did not listen in time (its stderr is in the message)."""


def wait_listening(served: Served, timeout: float = START_TIMEOUT) -> Served:
    """Return once ``127.0.0.1:port`` accepts connections; raise (and kill it) if it exits or takes too long."""
    deadline = time.monotonic() + timeout
    while True:
        if served.proc.poll() is not None:
            raise ServerDidNotStart(f"`lancelot serve` exited with {served.proc.returncode}:\n{served.stderr}")
        try:
            socket.create_connection(("127.0.0.1", served.port), timeout=0.5).close()
            return served
        except OSError:
            if time.monotonic() > deadline:
                served.stop(signal.SIGKILL)
                raise ServerDidNotStart(
                    f"`lancelot serve` did not listen on {served.port} within {timeout} s:\n{served.stderr}"
                ) from None
            time.sleep(0.05)


def spawn_serve(
    command: list[str], args: list[str], port: int, workdir: Path, env: dict[str, str], *, wait: bool = True
) -> Served:
    """Start ``command serve ARGS`` (``command`` is `lancelot_command()`) in ``workdir`` with exactly ``env``;
    with ``wait``, return once it listens on ``port``. The caller stops it (`Served.stop`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = workdir / "stdout", workdir / "stderr"
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            [*command, "serve", *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=workdir
        )
    served = Served(proc, port, stdout_path, stderr_path)
    return wait_listening(served) if wait else served
