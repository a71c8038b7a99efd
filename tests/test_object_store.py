"""Object stores (issue 8): a real S3-compatible server (moto in server mode) on 127.0.0.1, started
by this module. `lancelot index` (the real CLI) and ``index_folder`` write into a bucket; `lancelot
serve` over stdio and over HTTP reads it and answers exactly what the same folder indexed on local
disk answers; two servers follow an indexer that updates the bucket meanwhile; every object key and
ETag is the same before and after every tool ran (the read-only proof); a wrong bucket and missing
credentials are clear errors within a bound; `lancedb_status` names the store, its consistency
interval, and never a secret.

Loopback only: every AWS variable that could send a client elsewhere is cleared, the endpoint is
always set while an ``s3://`` URI is used, and the EC2 metadata service is disabled and pointed at
a closed loopback port (``AWS_EC2_METADATA_DISABLED``/``AWS_METADATA_ENDPOINT``), so a lookup for
missing credentials never leaves the machine.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, lancelot_command, subprocess_env
from tests.support.calls import text_of as _text
from tests.support.engines import engine_for, wired

pytestmark = pytest.mark.slow

BUCKET = "lancelot-objects"
DB = f"s3://{BUCKET}/db"  # written by `lancelot index` (module fixture), then only read
ACCESS_KEY = "AKIALANCELOTTEST4242"
SECRET_KEY = "lancelot-secret-7f3c9a1e5b"  # must never appear in a reply
REGION = "us-east-1"
BOUND = 15.0  # seconds within which a wrong bucket or missing credentials must be reported
START_TIMEOUT = 30.0

# Variables that could take a client somewhere else, or give it credentials we did not choose.
AWS_CLEARED = [
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_ENDPOINT",
    "AWS_ENDPOINT_URL_S3",
    "AWS_DEFAULT_REGION",
    "AWS_S3_EXPRESS",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
    "LANCELOT_READ_CONSISTENCY",
    "LANCELOT_STORAGE_OPTIONS",
]

QUERIES = ["refund policy", "lost parcel claim form", "MAX_SAVED", "gift cards", "warranty repair", "privacy data"]

# Every tool with good and bad arguments (as in test_mcp_server), plus object-store oddities.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("lancedb_search", {"query": "refund policy"}),
    ("lancedb_search", {"query": "refund", "searchType": "text", "limit": 3}),
    ("lancedb_search", {"query": "refund", "searchType": "vector"}),
    ("lancedb_search", {"query": "refund", "searchType": "hybrid"}),
    ("lancedb_search", {"query": "refund", "limit": 0}),
    ("lancedb_search", {"query": "refund", "limit": 201}),
    ("lancedb_search", {"query": "refund", "table": "missing"}),
    ("lancedb_search", {"query": "refund", "table": "../other/documents"}),
    ("lancedb_search", {"query": "refund", "textColumn": "nope"}),
    ("lancedb_search", {"query": "x' OR '1'='1"}),
    ("lancedb_search", {"query": "refund", "pathPrefix": "policies/", "filters": {"chunk": 0}}),
    ("lancedb_search", {"query": "refund", "filters": {"path": "x' OR '1'='1"}}),
    ("lancedb_query", {"question": "how do refunds work?"}),
    ("lancedb_query", {"question": "anything", "warmStart": True, "contextBudget": 1000}),
    ("lancedb_query", {"question": "refund", "contextBudget": 5}),
    ("lancedb_document", {"source": "policies/refunds.md"}),
    ("lancedb_document", {"id": "policies/refunds.md#0", "before": 0, "after": 1}),
    ("lancedb_document", {"source": "nope.md"}),
    ("lancedb_status", {}),
    ("lancedb_status", {"verbose": True}),
    ("lancedb_version", {}),
]


# -- the S3 server --------------------------------------------------------------------------------


class RequestLog(logging.Handler):
    """moto's request lines (werkzeug's access log), kept instead of printed."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))  # (werkzeug colours some)

    def writes(self, since: int) -> list[str]:
        """Requests after the first ``since`` whose method is not GET or HEAD."""
        return [
            line
            for line in self.lines[since:]
            if '"' in line and line.split('"', 2)[1].split(" ", 1)[0] not in {"GET", "HEAD"}
        ]


@dataclass
class S3:
    endpoint: str
    env: dict[str, str]  # everything a client needs (credentials included)
    client: Any  # boto3 S3 client
    log: RequestLog

    def without_credentials(self) -> dict[str, str]:
        return {k: v for k, v in self.env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}

    def storage_options(self) -> dict[str, str]:
        return {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "aws_endpoint": self.endpoint,
            "allow_http": "true",
        }

    def objects(self) -> dict[str, tuple[str, int, Any]]:
        """Every object of the bucket: key -> (ETag, size, last modified)."""
        found: dict[str, tuple[str, int, Any]] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            for item in page.get("Contents", []):
                found[item["Key"]] = (item["ETag"], item["Size"], item["LastModified"])
        return found


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """moto's S3 on 127.0.0.1 (a free port), one bucket, and the AWS_* environment pointing at it."""
    import boto3
    from moto.server import ThreadedMotoServer

    access = logging.getLogger("werkzeug")  # moto's request log: recorded, not printed
    saved = access.level, access.propagate, list(access.handlers)
    log = RequestLog()
    access.handlers[:] = [log]
    access.setLevel(logging.INFO)
    access.propagate = False
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        _host, port = server.get_host_and_port()
        endpoint = f"http://127.0.0.1:{port}"
        nowhere = tmp_path_factory.mktemp("aws") / "missing"
        env = {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_METADATA_ENDPOINT": "http://127.0.0.1:9",
            "AWS_SHARED_CREDENTIALS_FILE": str(nowhere),
            "AWS_CONFIG_FILE": str(nowhere),
        }
        with pytest.MonkeyPatch.context() as patch:
            for name in AWS_CLEARED:
                patch.delenv(name, raising=False)
            for name, value in env.items():
                patch.setenv(name, value)
            client = boto3.client(
                "s3",
                endpoint_url=endpoint,
                region_name=REGION,
                aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY,
            )
            client.create_bucket(Bucket=BUCKET)
            yield S3(endpoint, env, client, log)
    finally:
        server.stop()
        access.setLevel(saved[0])
        access.propagate = saved[1]
        access.handlers[:] = saved[2]


def _env(s3: S3, config: Path, *, credentials: bool = True, **extra: str) -> dict[str, str]:
    """The environment of a spawned `lancelot`: loopback S3 settings, its own config folder."""
    env = subprocess_env(LANCELOT_CONFIG_DIR=str(config), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    for name in [*AWS_CLEARED, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"]:
        env.pop(name, None)
    env.update(s3.env if credentials else s3.without_credentials())
    env.update(extra)
    return env


# -- what is in the bucket -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("s3docs") / "docs"
    shutil.copytree(SAMPLE_DOCS, target)
    return target


@pytest.fixture(scope="module")
def local_db(tmp_path_factory: pytest.TempPathFactory, docs_src: Path) -> Path:
    """The same folder indexed on local disk: the answers the bucket must give."""
    from lancelot_cli.indexer import index_folder

    db = tmp_path_factory.mktemp("s3local") / "db"
    index_folder(docs_src, str(db))
    return db


@pytest.fixture(scope="module")
def cli_indexed(s3: S3, docs_src: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`lancelot index SRC s3://bucket/db --json` through the real console script."""
    config = tmp_path_factory.mktemp("s3index")
    started = time.monotonic()
    out = subprocess.run(
        [*lancelot_command(), "index", str(docs_src), DB, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(s3, config),
    )
    assert out.returncode == 0, out.stderr
    return {"summary": json.loads(out.stdout), "stderr": out.stderr, "seconds": time.monotonic() - started}


def _local_answers(local_db: Path) -> dict[str, dict[str, Any]]:
    engine = wired(engine_for(str(local_db), keyless=True))
    return {query: engine.search(query, limit=10) for query in QUERIES}


def _rows(db: str, **env: str) -> list[tuple[str, str]]:
    table = wired(engine_for(db, keyless=True, **env)).database().table("documents")
    return sorted((row["id"], row["hash"]) for row in table.rows(["id", "hash"]))


# -- writing into the bucket ---------------------------------------------------------------------


def test_cli_index_writes_the_bucket_and_it_answers_like_local_disk(
    cli_indexed: dict[str, Any], s3: S3, local_db: Path
) -> None:
    summary = cli_indexed["summary"]
    local = wired(engine_for(str(local_db), keyless=True))
    assert summary["committed"] is True and summary["database"] == DB
    assert summary["chunks"] == local.database().table("documents").count() > 0
    assert SECRET_KEY not in cli_indexed["stderr"] + json.dumps(summary)
    assert any('"PUT /' in line for line in s3.log.writes(0))  # (the request log sees writes)
    keys = s3.objects()
    assert any(key.startswith("db/documents.lance/_versions/") for key in keys)
    assert any(key.startswith("db/documents.lance/_indices/") for key in keys)  # the full-text index
    assert _rows(DB) == _rows(str(local_db))
    remote = wired(engine_for(DB, keyless=True))
    for query, expected in _local_answers(local_db).items():
        assert remote.search(query, limit=10) == expected, query


def test_index_folder_with_storage_options_only_and_incremental(
    s3: S3, docs_src: Path, local_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Credentials given only as storage options (none in the environment); a second run changes nothing."""
    from lancelot_cli.indexer import index_folder

    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    uri = f"s3://{BUCKET}/api-db"
    first = index_folder(docs_src, uri, storage_options=s3.storage_options())
    assert first.committed and first.database == uri
    before = {k: v for k, v in s3.objects().items() if k.startswith("api-db/")}
    mark = len(s3.log.lines)
    again = index_folder(docs_src, uri, storage_options=s3.storage_options())
    assert (again.committed, again.read, again.added, again.updated, again.deleted) == (False, 0, 0, 0, 0)
    assert s3.log.writes(mark) == []
    assert {k: v for k, v in s3.objects().items() if k.startswith("api-db/")} == before  # nothing written
    options = json.dumps(s3.storage_options())
    assert _rows(uri, LANCELOT_STORAGE_OPTIONS=options) == _rows(str(local_db))
    remote = wired(engine_for(uri, keyless=True, LANCELOT_STORAGE_OPTIONS=options))
    for query, expected in _local_answers(local_db).items():
        assert remote.search(query, limit=10) == expected, query


# -- serving from the bucket ---------------------------------------------------------------------


async def _read_only_round(client: Client, s3: S3, local_db: Path) -> dict[str, Any]:
    """Same answers as local disk, every call of CALLS run, and not one object added, removed or changed."""
    before = s3.objects()
    mark = len(s3.log.lines)
    for query, expected in _local_answers(local_db).items():
        result = await client.call_tool("lancedb_search", {"query": query, "limit": 10})
        assert not result.is_error, _text(result)
        assert json.loads(_text(result)) == expected, query
    errors = 0
    for name, arguments in CALLS:
        result = await client.call_tool(name, arguments)
        errors += bool(result.is_error)
    assert errors >= 5  # the bad arguments really were refused
    status = await client.call_tool("lancedb_status", {"verbose": True})
    assert s3.objects() == before
    assert len(s3.log.lines) - mark > len(CALLS)  # the server did read the bucket...
    assert s3.log.writes(mark) == []  # ...and sent not one PUT, POST or DELETE
    return status.structured_content


def _check_status(status: dict[str, Any], consistency: float) -> None:
    connection = status["connection"]
    assert connection == {"path": DB, "ok": True, "store": "s3", "consistencySeconds": consistency}
    assert [t["name"] for t in status["tables"]] == ["documents"] and status["tables"][0]["fullTextIndex"]
    dumped = json.dumps(status)
    assert SECRET_KEY not in dumped and ACCESS_KEY not in dumped


@pytest.mark.anyio
async def test_stdio_server_reads_the_bucket(
    cli_indexed: dict[str, Any], s3: S3, local_db: Path, tmp_path: Path
) -> None:
    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "serve"], env=_env(s3, tmp_path, LANCEDB_PATH=DB)
    )
    async with Client(params) as client:
        assert f"Database: {DB}." in client.instructions  # (an object store is not listed at start-up)
        status = await _read_only_round(client, s3, local_db)
    _check_status(status, 5.0)  # the object-store default


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_servers(tmp_path: Path) -> Iterator[Any]:
    """Start `lancelot serve --http PORT` processes (all at once) and always stop them."""
    started: list[Served] = []

    def spawn(envs: list[dict[str, str]]) -> list[Served]:
        batch = []
        for n, env in enumerate(envs):
            port = _free_port()
            stderr_path = tmp_path / f"server-{len(started)}-{n}.stderr"
            with stderr_path.open("wb") as err:
                proc = subprocess.Popen(
                    [*lancelot_command(), "serve", "--http", str(port)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    env=env,
                    cwd=tmp_path,
                )
            served = Served(proc, port, stderr_path)
            started.append(served)
            batch.append(served)
        deadline = time.monotonic() + START_TIMEOUT
        for served in batch:
            while True:
                if served.proc.poll() is not None:
                    pytest.fail(f"server exited with {served.proc.returncode}:\n{served.stderr_path.read_text()}")
                try:
                    socket.create_connection(("127.0.0.1", served.port), timeout=0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(
                            f"server did not listen within {START_TIMEOUT} s:\n{served.stderr_path.read_text()}"
                        )
                    time.sleep(0.05)
        return batch

    yield spawn
    for served in started:
        served.stop()


@pytest.mark.anyio
async def test_http_server_reads_the_bucket_with_storage_options_only(
    cli_indexed: dict[str, Any], s3: S3, local_db: Path, tmp_path: Path, http_servers: Any
) -> None:
    """Credentials only in LANCELOT_STORAGE_OPTIONS, LANCELOT_READ_CONSISTENCY=0."""
    env = _env(
        s3,
        tmp_path,
        credentials=False,
        LANCEDB_PATH=DB,
        LANCELOT_READ_CONSISTENCY="0",
        LANCELOT_STORAGE_OPTIONS=json.dumps(s3.storage_options()),
    )
    (served,) = http_servers([env])
    async with Client(served.url) as client:
        status = await _read_only_round(client, s3, local_db)
    _check_status(status, 0.0)
    assert SECRET_KEY not in served.stderr_path.read_text()


# -- readers while the indexer updates the bucket --------------------------------------------------

NEW_WORD = "quokkazanzibar"  # appended to policies/refunds.md
NEW_FILE_WORD = "marmaladeostrich"  # in a file added later
GONE_SOURCE = "guides/repairs.md"  # deleted later
GONE_QUERY = "repair"


@pytest.mark.anyio
async def test_two_servers_follow_the_indexer_without_errors(s3: S3, tmp_path: Path, http_servers: Any) -> None:
    from lancelot_cli.indexer import index_folder

    consistency = 1.0
    src = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, src)
    uri = f"s3://{BUCKET}/live"
    index_folder(src, uri)
    env = _env(s3, tmp_path, LANCEDB_PATH=uri, LANCELOT_READ_CONSISTENCY=str(consistency))
    servers = http_servers([env, env])

    def fresh(reply: dict[str, Any]) -> bool:
        return reply[NEW_WORD] and reply[NEW_FILE_WORD] and not reply[GONE_QUERY]

    async def ask(client: Client) -> tuple[dict[str, bool], list[str]]:
        seen: dict[str, bool] = {}
        errors: list[str] = []
        for query in (NEW_WORD, NEW_FILE_WORD, GONE_QUERY):
            result = await client.call_tool("lancedb_search", {"query": query, "limit": 20})
            if result.is_error:
                errors.append(_text(result))
                seen[query] = False
                continue
            sources = {hit["source"] for hit in result.structured_content["hits"]}
            seen[query] = (
                "news/launch.md" in sources
                if query == NEW_FILE_WORD
                else GONE_SOURCE in sources
                if query == GONE_QUERY
                else "policies/refunds.md" in sources
            )
        return seen, errors

    calls = [0, 0]
    errors: list[str] = []
    seen_at: list[float | None] = [None, None]  # when each server first gave the new content
    done = anyio.Event()

    async def poll(n: int, client: Client) -> None:
        while not done.is_set():
            seen, failed = await ask(client)
            calls[n] += 3
            errors.extend(f"server {n}: {e}" for e in failed)
            if fresh(seen) and seen_at[n] is None:  # (the commit may land before the indexer exits)
                seen_at[n] = time.monotonic()
            await anyio.sleep(0.05)

    async with Client(servers[0].url) as first, Client(servers[1].url) as second:
        for client in (first, second):
            status = (await client.call_tool("lancedb_status", {})).structured_content
            assert status["connection"]["consistencySeconds"] == consistency
            seen, failed = await ask(client)
            assert not failed and seen == {NEW_WORD: False, NEW_FILE_WORD: False, GONE_QUERY: True}
        (src / "policies" / "refunds.md").write_text(
            (src / "policies" / "refunds.md").read_text() + f"\n\n## Exotic returns\n\nA {NEW_WORD} may be returned.\n"
        )
        (src / "news").mkdir()
        (src / "news" / "launch.md").write_text(f"# Launch\n\nThe {NEW_FILE_WORD} line launches in spring.\n")
        (src / GONE_SOURCE).unlink()
        async with anyio.create_task_group() as group:
            group.start_soon(poll, 0, first)
            group.start_soon(poll, 1, second)
            out = await anyio.run_process(
                [*lancelot_command(), "index", str(src), uri, "--json"], env=_env(s3, tmp_path / "indexer"), check=False
            )
            assert out.returncode == 0, out.stderr.decode()
            report = json.loads(out.stdout)
            assert (report["added"] >= 1, report["deleted"] >= 1, report["committed"]) == (True, True, True)
            with anyio.move_on_after(consistency + 5):  # the read-consistency interval, and some slack
                while None in seen_at:
                    await anyio.sleep(0.05)
            done.set()
    assert errors == []
    assert min(calls) >= 6  # both kept answering while the indexer ran
    assert None not in seen_at, (
        f"a server did not see the new content within {consistency + 5} s of the indexer's end (calls {calls})"
    )


# -- errors: wrong bucket, no credentials ----------------------------------------------------------


def _spawn_cli(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], float]:
    return subprocess.Popen(
        [*lancelot_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ), time.monotonic()


def _finish(proc: subprocess.Popen[str], started: float) -> tuple[int, str, str]:
    """The command's exit code and output; fails if it is still running BOUND s after it started."""
    try:
        out, err = proc.communicate(timeout=max(started + BOUND - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=30)
        pytest.fail(f"`lancelot` still running {BOUND} s after it started")
    return proc.returncode, out, err


async def _search_in_process(db: str) -> Any:
    """A search through the in-memory server; fails if it takes more than BOUND s."""
    with anyio.fail_after(BOUND):
        async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": db}))) as client:
            return await client.call_tool("lancedb_search", {"query": "refund"})


@pytest.mark.anyio
async def test_wrong_bucket_is_a_clear_error_within_the_bound(s3: S3, tmp_path: Path) -> None:
    proc, started = _spawn_cli(
        ["status", "--db", "s3://no-such-bucket-8/db"],  # runs meanwhile
        _env(s3, tmp_path, LANCELOT_STORAGE_OPTIONS=json.dumps(s3.storage_options())),
    )
    result = await _search_in_process("s3://no-such-bucket-7/db")
    assert result.is_error
    assert "no-such-bucket-7" in _text(result) and "bucket" in _text(result) and "does not exist" in _text(result)
    code, out, err = _finish(proc, started)
    assert code == 1
    lines = [line for line in (out + err).splitlines() if "cannot open" in line]
    assert len(lines) == 1 and "s3://no-such-bucket-8/db" in lines[0] and "does not exist" in lines[0], out + err
    assert "Traceback" not in err and SECRET_KEY not in out + err


@pytest.mark.anyio
async def test_missing_credentials_are_a_clear_error_within_the_bound(
    cli_indexed: dict[str, Any], s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc, started = _spawn_cli(["search", "refund", "--db", DB], _env(s3, tmp_path, credentials=False))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = await _search_in_process(DB)
    assert result.is_error and "credentials" in _text(result) and DB in _text(result), _text(result)
    code, out, err = _finish(proc, started)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "credentials" in err and DB in err, err


@pytest.mark.anyio
async def test_a_table_name_that_leaves_the_prefix_is_a_clear_error(cli_indexed: dict[str, Any]) -> None:
    """A name LanceDB refuses ("Invalid table name") must read like a missing table, not an internal error.

    FAILS until ``ReadOnlyDatabase.table`` treats that ValueError like "not found" (see the report)."""
    names = ("../api-db/documents", "a b")
    async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": DB}))) as client:
        results = [await client.call_tool("lancedb_search", {"query": "refund", "table": name}) for name in names]
    for name, result in zip(names, results, strict=True):
        assert result.is_error
        assert f"table {name!r} not found" in _text(result) and "tables here: documents" in _text(result), _text(result)


def test_status_consistency_follows_the_store_and_the_setting(cli_indexed: dict[str, Any], local_db: Path) -> None:
    assert wired(engine_for(DB, keyless=True)).status()["connection"]["consistencySeconds"] == 5.0
    now = wired(engine_for(DB, keyless=True, LANCELOT_READ_CONSISTENCY="0"))
    assert now.status()["connection"]["consistencySeconds"] == 0.0
    local = wired(engine_for(str(local_db), keyless=True)).status()["connection"]
    assert (local["store"], local["consistencySeconds"]) == ("local", 0.0)
