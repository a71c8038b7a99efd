"""How the CLI and the warm process talk: one request and one reply per connection.

On accepting a connection the warm process sends ``ACK`` (a client that gets none within a second
runs in-process: the process is busy or stuck). Then each side sends one frame: a 4-byte big-endian
length and that many bytes.

* The request is JSON; the warm process never unpickles what a client sends. It holds the Engine
  method, its keyword arguments (plain values), the client's environment, working folder and
  resolved settings (``settings_to_json``).
* The reply is a pickle of ``("ok", model)``, ``("error", LancelotError)`` or ``("fallback", why)``
  (both ends run the same code as the same user: the socket's name carries the code's fingerprint,
  its folder is ours alone and the peer's uid is checked). ``load_reply`` builds only our models
  and errors and a few standard types, so a reply can neither run code nor import anything heavy.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import socket
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lancelot_cli import errors, models
from lancelot_cli.settings import BY_NAME, Settings

METHODS = ("search", "query", "document", "status")
ACK = b"\x06"
MAX_REQUEST = 16 << 20
MAX_REPLY = 1 << 30
_HEADER = struct.Struct(">I")
# Standard types a model's values may hold (a row's metadata: dates, decimals...).
_STANDARD = {
    "builtins": frozenset({"set", "frozenset", "complex", "bytearray", "range", "slice"}),
    "datetime": frozenset({"datetime", "date", "time", "timedelta", "timezone"}),
    "decimal": frozenset({"Decimal"}),
    "collections": frozenset({"OrderedDict"}),
}


def send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_HEADER.pack(len(data)))
    sock.sendall(data)


def recv_frame(sock: socket.socket, limit: int) -> bytes:
    """One frame's bytes; EOFError when the other side closes early, ValueError when too long."""
    (size,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    if size > limit:
        raise ValueError(f"a frame of {size} bytes is more than {limit}")
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = sock.recv_into(view[got:])
        if not n:
            raise EOFError("the connection closed mid-message")
        got += n
    return bytes(buffer)


def peer(sock: socket.socket) -> tuple[int, int] | None:
    """The (pid, uid) of the process at the other end (SO_PEERCRED); None where the platform has no
    such option (the 0700 folder is then the only guard)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return pid, uid


def settings_to_json(settings: Settings) -> dict[str, Any]:
    """Every field of ``settings`` as JSON values (tuples as lists, paths and mappings as str and dict)."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(settings):
        value = getattr(settings, item.name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        out[item.name] = value
    return out


def settings_from_json(data: Any) -> Settings:
    """The inverse of ``settings_to_json``; ValueError for anything that is not one of its results."""
    if not isinstance(data, dict) or set(data) != {f.name for f in dataclasses.fields(Settings)}:
        raise ValueError("the settings do not have Settings' fields")
    kinds = {f.attr: f.kind for f in BY_NAME.values()}
    values = dict(data)
    for name, value in data.items():
        if kinds.get(name) == "list" and isinstance(value, list):
            values[name] = tuple(value)
    values["config_dir"] = Path(data["config_dir"])
    return Settings(**values)


def dump_reply(kind: str, value: Any) -> bytes:
    return pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)


def load_reply(data: bytes) -> tuple[str, Any]:
    """The reply's kind and value; pickle.UnpicklingError when it holds anything but what may be sent."""
    kind, value = _ModelsOnly(io.BytesIO(data)).load()
    return kind, value


class _ModelsOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == models.__name__ or module == errors.__name__:
            found = getattr(models if module == models.__name__ else errors, name, None)
            if isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, errors.LancelotError)):
                return found
        elif name in _STANDARD.get(module, ()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a warm-process reply may not hold {module}.{name}")
