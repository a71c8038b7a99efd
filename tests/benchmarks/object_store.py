"""Object-store benchmark: `lancedb_search` latency from a `lancelot serve --http` process reading an S3
bucket on loopback (moto in server mode, in this process) next to the same table on local disk, with
LANCELOT_READ_CONSISTENCY 0 and 5 s; and the cold start of a fresh `lancelot serve` over stdio to its
first search result, local vs S3.

Run from the repository root:
    python tests/benchmarks/object_store.py [--chunks 100000] [--calls 200] [--warmup 10] [--runs 5]

1. Builds --chunks rows from the BEIR SciFact abstracts (`../shared/data/scifact/corpus.jsonl`):
   every 4 abstracts make one "file", cut at sentence ends into chunks of a random target length
   (700-1200 chars; about 1,000 on average); later passes over the corpus rotate each abstract's
   sentences by a random amount, so every chunk is new text with SciFact's vocabulary. Fixed seed.
2. Writes the rows with `lancelot_cli.storage.write.table.TableWriter` (what `lancelot index` uses) into
   a local folder and into `s3://lancelot-bench/db` (times both; row counts checked with lancedb).
3. For each of local/S3 x consistency 0/5 s: starts `lancelot serve --http PORT`, makes --warmup
   uncounted and then --calls timed `lancedb_search` calls (limit 10, one keep-alive connection,
   queries are the SciFact claims' `text`), counts errors and the S3 requests the server made, and
   checks that S3 and local disk return the same hit ids for every query.
4. Cold start, --runs times each for local and S3 (default consistency): spawn `lancelot serve`
   with the SDK's stdio client -> initialize -> first `lancedb_search` result.
5. Prints Markdown tables; writes tests/benchmarks/results/object_store.json (git-ignored).

Loopback only: AWS_ENDPOINT_URL points at moto on 127.0.0.1, the EC2 metadata service is disabled
and pointed at a closed loopback port, and the AWS variables that could redirect a client are
removed. moto is a single Python server sharing this process; it reads an object's whole content
for every GET, even a ranged one, which this script patches (each object's bytes are kept once, so
a ranged GET copies only its range; `--moto-as-is` turns that off). The S3 numbers are therefore
shaped by the number of requests per search and moto's per-request cost (about 1-3 ms), not a
forecast of real S3 latency (each request there is a network round trip, tens of ms for a LIST).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import http.client
import json
import logging
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "object_store.json"
BUCKET = "lancelot-bench"
S3_DB = f"s3://{BUCKET}/db"
ACCESS_KEY, SECRET_KEY, REGION = "bench", "bench-secret", "us-east-1"
LIMIT = 10
SEED = 8
GROUP = 4  # abstracts per "file"
TARGET = (700, 1200)  # a chunk's target length in chars (it ends at the first sentence end past it)
PROTOCOL_VERSION = "2025-06-18"
READY_TIMEOUT = 180.0
CALL_TIMEOUT = 120.0
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
]


# -- data --------------------------------------------------------------------------------------


def read_corpus(path: Path) -> list[tuple[str, str, str]]:
    docs = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                docs.append((str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or "")))
    return docs


def read_queries(path: Path) -> list[str]:
    """The claims' text only (`metadata` names the relevant documents and is never read)."""
    queries = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                text = str(json.loads(line)["text"]).strip()
                if text:
                    queries.append(text)
    return queries


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def build_rows(docs: list[tuple[str, str, str]], wanted: int) -> list[dict[str, Any]]:
    """``wanted`` table rows (the indexer's schema) of about 1,000 chars each, see the module doc.

    A "file" is GROUP consecutive abstracts (their sentences rotated after the first pass), cut at
    sentence ends into pieces of a random target length, so few pieces are short leftovers."""
    from lancelot_cli.indexer import chunk_hash

    rng = random.Random(SEED)
    split = [(title, [s for s in _SENTENCE.split(text) if s]) for _, title, text in docs]
    split = [(title, sentences) for title, sentences in split if sentences]
    rows: list[dict[str, Any]] = []
    for round_no in range(10_000):
        for start in range(0, len(split), GROUP):
            group = split[start : start + GROUP]
            sentences: list[str] = []
            for _, doc_sentences in group:
                shift = rng.randrange(len(doc_sentences)) if round_no else 0
                sentences += doc_sentences[shift:] + doc_sentences[:shift]
            title = group[0][0]
            path = f"scifact/r{round_no}/{start // GROUP}.md"
            pieces: list[str] = []
            current: list[str] = []
            size, target = 0, rng.randint(*TARGET)
            for sentence in sentences:
                current.append(sentence)
                size += len(sentence) + 1
                if size >= target:
                    pieces.append(" ".join(current))
                    current, size, target = [], 0, rng.randint(*TARGET)
            if current:
                pieces.append(" ".join(current))
            body = "\n\n".join(pieces)
            digest = hashlib.sha256(body.encode()).hexdigest()[:16]
            for n, text in enumerate(pieces):
                rows.append(
                    {
                        "id": f"{path}#{n}",
                        "path": path,
                        "title": title,
                        "chunk": n,
                        "text": text,
                        "hash": chunk_hash(title, text),
                        "file_size": len(body),
                        "file_mtime": 0,
                        "file_hash": digest,
                        "heading": title,
                        "line_start": None,
                        "line_end": None,
                    }
                )
                if len(rows) >= wanted:
                    return rows
    return rows


# -- the S3 server -----------------------------------------------------------------------------


class RequestCounter(logging.Handler):
    """Counts moto's request lines (werkzeug's access log) instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0  # (logging.Handler.handle holds the handler's own lock around emit)

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def serve_ranges_without_copying() -> None:
    """moto reads an object's whole content for every GET, ranged or not (``FakeKey.value``), so a
    4 KB ranged read of a 100 MB data file would cost 100 MB of I/O. Keep each object's bytes once
    (dropped when the object is written again): a ranged GET then copies only its range."""
    from moto.s3.models import FakeKey

    original = FakeKey.value

    def get(self: Any) -> bytes:
        cached = self.__dict__.get("_bench_bytes")
        if cached is None:
            cached = self.__dict__["_bench_bytes"] = original.fget(self)
        return cached

    def put(self: Any, new_value: bytes) -> None:
        self.__dict__.pop("_bench_bytes", None)
        original.fset(self, new_value)

    FakeKey.value = property(get, put)  # type: ignore[method-assign]


def start_moto(tmp: Path, fix_ranges: bool = True) -> tuple[Any, str, RequestCounter, dict[str, str]]:
    import boto3
    from moto.server import ThreadedMotoServer

    if fix_ranges:
        serve_ranges_without_copying()

    counter = RequestCounter()
    access = logging.getLogger("werkzeug")
    access.handlers[:] = [counter]
    access.setLevel(logging.INFO)
    access.propagate = False
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    nowhere = str(tmp / "no-aws-config")
    env = {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_METADATA_ENDPOINT": "http://127.0.0.1:9",
        "AWS_SHARED_CREDENTIALS_FILE": nowhere,
        "AWS_CONFIG_FILE": nowhere,
    }
    for name in AWS_CLEARED:
        os.environ.pop(name, None)
    os.environ.update(env)
    boto3.client(
        "s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY
    ).create_bucket(Bucket=BUCKET)
    return server, endpoint, counter, env


def bucket_size() -> tuple[int, int]:
    import boto3

    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=REGION)
    count = size = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for item in page.get("Contents", []):
            count += 1
            size += item["Size"]
    return count, size


def write(uri: str, rows: list[dict[str, Any]]) -> float:
    import lancedb

    from lancelot_cli.storage.write.table import TableWriter

    started = time.perf_counter()
    result = TableWriter(uri, "documents").write(rows)
    seconds = time.perf_counter() - started
    counted = lancedb.connect(uri).open_table("documents").count_rows()
    if not result.committed or counted != len(rows):
        raise SystemExit(f"{uri}: wrote {counted} rows, expected {len(rows)}")
    return seconds


# -- servers and clients -------------------------------------------------------------------------


def lancelot_command() -> list[str]:
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(db: str, config: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_")) and k not in AWS_CLEARED
    }
    env.update(
        LANCEDB_PATH=db,
        LANCELOT_CONFIG_DIR=str(config),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **extra,
    )
    return env


class McpClient:
    """One keep-alive connection to `lancelot serve --http`'s /mcp endpoint."""

    HEADERS: ClassVar[dict[str, str]] = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }

    def __init__(self, port: int, timeout: float = CALL_TIMEOUT) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.next_id = 0

    def close(self) -> None:
        self.conn.close()

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        self.conn.request("POST", "/mcp", body=body.encode(), headers=self.HEADERS)
        response = self.conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {data[:300]!r}")
        if response.getheader("content-type", "").startswith("text/event-stream"):
            data = next(line[5:] for line in data.decode().splitlines() if line.startswith("data:")).encode()
        return json.loads(data)

    def search(self, query: str) -> tuple[list[str] | None, str | None]:
        """(hit ids, None) or (None, why it failed)."""
        try:
            reply = self.call("tools/call", {"name": "lancedb_search", "arguments": {"query": query, "limit": LIMIT}})
        except (OSError, http.client.HTTPException, RuntimeError, ValueError, StopIteration) as exc:
            self.conn.close()
            return None, f"transport: {exc!r}"
        result = reply.get("result")
        if not isinstance(result, dict) or result.get("isError"):
            return None, json.dumps(reply)[:300]
        return [hit["id"] for hit in result["structuredContent"]["hits"]], None


def start_http(db: str, config: Path, tmp: Path, **extra: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    port = free_port()
    err_path = tmp / f"server-{port}.stderr"
    with err_path.open("wb") as err:
        proc = subprocess.Popen(
            [*lancelot_command(), "serve", "--http", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=server_env(db, config, **extra),
            cwd=tmp,
        )
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = err_path.read_text(errors="replace")[-3000:]
            raise SystemExit(f"the server exited with {proc.returncode}:\n{log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port, err_path
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the server did not listen within {READY_TIMEOUT:.0f} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def search_run(
    store: str,
    db: str,
    consistency: int,
    queries: list[str],
    calls: int,
    warmup: int,
    counter: RequestCounter,
    config: Path,
    tmp: Path,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    proc, port, err_path = start_http(db, config, tmp, LANCELOT_READ_CONSISTENCY=str(consistency))
    client = McpClient(port)
    latencies: list[float] = []
    problems: list[str] = []
    answers: dict[str, list[str]] = {}
    try:
        for i in range(warmup):
            _, problem = client.search(queries[i % len(queries)])
            if problem:
                raise SystemExit(
                    f"{store}, consistency {consistency}: warm-up call failed: {problem}\n"
                    f"{err_path.read_text(errors='replace')[-2000:]}"
                )
        requests_before = counter.count
        for j in range(calls):
            query = queries[(warmup + j) % len(queries)]
            t0 = time.perf_counter()
            ids, problem = client.search(query)
            latencies.append(time.perf_counter() - t0)
            if problem:
                problems.append(problem)
            else:
                answers[query] = ids  # type: ignore[assignment]
        requests = counter.count - requests_before
    finally:
        client.close()
        stop(proc)
    row = {
        "store": store,
        "consistency_s": consistency,
        "calls": calls,
        "errors": len(problems),
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p95_ms": percentile(latencies, 0.95) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
        "s3_requests_per_call": requests / calls if store == "s3" else 0.0,
        "first_problems": problems[:3],
    }
    return row, answers


async def cold_start_once(db: str, config: Path, query: str) -> tuple[float, float]:
    """Seconds from spawn to the initialize reply, and to the first lancedb_search result."""
    from mcp import Client, StdioServerParameters

    command = lancelot_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve"], env=server_env(db, config))
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - started
        result = await client.call_tool("lancedb_search", {"query": query, "limit": LIMIT})
        first = time.perf_counter() - started
    if result.is_error:
        raise SystemExit(f"cold start on {db}: the first search failed: {result.content}")
    return ready, first


def fmt(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="rows in the table (default 100000)")
    parser.add_argument("--calls", type=int, default=200, help="timed searches per configuration (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="uncounted searches first (default 10)")
    parser.add_argument("--runs", type=int, default=5, help="cold starts per store (default 5)")
    parser.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl")
    parser.add_argument("--queries", type=Path, default=DATA / "queries.jsonl")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--moto-as-is",
        action="store_true",
        help="do not patch moto's ranged GET (it then reads the whole object each time)",
    )
    opts = parser.parse_args()
    if min(opts.chunks, opts.calls, opts.runs) < 1 or opts.warmup < 0:
        parser.error("--chunks, --calls and --runs must be at least 1, --warmup at least 0")
    for path in (opts.corpus, opts.queries):
        if not path.is_file():
            parser.error(f"{path} not found")

    from lancelot_cli import __version__

    began = time.perf_counter()
    docs = read_corpus(opts.corpus)
    queries = read_queries(opts.queries)
    tmp = Path(tempfile.mkdtemp(prefix="lancelot-object-store-"))
    server = None
    try:
        server, endpoint, counter, _ = start_moto(tmp, fix_ranges=not opts.moto_as_is)
        config = tmp / "config"
        config.mkdir()
        local_db = str(tmp / "db")
        rows = build_rows(docs, opts.chunks)
        if len(rows) < opts.chunks:
            raise SystemExit(f"the corpus gave only {len(rows)} rows")
        mean_chars = statistics.fmean(len(r["text"]) for r in rows)
        print(f"{len(rows)} rows, mean {mean_chars:.0f} chars; moto S3 at {endpoint}", flush=True)
        local_write = write(local_db, rows)
        print(f"local write (TableWriter, FTS index included): {local_write:.1f} s", flush=True)
        requests_before = counter.count
        s3_write = write(S3_DB, rows)
        write_requests = counter.count - requests_before
        objects, s3_bytes = bucket_size()
        local_bytes = sum(p.stat().st_size for p in Path(local_db).rglob("*") if p.is_file())
        print(
            f"S3 write: {s3_write:.1f} s, {write_requests} requests; {objects} objects, "
            f"{s3_bytes / 1e6:.0f} MB (local folder {local_bytes / 1e6:.0f} MB)",
            flush=True,
        )
        del rows

        searches: list[dict[str, Any]] = []
        answers: dict[tuple[str, int], dict[str, list[str]]] = {}
        for store, db in (("local", local_db), ("s3", S3_DB)):
            for consistency in (0, 5):
                row, got = search_run(store, db, consistency, queries, opts.calls, opts.warmup, counter, config, tmp)
                searches.append(row)
                answers[(store, consistency)] = got
                print(
                    f"search {store}, consistency {consistency} s: p50 {row['p50_ms']:.1f} ms, "
                    f"p95 {row['p95_ms']:.1f} ms, errors {row['errors']}",
                    flush=True,
                )
        same = sum(answers[("s3", c)].get(q) == ids for c in (0, 5) for q, ids in answers[("local", c)].items())
        compared = sum(len(answers[("local", c)]) for c in (0, 5))

        cold: list[dict[str, Any]] = []
        for store, db in (("local", local_db), ("s3", S3_DB)):
            readies, firsts = [], []
            for run in range(opts.runs):
                ready, first = asyncio.run(cold_start_once(db, config, queries[run % len(queries)]))
                readies.append(ready)
                firsts.append(first)
            cold.append(
                {
                    "store": store,
                    "runs": opts.runs,
                    "initialize_median_s": statistics.median(readies),
                    "first_search_median_s": statistics.median(firsts),
                    "first_search_min_s": min(firsts),
                    "first_search_max_s": max(firsts),
                }
            )
            print(f"cold start {store}: first result median {statistics.median(firsts):.2f} s", flush=True)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    total = time.perf_counter() - began
    base = {(r["store"], r["consistency_s"]): r for r in searches}
    print()
    print(
        f"### Search, {opts.chunks:,} chunks (mean {mean_chars:.0f} chars), `lancelot serve --http`, "
        f"{opts.calls} calls, limit {LIMIT}"
    )
    print()
    print(
        "| store | LANCELOT_READ_CONSISTENCY | p50 ms | p95 ms | p99 ms | mean ms | S3 requests / call | errors |"
        " p50 vs local |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in searches:
        ratio = r["p50_ms"] / base[("local", r["consistency_s"])]["p50_ms"]
        print(
            f"| {r['store']} | {r['consistency_s']} s | {fmt(r['p50_ms'])} | {fmt(r['p95_ms'])} | "
            f"{fmt(r['p99_ms'])} | {fmt(r['mean_ms'])} | {fmt(r['s3_requests_per_call'])} | {r['errors']} | "
            f"{ratio:.1f}x |"
        )
    print()
    print(f"Same hit ids on S3 as on local disk: {same}/{compared} queries.")
    print()
    print(
        f"### Cold start: spawn `lancelot serve` (stdio, SDK client) -> first `lancedb_search` result, {opts.runs} runs"
    )
    print()
    print("| store | initialize (median) s | first result (median) s | min s | max s |")
    print("|---|---|---|---|---|")
    for c in cold:
        print(
            f"| {c['store']} | {c['initialize_median_s']:.2f} | {c['first_search_median_s']:.2f} | "
            f"{c['first_search_min_s']:.2f} | {c['first_search_max_s']:.2f} |"
        )
    print()
    print("### Writing the table (TableWriter: one merge_insert commit, then optimize)")
    print()
    print("| store | seconds | size MB | objects | S3 requests |")
    print("|---|---|---|---|---|")
    print(f"| local | {local_write:.1f} | {local_bytes / 1e6:.0f} | - | - |")
    print(f"| s3 (moto) | {s3_write:.1f} | {s3_bytes / 1e6:.0f} | {objects} | {write_requests} |")
    print()
    print(f"Total {total:.0f} s.")

    result = {
        "benchmark": "object_store",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "chunks": opts.chunks,
        "mean_chars": mean_chars,
        "calls": opts.calls,
        "warmup": opts.warmup,
        "limit": LIMIT,
        "server": "moto (ThreadedMotoServer) on 127.0.0.1",
        "moto_range_fix": not opts.moto_as_is,
        "write": {
            "local_s": local_write,
            "s3_s": s3_write,
            "s3_requests": write_requests,
            "s3_objects": objects,
            "s3_bytes": s3_bytes,
            "local_bytes": local_bytes,
        },
        "search": searches,
        "same_hits": {"same": same, "compared": compared},
        "cold_start": cold,
        "total_s": total,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"Wrote {opts.output}")


if __name__ == "__main__":
    main()
