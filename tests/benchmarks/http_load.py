"""HTTP load benchmark: concurrent `lancedb_search` calls against `lancelot serve --http`, next to the
same searches run in-process through `Engine.search` (one thread, then N threads).

Run from the repository root:
    python tests/benchmarks/http_load.py [--clients 8] [--calls 250] [--chunks 10000] [--workers 1 2]

1. Writes one Markdown file per BEIR SciFact abstract (`# title`, then the text) into a temporary
   folder and indexes it with `index_folder` at the largest chunk size (700 down to 100, step 50)
   that gives at least --chunks rows; the row count is checked with lancedb itself.
2. Starts `lancelot serve --http PORT --workers N` on a free loopback port (no OpenAI key, so search
   is BM25), once for each N of --workers (default 1), one after the other.
3. --clients threads, each with its own keep-alive `http.client.HTTPConnection`, make --calls
   `tools/call lancedb_search` requests each (limit 10), after --warmup uncounted calls (each on a
   new connection, so that every worker process gets some). Queries are
   the SciFact claims (`text` only; the `metadata` field, which names relevant documents, is never
   read). A call is an error if the status is not 200, the reply is a JSON-RPC error, or isError.
4. Runs the same queries through `Engine(settings).search(query, limit=10)` in this process, first
   sequentially and then with --clients threads sharing one engine (as the server does).
5. Prints a Markdown table and ratios, the server's VmRSS after the load (its worker processes'
   summed in) and each worker's CPU seconds during the load, and writes
   tests/benchmarks/results/http_load.json (git-ignored).
6. Stops the server with SIGINT and checks that it wrote nothing to stdout.

The machine's cores are shared by the client threads and the server during the HTTP run; the
in-process runs happen after the server has stopped.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

from lancelot_cli.wire import to_wire  # noqa: E402 - the engine's replies in their JSON form

DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "http_load.json"
CHUNK_SIZES = range(700, 99, -50)  # tried largest first
LIMIT = 10
PROTOCOL_VERSION = "2025-06-18"
READY_TIMEOUT = 120.0  # seconds to wait for the server to answer
STOP_TIMEOUT = 30.0  # seconds to wait for the server to exit after SIGINT
CALL_TIMEOUT = 120.0  # socket timeout of one HTTP call


# -- data --------------------------------------------------------------------------------------


def read_corpus(path: Path) -> list[tuple[str, str, str]]:
    """(id, title, text) of every abstract."""
    docs = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                docs.append((str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or "")))
    return docs


def read_queries(path: Path) -> list[str]:
    """The claims' text. Only `text` is taken: `metadata` names the relevant documents."""
    queries = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                text = str(json.loads(line)["text"]).strip()
                if text:
                    queries.append(text)
    return queries


def markdown(title: str, text: str) -> str:
    return f"# {title}\n\n{text}\n"


def choose_chunk_size(docs: list[tuple[str, str, str]], wanted: int) -> tuple[int, int]:
    """The largest size in CHUNK_SIZES giving at least ``wanted`` chunks, and that count."""
    from lancelot_cli.indexer.chunking import chunk_text

    texts = [markdown(title, text) for _, title, text in docs]
    best = (0, 0)
    for size in CHUNK_SIZES:
        count = sum(len(chunk_text(t, size)) for t in texts)
        if count >= wanted:
            return size, count
        best = (size, count)
    raise SystemExit(f"the corpus gives only {best[1]} chunks at chunk size {best[0]}; ask for --chunks <= {best[1]}")


def build_index(docs: list[tuple[str, str, str]], chunk_size: int, src: Path, db: Path) -> dict[str, Any]:
    from lancelot_cli.indexer import index_folder

    src.mkdir(parents=True)
    for doc_id, title, text in docs:
        (src / f"{doc_id}.md").write_text(markdown(title, text), encoding="utf-8")
    start = time.perf_counter()
    report = index_folder(src, str(db), chunk_size=chunk_size)
    seconds = time.perf_counter() - start
    if report.skipped:
        raise SystemExit(f"the indexer skipped {len(report.skipped)} files, e.g. {report.skipped[:3]}")

    import lancedb

    table = lancedb.connect(str(db)).open_table("documents")
    rows = int(table.count_rows())
    if rows != report.chunks:
        raise SystemExit(f"the table holds {rows} rows but the indexer reported {report.chunks} chunks")
    return {"files": report.files, "chunk_size": chunk_size, "rows": rows, "seconds": seconds}


# -- statistics --------------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(mode: str, latencies: list[float], errors: int, wall: float, threads: int) -> dict[str, Any]:
    ordered = sorted(latencies)
    calls = len(latencies)
    return {
        "mode": mode,
        "threads": threads,
        "calls": calls,
        "errors": errors,
        "wall_s": wall,
        "throughput_per_s": calls / wall if wall > 0 else float("nan"),
        "p50_ms": percentile(ordered, 0.50) * 1000,
        "p95_ms": percentile(ordered, 0.95) * 1000,
        "p99_ms": percentile(ordered, 0.99) * 1000,
        "mean_ms": statistics.fmean(ordered) * 1000 if ordered else float("nan"),
        "max_ms": ordered[-1] * 1000 if ordered else float("nan"),
    }


def run_threads(n: int, work: Callable[[int], None]) -> float:
    """Run ``work(i)`` for i in range(n) on n threads that start together; the wall seconds."""
    barrier = threading.Barrier(n + 1)
    failures: list[BaseException] = []

    def target(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=target, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if failures:
        raise SystemExit(f"{len(failures)} worker thread(s) failed: {failures[0]!r}")
    return wall


# -- HTTP client -------------------------------------------------------------------------------


class McpClient:
    """One keep-alive connection to the server's /mcp endpoint."""

    HEADERS: ClassVar[dict[str, str]] = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }

    def __init__(self, port: int, timeout: float = CALL_TIMEOUT) -> None:
        self.port = port
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.next_id = 0

    def close(self) -> None:
        self.conn.close()

    def post(self, method: str, params: dict[str, Any] | None = None) -> tuple[int, str, bytes]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        body = json.dumps(message).encode()
        try:
            self.conn.request("POST", "/mcp", body=body, headers=self.HEADERS)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()  # the next request reconnects
            raise
        if response.will_close:
            self.conn.close()
        return response.status, response.getheader("content-type", ""), data

    def search(self, query: str) -> str | None:
        """One lancedb_search call: None on success, else why it failed."""
        try:
            status, ctype, data = self.post(
                "tools/call", {"name": "lancedb_search", "arguments": {"query": query, "limit": LIMIT}}
            )
        except (OSError, http.client.HTTPException) as exc:
            return f"transport: {exc!r}"
        if status != 200:
            return f"HTTP {status}: {data[:300]!r}"
        try:
            reply = parse_reply(ctype, data)
        except ValueError as exc:
            return f"bad reply ({exc}): {data[:300]!r}"
        if "error" in reply:
            return f"JSON-RPC error: {json.dumps(reply['error'])[:300]}"
        result = reply.get("result")
        if not isinstance(result, dict):
            return f"no result: {json.dumps(reply)[:300]}"
        if result.get("isError"):
            return f"isError: {json.dumps(result)[:300]}"
        return None


def parse_reply(content_type: str, data: bytes) -> dict[str, Any]:
    """The JSON-RPC message of a reply: a JSON body, or the first `data:` event of an SSE stream."""
    if content_type.startswith("text/event-stream"):
        for line in data.decode().splitlines():
            if line.startswith("data:"):
                return json.loads(line[5:])
        raise ValueError("empty event stream")
    reply = json.loads(data)
    if not isinstance(reply, dict):
        raise ValueError("not a JSON object")
    return reply


# -- server ------------------------------------------------------------------------------------


def lancelot_command() -> list[str]:
    """The console script next to this Python when installed, else `python -m lancelot_cli`."""
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(proc: subprocess.Popen[bytes], port: int, stderr_path: Path) -> float:
    """Poll with tools/list until the server answers 200; the seconds it took."""
    start = time.perf_counter()
    deadline = start + READY_TIMEOUT
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise SystemExit(
                f"the server exited with {proc.returncode} before it was ready:\n"
                f"{stderr_path.read_text(errors='replace')[-3000:]}"
            )
        client = McpClient(port, timeout=5.0)
        try:
            status, _, _ = client.post("tools/list")
            if status == 200:
                return time.perf_counter() - start
        except (OSError, http.client.HTTPException):
            pass
        finally:
            client.close()
        time.sleep(0.1)
    raise SystemExit(f"the server did not answer within {READY_TIMEOUT:.0f} s")


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (the worker processes of `serve --workers N`)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(int(child) for child in children)]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_rss_kib(pid: int) -> int | None:
    """VmRSS of ``pid`` and its children, summed."""
    sizes = [rss_kib(p) for p in process_tree(pid)]
    return sum(size for size in sizes if size is not None) if sizes[0] is not None else None


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def stop_server(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """SIGINT, then wait; SIGKILL (this child only) if it does not exit in time."""
    if proc.poll() is not None:
        return {"returncode": proc.returncode, "clean": False, "stop_s": 0.0, "note": "had already exited"}
    start = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
        clean = True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT)
        clean = False
    return {"returncode": proc.returncode, "clean": clean, "stop_s": time.perf_counter() - start}


# -- the runs ----------------------------------------------------------------------------------


def http_load(
    port: int, queries: list[str], clients: int, calls: int, warmup: int, label: str
) -> tuple[dict[str, Any], list[str]]:
    for i in range(warmup):
        warm = McpClient(port)  # a new connection each: with --workers, any worker may take it
        try:
            problem = warm.search(queries[i % len(queries)])
        finally:
            warm.close()
        if problem:
            raise SystemExit(f"warm-up call {i} failed: {problem}")

    latencies: list[list[float]] = [[] for _ in range(clients)]
    problems: list[list[str]] = [[] for _ in range(clients)]

    def work(i: int) -> None:
        client = McpClient(port)
        try:
            for j in range(calls):
                query = queries[(i * calls + j) % len(queries)]
                t0 = time.perf_counter()
                problem = client.search(query)
                latencies[i].append(time.perf_counter() - t0)
                if problem:
                    problems[i].append(f"client {i} call {j}: {problem}")
        finally:
            client.close()

    wall = run_threads(clients, work)
    all_problems = [p for ps in problems for p in ps]
    return summary(label, [x for xs in latencies for x in xs], len(all_problems), wall, clients), all_problems


def in_process(engine: Any, queries: list[str], clients: int, calls: int, threads: int) -> dict[str, Any]:
    """The same clients × calls queries through ``engine.search`` on ``threads`` threads."""
    work_items = [queries[(i * calls + j) % len(queries)] for i in range(clients) for j in range(calls)]
    per_thread = [work_items[k::threads] for k in range(threads)]
    latencies: list[list[float]] = [[] for _ in range(threads)]
    errors = [0] * threads

    def work(k: int) -> None:
        for query in per_thread[k]:
            t0 = time.perf_counter()
            try:
                reply = to_wire(engine.search(query, limit=LIMIT))
                if not isinstance(reply, dict) or "hits" not in reply:
                    errors[k] += 1
            except Exception:  # noqa: BLE001 - counted
                errors[k] += 1
            latencies[k].append(time.perf_counter() - t0)

    wall = run_threads(threads, work)
    label = f"in-process, {threads} thread{'s' if threads != 1 else ''}"
    return summary(label, [x for xs in latencies for x in xs], sum(errors), wall, threads)


def run_server(
    tmp: Path, env: dict[str, str], queries: list[str], opts: argparse.Namespace, workers: int
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Start `serve --http PORT --workers N`, put the load on it, stop it: (row, server facts, problems)."""
    port = free_port()
    command = [*lancelot_command(), "serve", "--http", str(port)]
    if workers != 1:
        command += ["--workers", str(workers)]
    out_path, err_path = tmp / f"server-{port}.stdout", tmp / f"server-{port}.stderr"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=tmp)
    stop: dict[str, Any] = {}
    label = f"HTTP, {opts.clients} clients, {workers} worker{'s' if workers != 1 else ''}"
    try:
        ready_s = wait_ready(proc, port, err_path)
        print(
            f"Server ready on 127.0.0.1:{port} after {ready_s:.1f} s (pid {proc.pid}, {workers} workers); "
            f"{opts.clients} clients x {opts.calls} calls...",
            flush=True,
        )
        rss_before = tree_rss_kib(proc.pid)
        pids = process_tree(proc.pid)
        cpu_before = {pid: cpu_seconds(pid) or 0.0 for pid in pids}
        row, problems = http_load(port, queries, opts.clients, opts.calls, opts.warmup, label)
        cpu_after = {pid: cpu_seconds(pid) or 0.0 for pid in pids}
        rss_after = tree_rss_kib(proc.pid)
    finally:
        stop = stop_server(proc)
    stdout = out_path.read_bytes()
    server = {
        "command": command,
        "workers": workers,
        "ready_s": ready_s,
        "rss_kib_before_load": rss_before,
        "rss_kib_after_load": rss_after,
        "cpu_s_during_load": {str(pid): cpu_after[pid] - cpu_before[pid] for pid in pids},
        "stop": stop,
        "stdout_bytes": len(stdout),
        "stdout_empty": not stdout,
        "stdout_head": stdout[:2000].decode(errors="replace"),
        "stderr_tail": err_path.read_text(errors="replace")[-2000:],
    }
    return row, server, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent HTTP clients / threads (default 8)")
    parser.add_argument("--calls", type=int, default=250, help="calls per client (default 250)")
    parser.add_argument("--chunks", type=int, default=10000, help="minimum rows in the table (default 10000)")
    parser.add_argument("--warmup", type=int, default=20, help="uncounted calls before each run (default 20)")
    parser.add_argument("--corpus", type=Path, default=DATA / "corpus.jsonl", help="BEIR corpus.jsonl")
    parser.add_argument("--queries", type=Path, default=DATA / "queries.jsonl", help="BEIR queries.jsonl")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        metavar="N",
        help="serve --workers N; several values run the HTTP load once each, in order (default 1)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results file (default {RESULTS})")
    opts = parser.parse_args()
    if opts.clients < 1 or opts.calls < 1 or opts.chunks < 1 or opts.warmup < 0 or min(opts.workers) < 1:
        parser.error("--clients, --calls, --chunks and --workers must be at least 1, --warmup at least 0")
    for path in (opts.corpus, opts.queries):
        if not path.is_file():
            parser.error(f"{path} not found")

    from lancelot_cli import __version__
    from lancelot_cli import settings as settings_module

    docs = read_corpus(opts.corpus)
    queries = read_queries(opts.queries)
    chunk_size, expected = choose_chunk_size(docs, opts.chunks)

    with tempfile.TemporaryDirectory(prefix="lancelot-http-load-") as tmp_name:
        tmp = Path(tmp_name)
        db = tmp / "db"
        config = tmp / "config"
        config.mkdir()
        print(
            f"Indexing {len(docs)} SciFact abstracts at chunk size {chunk_size} (expect {expected} chunks)...",
            flush=True,
        )
        index = build_index(docs, chunk_size, tmp / "docs", db)
        print(
            f"Index: {index['rows']} rows from {index['files']} files in {index['seconds']:.1f} s "
            f"(row count checked with lancedb)",
            flush=True,
        )
        if index["rows"] < opts.chunks:
            raise SystemExit(f"only {index['rows']} rows, fewer than --chunks {opts.chunks}")

        env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_"))}
        env.update(
            LANCEDB_PATH=str(db),
            LANCELOT_CONFIG_DIR=str(config),
            PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
            PYTHONUNBUFFERED="1",
        )

        # -- HTTP ---------------------------------------------------------------------------
        servers: list[dict[str, Any]] = []
        http_rows: list[dict[str, Any]] = []
        problems: list[str] = []
        for workers in opts.workers:
            row, server, found = run_server(tmp, env, queries, opts, workers)
            http_rows.append(row)
            servers.append(server)
            problems += found

        # -- in-process ---------------------------------------------------------------------
        from lancelot_cli.engine import Engine

        settings = settings_module.load(environ=env)
        engine = Engine(settings)
        for i in range(opts.warmup):
            engine.search(queries[i % len(queries)], limit=LIMIT)
        first = to_wire(engine.search(queries[0], limit=LIMIT))
        print("In-process runs...", flush=True)
        seq_row = in_process(engine, queries, opts.clients, opts.calls, 1)
        par_row = in_process(engine, queries, opts.clients, opts.calls, opts.clients)

    rows = [*http_rows, seq_row, par_row]
    ratios = [
        {
            "mode": http_row["mode"],
            "http_p50_over_in_process_p50": http_row["p50_ms"] / seq_row["p50_ms"],
            "http_p50_over_in_process_threads_p50": http_row["p50_ms"] / par_row["p50_ms"],
            "http_throughput_over_in_process_threads_throughput": http_row["throughput_per_s"]
            / par_row["throughput_per_s"],
            "http_throughput_over_in_process_throughput": http_row["throughput_per_s"] / seq_row["throughput_per_s"],
        }
        for http_row in http_rows
    ]
    import importlib.metadata as md

    meta = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "mcp": md.version("mcp"),
        "lancedb": md.version("lancedb"),
        "uvicorn": md.version("uvicorn"),
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_end": os.getloadavg(),
        "clients": opts.clients,
        "calls_per_client": opts.calls,
        "warmup_calls": opts.warmup,
        "limit": LIMIT,
        "corpus": str(opts.corpus),
        "queries": str(opts.queries),
        "distinct_queries": len(queries),
        "search_type_seen": first.get("searchType"),
        "ranking_seen": first.get("ranking"),
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(
        json.dumps(
            {
                "meta": meta,
                "index": index,
                "results": rows,
                "ratios": ratios,
                "servers": servers,
                "http_errors": problems[:50],
            },
            indent=2,
        )
        + "\n"
    )

    print(
        f"\nHTTP load benchmark — lancelot {__version__}, mcp {meta['mcp']}, lancedb {meta['lancedb']}, "
        f"Python {meta['python']}, {meta['cpus']} CPUs; {index['rows']} chunks (chunk size {chunk_size}), "
        f"index built in {index['seconds']:.1f} s; search {meta['search_type_seen']} ({meta['ranking_seen']}), "
        f"limit {LIMIT}\n"
    )
    print("| mode | calls | errors | wall (s) | throughput (calls/s) | p50 (ms) | p95 (ms) | p99 (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['calls']} | {r['errors']} | {r['wall_s']:.2f} | {r['throughput_per_s']:.1f} | "
            f"{r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} |"
        )
    for ratio, server in zip(ratios, servers, strict=True):
        stop = server["stop"]
        print(f"\n{ratio['mode']}:")
        print(f"- HTTP p50 / in-process (1 thread) p50: {ratio['http_p50_over_in_process_p50']:.2f}×")
        print(
            f"- HTTP p50 / in-process ({opts.clients} threads) p50: "
            f"{ratio['http_p50_over_in_process_threads_p50']:.2f}×"
        )
        print(
            f"- HTTP throughput / in-process ({opts.clients} threads) throughput: "
            f"{ratio['http_throughput_over_in_process_threads_throughput']:.2f}×"
        )
        rss_after, rss_before = server["rss_kib_after_load"], server["rss_kib_before_load"]
        rss_text = f"{rss_after / 1024:.0f} MiB" if rss_after is not None else "unknown"
        before_text = f"{rss_before / 1024:.0f} MiB" if rss_before is not None else "unknown"
        print(f"- server VmRSS after the load (workers summed): {rss_text} (before: {before_text})")
        cpu = ", ".join(f"{seconds:.1f}" for seconds in server["cpu_s_during_load"].values())
        print(f"- CPU seconds during the load, per process (parent first): {cpu}")
        stdout = "empty" if server["stdout_empty"] else f"NOT empty ({server['stdout_bytes']} bytes)"
        print(
            f"- server stop: SIGINT -> exit code {stop.get('returncode')} in {stop.get('stop_s', 0):.1f} s"
            f"{'' if stop.get('clean') else ' (NOT clean: killed or already gone)'}; stdout {stdout}"
        )
    print(f"\nResults written to {opts.output}")

    failed = False
    if problems:
        failed = True
        print(f"\n{len(problems)} HTTP errors; first ones:", file=sys.stderr)
        for p in problems[:20]:
            print(f"  {p}", file=sys.stderr)
    if seq_row["errors"] or par_row["errors"]:
        failed = True
        print(
            f"\nin-process errors: {seq_row['errors']} (1 thread), {par_row['errors']} ({opts.clients} threads)",
            file=sys.stderr,
        )
    for server in servers:
        if not server["stdout_empty"]:
            failed = True
            print(f"\nthe server wrote to stdout:\n{server['stdout_head']}", file=sys.stderr)
        stop = server["stop"]
        if not stop.get("clean") or stop.get("returncode") not in (0, -signal.SIGINT, 130):
            failed = True
            print(f"\nthe server did not stop cleanly: {stop}\nstderr tail:\n{server['stderr_tail']}", file=sys.stderr)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
