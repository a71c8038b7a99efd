"""Whether the model hub can be reached, asked once with a short timeout before a local model is
downloaded: offline, fastembed's own attempts (the hub with its retries, then a mirror) took 40 s
to fail; this answers in at most ``TIMEOUT`` seconds.

No answer is given (None) when a proxy is configured: the connection goes through it, and only
the download itself can tell.
"""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import urlsplit

TIMEOUT = 3.0  # seconds for the name lookup and the connection together
HUB = "https://huggingface.co"
_TRUE = {"1", "true", "yes", "on"}
_PROXIES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def unreachable(timeout: float = TIMEOUT) -> str | None:
    """Why the hub cannot be reached (HF_HUB_OFFLINE set, no answer, a refused connection), or
    None when it answered or a proxy stands between."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE:
        return "HF_HUB_OFFLINE is set, so nothing is downloaded"
    if any(os.environ.get(name, "").strip() for name in _PROXIES):
        return None
    url = urlsplit(os.environ.get("HF_ENDPOINT", "").strip() or HUB)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    problem: list[str] = []

    def connect() -> None:  # in a thread: the name lookup has no timeout of its own
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as exc:
            problem.append(exc.strerror or str(exc) or type(exc).__name__)

    thread = threading.Thread(target=connect, name="lancelot-hub-check", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return f"{host} did not answer within {timeout:g} s"
    return f"{host} cannot be reached ({problem[0]})" if problem else None
