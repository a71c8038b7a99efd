"""The writer lock: one `lancelot index` per local table at a time (an flock the kernel drops with the process)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from lancelot_cli.errors import IndexingError
from lancelot_cli.storage.schema import is_local, local_path


@contextmanager
def writer_lock(db_uri: str, table: str) -> Iterator[None]:
    """Hold the table's writer lock (a file in the database folder) for the block.

    A second `lancelot index` on the same table refuses at once instead of racing the first.
    The kernel drops the lock when the process dies, even by SIGKILL: it is an ``flock`` on a
    descriptor that child processes do not inherit (Python opens files non-inheritable, and the
    HTML workers are spawned, not forked), so no worker can keep it. Also removes staging
    folders that a killed run left behind. Object stores have no such lock: run one indexer.
    """
    if not is_local(db_uri):
        yield
        return
    import fcntl

    root = local_path(db_uri)
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, f".lancelot-index-{table}.lock")
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip()  # empty while the holder has not written its pid yet
            who = f"another `lancelot index` (pid {holder})" if holder.isdigit() else "another `lancelot index`"
            raise IndexingError(
                f"{who} is updating table {table!r} in {root}; wait for it to finish or stop it, then run again"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        for name in os.listdir(root):
            if name.startswith(".staging-"):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        yield
