"""The password in the endpoint's URL (``OPENAI_BASE_URL=http://user:pass@host/v1``) never reaches the
logs, the tool replies or the terminal (issue 46 #2 and #3).

The openai client logs every request's URL (``HTTP Request: POST http://user:pass@…``, at INFO), and
sends the URL's user and password as ``Authorization: Basic base64(user:pass)``; an endpoint (or a
proxy) may echo that credential in an error body without the word "Basic", or decoded. Real
``openai`` clients against loopback endpoints; real ``lancelot serve`` processes for the logs of
both transports. Each test has a password of its own: what ``redact`` remembers lasts for the
process, so a password remembered by another test would hide a leak here.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client
from typer.testing import CliRunner

from lancelot_cli import redact
from lancelot_cli.cli.app import app
from lancelot_cli.providers import OpenAIEmbedder
from lancelot_cli.server.app import build_server
from lancelot_cli.server.transports.logs import CHATTY, configure_logging
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.calls import text_of
from tests.support.embed_server import MODEL, EmbedServer
from tests.support.servers import free_port, spawn_serve
from tests.test_background import Setup

USER = "lancelot"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
VECTOR_SEARCH = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "lancedb_search", "arguments": {"query": "refund policy", "searchType": "vector"}},
}


class Credentials:
    """A user and a fresh password, the URL that carries them, and every form they can leak in."""

    def __init__(self, base: str, odd: bool = False) -> None:
        # ``odd``: characters a URL must percent-encode, so the raw and the decoded forms differ
        self.password = f"{'p@ss/w:rd-' if odd else 'pw-'}{secrets.token_hex(8)}"
        self.url = base.replace("http://", f"http://{USER}:{quote(self.password, safe='')}@")
        self.decoded = f"{USER}:{self.password}"
        self.basic = base64.b64encode(self.decoded.encode()).decode()

    def assert_absent(self, text: str) -> None:
        raw = self.url.split("//", 1)[1].split("@", 1)[0]
        for secret in {self.password, self.decoded, self.basic, raw, raw.split(":", 1)[1]}:
            assert secret not in text, f"{secret!r} leaked in: {text[-3000:]}"


class EchoingEndpoint:
    """An embeddings endpoint that refuses every request with a 400 whose message echoes the
    credential it was sent: the base64 after ``cred=`` and decoded, without the word "Basic"."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                sent = self.headers.get("Authorization", "").partition(" ")[2]
                decoded = base64.b64decode(sent).decode(errors="replace") if sent else ""
                message = f"unknown account: cred={sent} ({decoded}) is not allowed here"
                body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        threading.Thread(target=self._http.serve_forever, name="echoing-endpoint", daemon=True).start()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def echoing() -> Iterator[EchoingEndpoint]:
    endpoint = EchoingEndpoint()
    yield endpoint
    endpoint.stop()


@pytest.fixture
def own_logging() -> Iterator[None]:
    """Put the logging set-up back as it was after a test that calls ``configure_logging``."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in CHATTY}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, was in levels.items():
        logging.getLogger(name).setLevel(was)


# -- 2: logs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["info", "debug"])
def test_the_request_log_never_shows_the_password(
    level: str, embed_server: EmbedServer, own_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    creds = Credentials(embed_server.url)
    configure_logging(load(environ={"LANCELOT_LOG_LEVEL": level}))
    assert OpenAIEmbedder("sk-test", MODEL, creds.url).embed(["refund policy"])
    try:  # a line that carries the URL some other way, and a traceback that does
        raise RuntimeError(f"could not reach {creds.url} as {creds.decoded}")
    except RuntimeError:
        logging.getLogger("lancelot_cli.test").exception("embedding failed")
    logged = capsys.readouterr().err
    creds.assert_absent(logged)
    assert "embedding failed" in logged and f"could not reach http://***@127.0.0.1:{embed_server.port}" in logged
    if level == "debug":  # the request is still logged, its URL without the user information
        assert f"HTTP Request: POST http://***@127.0.0.1:{embed_server.port}/v1/embeddings" in logged
    else:  # per-request lines are debug output
        assert "HTTP Request" not in logged


@pytest.mark.slow
@pytest.mark.parametrize("level", [None, "info", "debug"], ids=["unset", "info", "debug"])
def test_serve_over_stdio_logs_no_password(
    level: str | None, embed_server: EmbedServer, vector_db: Path, tmp_path: Path
) -> None:
    creds = Credentials(embed_server.url)
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, VECTOR_SEARCH]
    env = subprocess_env(
        LANCEDB_PATH=str(vector_db),
        LANCELOT_CONFIG_DIR=str(tmp_path),
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=creds.url,
        EMBEDDING_MODEL=MODEL,
        **({"LANCELOT_LOG_LEVEL": level} if level else {}),
    )
    done = subprocess.run(
        [*lancelot_command(), "serve"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    reply = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}[1]["result"]
    assert not reply.get("isError") and embed_server.requests > 0, reply  # the endpoint was called
    creds.assert_absent(done.stderr)
    assert ("HTTP Request: POST http://***@" in done.stderr) is (level == "debug"), done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize(("level", "workers"), [("info", 1), ("debug", 1), ("debug", 2)])
def test_serve_over_http_logs_no_password(
    level: str, workers: int, embed_server: EmbedServer, vector_db: Path, tmp_path: Path
) -> None:
    """uvicorn's loggers have no handler of their own (``log_config=None``): its lines, and those of
    each worker process (which sets up its own logging), go through the one redacting handler."""
    import http.client

    creds = Credentials(embed_server.url)
    port = free_port()
    env = subprocess_env(
        LANCEDB_PATH=str(vector_db),
        LANCELOT_CONFIG_DIR=str(tmp_path),
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=creds.url,
        EMBEDDING_MODEL=MODEL,
        LANCELOT_LOG_LEVEL=level,
    )
    args = ["--http", str(port), *(["--workers", str(workers)] if workers > 1 else [])]
    served = spawn_serve(lancelot_command(), args, port, tmp_path / "http", env)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request(
            "POST",
            "/mcp",
            body=json.dumps(VECTOR_SEARCH),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        reply = json.loads(conn.getresponse().read())
        conn.close()
    finally:
        served.stop()
    assert not reply["result"].get("isError") and embed_server.requests > 0, reply
    creds.assert_absent(served.stderr)
    assert ("HTTP Request: POST http://***@" in served.stderr) is (level == "debug"), served.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the background server through /proc")
def test_the_background_servers_log_has_no_password(
    isolated_env: Path, embed_server: EmbedServer, vector_db: Path
) -> None:
    creds = Credentials(embed_server.url)
    made = Setup(isolated_env, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=creds.url, EMBEDDING_MODEL=MODEL)
    try:
        made.start(vector_db)
        requests = embed_server.requests
        hot = made.lancelot("search", "refund policy", "--type", "vector", "--db", str(vector_db))
        assert hot.code == 0 and hot.answered and embed_server.requests > requests, made.log()
        creds.assert_absent(made.log())
    finally:
        made.close()


# -- 3: echoed credentials -------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("odd", [False, True], ids=["plain", "percent-encoded"])
async def test_an_echoed_url_credential_stays_out_of_the_tool_reply(
    odd: bool, echoing: EchoingEndpoint, vector_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = Credentials(echoing.url, odd=odd)
    monkeypatch.setenv("LANCEDB_PATH", str(vector_db))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", creds.url)
    monkeypatch.setenv("EMBEDDING_MODEL", MODEL)
    async with Client(build_server(load())) as client:
        result = await client.call_tool("lancedb_search", {"query": "refund policy", "searchType": "vector"})
    text = text_of(result) + json.dumps(result.structured_content or {})
    creds.assert_absent(text)
    assert "HTTP 400" in text and "cred=***" in text, text  # reported, with the credential hidden


def test_index_embed_prints_no_echoed_url_credential(echoing: EchoingEndpoint, tmp_path: Path) -> None:
    creds = Credentials(echoing.url)
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": creds.url, "EMBEDDING_MODEL": MODEL}
    result = CliRunner().invoke(app, ["index", str(SAMPLE_DOCS), str(tmp_path / "db"), "--embed"], env=env)
    assert result.exit_code != 0 and "HTTP 400" in result.stderr, result.stderr
    creds.assert_absent(result.stdout + result.stderr)


def test_init_says_the_key_works_without_the_password(
    embed_server: EmbedServer, sample_db: Path, isolated_env: Path
) -> None:
    creds = Credentials(embed_server.url)
    args = ["init", "--db", str(sample_db), "--api-key-stdin", "--base-url", creds.url, "--embedding-model", MODEL]
    result = CliRunner().invoke(app, args, input="sk-test-key-for-init\n", prog_name="lancelot")
    assert result.exit_code == 0, result.stderr
    assert f"The key works: http://***@127.0.0.1:{embed_server.port}/v1 answered" in result.stderr, result.stderr
    creds.assert_absent(result.stdout + result.stderr)
    assert json.loads((isolated_env / "settings.json").read_text())["OPENAI_BASE_URL"] == creds.url  # kept


# -- remember_url itself ---------------------------------------------------------------------------


def test_remember_url_hides_each_form_of_the_user_information() -> None:
    password = "s3cret/" + secrets.token_hex(4)
    redact.remember_url(f"https://{USER}:{quote(password, safe='')}@example.com/v1")
    decoded = f"{USER}:{password}".encode()
    for form in (
        password,
        quote(password, safe=""),
        f"{USER}:{password}",
        base64.b64encode(decoded).decode(),
        base64.urlsafe_b64encode(decoded).decode(),
        base64.b64encode(decoded).decode().rstrip("="),
    ):
        assert redact.text(f"echo [{form}] end") == "echo [***] end", form
    assert redact.text(f"user {USER} and a short word test") == f"user {USER} and a short word test"


def test_remember_url_keeps_a_short_password_alone_but_hides_the_longer_forms() -> None:
    redact.remember_url("http://someone:pw12@host/v1")  # "pw12": too short to hide on its own
    assert redact.text("the pw12 line") == "the pw12 line"
    assert redact.text("cred " + base64.b64encode(b"someone:pw12").decode()) == "cred ***"
    assert redact.text("as someone:pw12.") == "as ***."


@pytest.mark.parametrize("value", [None, "", "http://host/v1", "not a url", "http://@host/v1"])
def test_remember_url_without_user_information_remembers_nothing(value: str | None) -> None:
    before = set(redact._secrets)
    redact.remember_url(value)
    assert redact._secrets == before
