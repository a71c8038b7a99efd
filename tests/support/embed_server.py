"""A small OpenAI-compatible embeddings server for tests, on 127.0.0.1.

Vectors are deterministic bags of hashed words (lower-cased, unit length), so texts that share
words are close: good enough to test vector and hybrid plumbing through the real ``openai``
client, with no model and no network. Behaviour can be changed while it runs:

* ``server.fail_next = [429, 500]`` answers the next requests with those statuses;
* ``server.echo_headers = True`` makes those injected failures echo the request's headers in their
  body, ``Authorization`` included, as some proxies do;
* ``server.api_key = "k"`` requires ``Authorization: Bearer k`` (else 401);
* ``server.dimension`` sets the vector size; ``server.models`` the accepted model names (else 404);
* ``server.hold_after = n`` holds every embeddings request after the first ``n`` until
  ``server.release`` is set (an indexer caught in the middle of its embedding).

``server.requests`` and ``server.inputs`` count what it received.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "test-embed"
DIMENSION = 32


def embed(text: str, dimension: int = DIMENSION) -> list[float]:
    vector = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "little") % dimension] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    if norm == 1.0 and not any(vector):
        vector[0] = 1.0
    return [v / norm for v in vector]


class EmbedServer:
    def __init__(self) -> None:
        self.fail_next: list[int] = []
        self.echo_headers = False
        self.api_key: str | None = None
        self.dimension = DIMENSION
        self.models = {MODEL}
        self.requests = 0
        self.inputs = 0
        self.hold_after: int | None = None
        self.release = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests += 1
                    failure = owner.fail_next.pop(0) if owner.fail_next else None
                    held = owner.hold_after is not None and owner.requests > owner.hold_after
                if held:
                    owner.release.wait(60)
                if not self.path.rstrip("/").endswith("/embeddings"):
                    return self._reply(404, {"error": {"message": "not found"}})
                if failure:
                    echoed = f"; request headers: {dict(self.headers)}" if owner.echo_headers else ""
                    return self._reply(failure, {"error": {"message": f"injected {failure}{echoed}", "type": "test"}})
                if owner.api_key and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
                    return self._reply(
                        401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
                    )
                if body.get("model") not in owner.models:
                    return self._reply(404, {"error": {"message": f"model {body.get('model')} not found"}})
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts)
                with owner._lock:
                    owner.inputs += len(texts)
                data = [
                    {"object": "embedding", "index": i, "embedding": embed(t, owner.dimension)}
                    for i, t in enumerate(texts)
                ]
                self._reply(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    },
                )

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._http.serve_forever, name="embed-server", daemon=True)

    def start(self) -> EmbedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def reset(self) -> None:
        self.fail_next, self.api_key, self.dimension, self.models = [], None, DIMENSION, {MODEL}
        self.echo_headers = False
        self.requests = self.inputs = 0
        self.hold_after = None
        self.release = threading.Event()
