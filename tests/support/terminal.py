"""Reading what a child process wrote to a pseudo-terminal."""

from __future__ import annotations

import os


def read_all(leader: int) -> bytes:
    """Everything written to the pty whose leader end is ``leader``, until the child closes it."""
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)
