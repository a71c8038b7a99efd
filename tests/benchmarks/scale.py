"""Speed at scale: tables of 10,000 and 100,000 chunks (1,000,000 with --sizes) of real English text,
written through ``TableWriter``; BM25 against the substring scan on the same table, and vector and
hybrid search flat and with the vector index the indexer builds (``TableWriter.optimize()``).

Run from the repository root:
    python tests/benchmarks/scale.py [--sizes 10000,100000] [--queries 50] [--scan-queries 20]
                                     [--searches 200] [--noise 0.5] [--no-vector-index] [--data DIR]
                                     [--keep DIR [--write-only]] [--no-fts-rebuild] [--no-flat-hybrid]

A 1M table takes ~16 minutes to write (FTS indexing most of it): ``--keep DIR`` keeps each size's
table in DIR/dbN and a later run reuses a complete one (``--write-only`` stops after writing).

Per size N:
1. Makes N chunks of about 1,000 characters from the BEIR SciFact abstracts: sentence windows that
   start at a different sentence, have a different target length and continue into a different
   abstract on every pass over the corpus, so chunks differ. Each chunk gets the cached
   all-MiniLM-L6-v2 vector of the abstract it starts in (384-d, real), plus Gaussian noise of
   relative size --noise after the first pass (then re-normalised), so copies are near but distinct.
2. Writes them with ``TableWriter(db).write(rows, model=..., dimension=384)``, the indexer's writer
   (one merge_insert, then optimize(), which folds the rows into the full-text index; the vector
   index is held back here so the flat search can be measured first); the time of
   optimize() is measured by wrapping the table's method. Also times a from-scratch FTS rebuild of
   the same options (``create_index(..., replace=True)``) and reports disk size.
3. Searches in-process through ``Engine.search`` (limit --limit), SciFact claims as queries, query
   vectors from the cache (so no HTTP time is counted): ``text`` with the index, and ``text`` on the
   SAME table with the engine forced onto its no-index substring scan (a monkeypatch of
   ``storage.facts.fts_indices``: a measurement aid, not a change); ``vector`` and ``hybrid`` by a
   flat scan; then ``TableWriter(db).optimize()``, what `lancelot index` runs after a commit, builds
   the vector index when ``VectorIndexPolicy`` says so (from 25,000 rows), and both are repeated
   with it; recall@10 of the engine's ANN results against its flat (exact) ones. A reused table's
   vector index is dropped first, so every run measures the same steps.
4. Starts ``lancelot serve`` (stdio, with ../shared/tools/embed_server.py on loopback for query
   vectors), makes --searches lancedb_search calls (half text, half auto = hybrid) and reads its
   VmRSS / VmHWM from /proc.

Prints Markdown tables and writes tests/benchmarks/results/scale.json (git-ignored).
Default sizes take about 5-8 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from lancelot_cli.storage.write.policy import VectorIndexPolicy  # noqa: E402
from lancelot_cli.wire import to_wire  # noqa: E402 - the engine's replies in their JSON form
from tests.benchmarks.quality import (  # noqa: E402 - after the path set-up
    DATA,
    DIMENSION,
    EMBED_SERVER,
    MODEL,
    EmbedServerProcess,
    load_corpus,
    load_queries,
    patched,
    percentile,
)

RESULTS = Path(__file__).resolve().parent / "results" / "scale.json"
NO_VECTOR_INDEX = VectorIndexPolicy(min_rows=sys.maxsize)
PROTOCOL_VERSION = "2025-06-18"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- data ---------------------------------------------------------------------------------------


def make_rows(
    corpus: dict[str, tuple[str, str]], vectors: dict[str, Any], n: int, noise: float, seed: int = 7
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``n`` rows {id, path, title, chunk, text, hash, vector} of ~1,000-character sentence windows."""
    import numpy as np

    from lancelot_cli.indexer import chunk_hash

    docs = [
        (doc_id, title, [s for s in _SENTENCE.split(text) if s.strip()] or [title])
        for doc_id, (title, text) in corpus.items()
    ]
    count = len(docs)
    rng = np.random.default_rng(seed)
    rows = []
    lengths = []
    for k in range(n):
        d, r = k % count, k // count
        doc_id, title, sents = docs[d]
        target = 800 + (r * 137 + d * 31) % 400  # 800..1199 characters
        j = (r * 3 + d) % len(sents)
        doc, pieces, size = d, [], 0
        if r > 0:  # later passes open with one sentence of another abstract, so windows rarely repeat
            other = docs[(d * 7 + r * 13) % count][2]
            pieces.append(other[r % len(other)])
            size += len(pieces[0]) + 1
        while size < target:
            if j >= len(docs[doc][2]):  # run into another abstract, a different one on each pass
                doc, j = (doc + 1 + 7 * r) % count, 0
            sentence = docs[doc][2][j]
            pieces.append(sentence)
            size += len(sentence) + 1
            j += 1
        text = " ".join(pieces)[:1400]
        vector = vectors[doc_id]
        if r > 0 and noise > 0:
            vector = vector + rng.standard_normal(DIMENSION).astype(np.float32) * (noise / np.sqrt(DIMENSION))
            vector = (vector / np.linalg.norm(vector)).astype(np.float32)
        path = f"scifact/{doc_id}/{r}.md"
        rows.append(
            {
                "id": f"{path}#0",
                "path": path,
                "title": title,
                "chunk": 0,
                "text": text,
                "hash": chunk_hash(title, text),
                "vector": vector,
            }
        )
        lengths.append(len(text))
    distinct = len({row["hash"] for row in rows})
    return rows, {
        "mean_chars": statistics.fmean(lengths),
        "min_chars": min(lengths),
        "max_chars": max(lengths),
        "distinct_texts": distinct,
    }


def load_vectors(data: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    import numpy as np

    folder = data / "embeddings" / MODEL
    ids = json.loads((folder / "ids.json").read_text())
    corpus = np.load(folder / "corpus.npy")
    queries = np.load(folder / "queries.npy")
    return (
        {doc_id: corpus[i] for i, doc_id in enumerate(ids["corpus"])},
        {qid: queries[i] for i, qid in enumerate(ids["queries"])},
    )


def _reusable(db: Path, n: int) -> bool:
    """A table that an earlier run with --keep wrote completely (its marker file is written last)."""
    return (db / "WRITTEN").exists() and (db / "documents.lance").is_dir()


def disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


# -- timing -------------------------------------------------------------------------------------


def timed(fn: Callable[[str], Any], queries: list[str], warmup: int = 3) -> tuple[dict[str, float], list[Any]]:
    for q in queries[:warmup]:
        fn(q)
    latencies, outputs = [], []
    for q in queries:
        t0 = time.perf_counter()
        outputs.append(fn(q))
        latencies.append(time.perf_counter() - t0)
    return {
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p95_ms": percentile(latencies, 0.95) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
        "n": len(latencies),
    }, outputs


def ids_of(reply: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in reply["hits"]]


def recall_at_10(approx: list[list[str]], exact: list[list[str]]) -> float:
    return statistics.fmean(
        len(set(a[:10]) & set(e[:10])) / max(1, min(10, len(e))) for a, e in zip(approx, exact, strict=True)
    )


# -- the stdio server ---------------------------------------------------------------------------


def rss(pid: int) -> dict[str, int | None]:
    out: dict[str, int | None] = {"VmRSS_kib": None, "VmHWM_kib": None}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":")[0]
            if f"{key}_kib" in out:
                out[f"{key}_kib"] = int(line.split()[1])
    except OSError:
        pass
    return out


class StdioServer:
    """``lancelot serve`` on pipes, spoken to with newline-delimited JSON-RPC."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        script = Path(sys.executable).with_name("lancelot")
        command = [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - read back if the server dies
        self.proc = subprocess.Popen(
            [*command, "serve"],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
        )
        self.next_id = 0

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                self.stderr.seek(0)
                raise SystemExit(f"the server closed stdout: {self.stderr.read()[-2000:]!r}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method} failed: {message['error']}")
                return message["result"]
        raise SystemExit(f"{method}: no answer in {timeout} s")

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "scale-bench", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def search(self, query: str, search_type: str) -> dict[str, Any]:
        result = self.request(
            "tools/call", {"name": "lancedb_search", "arguments": {"query": query, "searchType": search_type}}
        )
        if result.get("isError"):
            raise SystemExit(f"lancedb_search failed: {json.dumps(result)[:500]}")
        return result.get("structuredContent") or json.loads(result["content"][0]["text"])

    def stop(self) -> int | None:
        if self.proc.stdin:
            self.proc.stdin.close()  # end of input: the stdio server exits
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode


def server_rss(db: Path, config: Path, url: str, queries: list[str], searches: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_"))}
    env.update(
        LANCEDB_PATH=str(db),
        LANCELOT_CONFIG_DIR=str(config),
        OPENAI_BASE_URL=url,
        OPENAI_API_KEY="sk-bench",
        EMBEDDING_MODEL=MODEL,
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        PYTHONPATH=str(REPO),
    )
    server = StdioServer(env, config)
    try:
        server.initialize()
        idle = rss(server.proc.pid)
        kinds: dict[str, int] = {}
        t0 = time.perf_counter()
        for i in range(searches):
            reply = server.search(queries[i % len(queries)], "text" if i % 2 == 0 else "auto")
            kinds[reply["searchType"]] = kinds.get(reply["searchType"], 0) + 1
        seconds = time.perf_counter() - t0
        after = rss(server.proc.pid)
    finally:
        code = server.stop()
    return {
        "searches": searches,
        "search_types": kinds,
        "seconds": seconds,
        "after_initialize": idle,
        "after_searches": after,
        "exit_code": code,
    }


# -- one size -----------------------------------------------------------------------------------


def bench_size(
    n: int,
    opts: argparse.Namespace,
    corpus: dict[str, tuple[str, str]],
    doc_vectors: dict[str, Any],
    queries: list[tuple[str, str]],
    query_vectors: dict[str, Any],
    url: str,
    tmp: Path,
) -> dict[str, Any]:
    import lancedb

    from lancelot_cli import settings as settings_module
    from lancelot_cli.credentials import FoundKey
    from lancelot_cli.engine import Engine
    from lancelot_cli.storage.read import facts as storage_facts
    from lancelot_cli.storage.schema import FTS_INDEX_NAME, TEXT
    from lancelot_cli.storage.write import table as writer

    out: dict[str, Any] = {"rows": n}
    db = (opts.keep or tmp) / f"db{n}"
    reused = _reusable(db, n)
    if not reused:
        t0 = time.perf_counter()
        rows, shape = make_rows(corpus, doc_vectors, n, opts.noise)
        out["generate_s"] = time.perf_counter() - t0
        out["chunks"] = shape
        log(
            f"[{n}] {n} chunks made in {out['generate_s']:.1f} s (mean {shape['mean_chars']:.0f} chars, "
            f"{shape['distinct_texts']} distinct)"
        )
    t0 = time.perf_counter()
    optimize_s: list[float] = []
    from lancedb.table import LanceTable

    real_optimize = LanceTable.optimize

    def timed_optimize(self: Any, *args: Any, **kwargs: Any) -> Any:  # timing only: the call is unchanged
        s = time.perf_counter()
        try:
            return real_optimize(self, *args, **kwargs)
        finally:
            optimize_s.append(time.perf_counter() - s)

    if reused:
        log(f"[{n}] reusing the table in {db} (--keep)")
        out.update({k: v for k, v in json.loads((db / "WRITTEN").read_text()).items() if k != "rows"})
        out["reused"] = str(db)
    else:
        shutil.rmtree(db, ignore_errors=True)  # (a kept folder from a run that did not finish)
        with patched(LanceTable, "optimize", timed_optimize):
            # (no vector index yet: the flat search is measured first, then optimize() below builds it)
            result = writer.TableWriter(str(db), "documents", vector_policy=NO_VECTOR_INDEX).write(
                rows, model=MODEL, dimension=DIMENSION
            )
        out["write_s"] = time.perf_counter() - t0
        out["optimize_s"] = sum(optimize_s)
        out["write"] = {"added": result.added}
        (db / "WRITTEN").write_text(json.dumps(out) + "\n")  # marks a complete table for --keep
        del rows
    lance_table = lancedb.connect(str(db)).open_table("documents")
    if reused and not opts.no_vector_index:
        from lancelot_cli.storage.write import ann as storage_ann

        if storage_ann.vector_index(lance_table) is not None:  # an earlier run built it: flat first again
            lance_table.drop_index(storage_ann.VECTOR_INDEX_NAME)
    fts_index = next(i for i in lance_table.list_indices() if TEXT in i.columns)
    stats = lance_table.index_stats(FTS_INDEX_NAME)
    out["write"] = {
        **out.get("write", {}),
        "rows_in_table": lance_table.count_rows(),
        "fts_indexed_rows": getattr(stats, "num_indexed_rows", None),
        "fts_unindexed_rows": getattr(stats, "num_unindexed_rows", None),
        "fts_index": str(getattr(fts_index, "index_type", "")),
    }
    out["disk_mb_after_write"] = disk_mb(db)
    log(
        f"[{n}] written in {out['write_s']:.1f} s (optimize incl. FTS indexing {out['optimize_s']:.1f} s), "
        f"{out['disk_mb_after_write']:.0f} MB; FTS index {out['write']}"
    )
    if opts.write_only:
        return out
    if not opts.no_fts_rebuild and not reused:
        t0 = time.perf_counter()
        lance_table.create_index(TEXT, config=writer.fts_config(), name=FTS_INDEX_NAME, replace=True)
        out["fts_rebuild_s"] = time.perf_counter() - t0
        log(f"[{n}] FTS index rebuilt from scratch in {out['fts_rebuild_s']:.1f} s")

    config = tmp / "config"
    config.mkdir(exist_ok=True)
    settings = settings_module.load(
        environ={"LANCEDB_PATH": str(db), "LANCELOT_CONFIG_DIR": str(config), "EMBEDDING_MODEL": MODEL}
    )
    by_text = {text: query_vectors[qid] for qid, text in queries}
    engine = Engine(
        settings,
        find_key=lambda: FoundKey("sk-bench", "env"),
        make_embedder=lambda key: lambda texts: [by_text[t].tolist() for t in texts],
    )
    texts = [text for _, text in queries]
    scan_texts = texts[: opts.scan_queries]
    limit = opts.limit
    search: dict[str, Any] = {}

    def run(label: str, search_type: str, sample: list[str], expect: str) -> list[Any]:
        def one(q: str) -> dict[str, Any]:
            reply = to_wire(engine.search(q, limit=limit, search_type=search_type))
            if reply["ranking"] != expect:
                raise SystemExit(f"{label}: expected ranking {expect}, got {reply['ranking']} ({reply.get('note')})")
            return reply

        search[label], replies = timed(one, sample)
        log(f"[{n}] {label}: p50 {search[label]['p50_ms']:.1f} ms, p95 {search[label]['p95_ms']:.1f} ms")
        return replies

    run("text (BM25 index)", "text", texts, "bm25")
    tbl = engine._table(None)
    columns = [c for c in tbl.columns if c != "vector"]
    search["text (lancedb FTS call only)"], _ = timed(lambda q: tbl.fts(q, TEXT, limit, columns), texts)
    if scan_texts:
        with patched(storage_facts, "fts_indices", lambda table: []):  # the same table, without using its index
            engine._db = None  # (the engine's database keeps each table's facts per version: drop them)
            run("text (substring scan, same table)", "text", scan_texts, "substring")
    engine._db = None
    exact_vec = [ids_of(r) for r in run("vector (flat, exact)", "vector", texts, "distance")]
    if not opts.no_flat_hybrid:
        run("hybrid (BM25 + flat vector)", "hybrid", texts, "rrf")

    if not opts.no_vector_index:
        # What `lancelot index` does after a commit (or on a run that finds nothing changed):
        # TableWriter.optimize(), which builds the ANN index when VectorIndexPolicy says so.
        from lancelot_cli.storage.write import ann as storage_ann
        from lancelot_cli.storage.write.policy import VECTOR_INDEX_POLICY

        t0 = time.perf_counter()
        built = writer.TableWriter(str(db), "documents").optimize()
        out["vector_index_s"] = time.perf_counter() - t0
        lance_table = lancedb.connect(str(db)).open_table("documents")
        index = storage_ann.vector_index(lance_table)
        if index is not None:
            from lancelot_cli.storage.read.database import ANN_CANDIDATES, ANN_NPROBES

            out["vector_index"] = {
                "type": str(index.index_type),
                "details": str(getattr(index, "index_details", "")),
                "policy": repr(VECTOR_INDEX_POLICY),
                "nprobes": ANN_NPROBES,
                "candidates": ANN_CANDIDATES,
            }
            out["disk_mb_after_vector_index"] = disk_mb(db)
            log(
                f"[{n}] TableWriter.optimize() built the vector index in {out['vector_index_s']:.1f} s "
                f"(ran: {built}): {out['vector_index']}"
            )
            engine._db = None
            ann_ids = [ids_of(r) for r in run("vector (ANN index)", "vector", texts, "distance")]
            run("hybrid (BM25 + ANN index)", "hybrid", texts, "rrf")
            out["ann_recall_at_10"] = recall_at_10(ann_ids, exact_vec)
            log(f"[{n}] ANN recall@10 vs exact: {out['ann_recall_at_10']:.3f}")
        else:
            log(f"[{n}] no vector index: {n} rows < VectorIndexPolicy.min_rows {VECTOR_INDEX_POLICY.min_rows}")
    out["search"] = search
    out["disk_mb"] = disk_mb(db)
    if opts.searches:
        out["server"] = server_rss(db, config, url, texts, opts.searches)
        log(f"[{n}] server after {opts.searches} searches: {out['server']['after_searches']}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts (default 10000,100000)")
    parser.add_argument("--queries", type=int, default=50, help="timed queries per search (default 50)")
    parser.add_argument(
        "--scan-queries", type=int, default=20, help="timed queries for the substring scan (default 20)"
    )
    parser.add_argument(
        "--searches",
        type=int,
        default=200,
        help="lancedb_search calls before reading the server's RSS (default 200; 0 skips)",
    )
    parser.add_argument("--limit", type=int, default=20, help="hits per search (default 20, the server's default)")
    parser.add_argument("--noise", type=float, default=0.5, help="relative noise on replicated vectors (default 0.5)")
    parser.add_argument("--no-vector-index", action="store_true", help="skip the IVF_PQ index")
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep each size's table in DIR/dbN and reuse a complete one there on the next run (a 1M write takes long)",
    )
    parser.add_argument("--no-flat-hybrid", action="store_true", help="skip hybrid search before the vector index")
    parser.add_argument("--write-only", action="store_true", help="stop after writing the tables (with --keep)")
    parser.add_argument("--no-fts-rebuild", action="store_true", help="skip timing a from-scratch FTS rebuild")
    parser.add_argument("--data", type=Path, default=DATA, help=f"SciFact folder (default {DATA})")
    parser.add_argument("--embed-server", type=Path, default=EMBED_SERVER, help="embed_server.py")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    opts = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in opts.sizes.split(",") if s.strip()]
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

    from lancelot_cli import __version__

    started = time.perf_counter()
    data = opts.data.resolve()
    corpus = load_corpus(data)
    all_queries = load_queries(data)
    doc_vectors, query_vectors = load_vectors(data)
    ordered = sorted(all_queries.items())
    random.Random(11).shuffle(ordered)
    queries = ordered[: opts.queries]
    results: dict[str, Any] = {"sizes": []}
    with (
        tempfile.TemporaryDirectory(prefix="lancelot-scale-") as tmp_name,
        EmbedServerProcess(opts.embed_server) as server,
    ):
        tmp = Path(tmp_name)
        for n in sizes:
            results["sizes"].append(bench_size(n, opts, corpus, doc_vectors, queries, query_vectors, server.url, tmp))
            shutil.rmtree(tmp / f"db{n}", ignore_errors=True)

    import importlib.metadata as md

    results["meta"] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "lancedb": md.version("lancedb"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_at_end": os.getloadavg(),
        "limit": opts.limit,
        "queries": opts.queries,
        "scan_queries": opts.scan_queries,
        "noise": opts.noise,
        "seconds": time.perf_counter() - started,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print_report(results)
    print(f"\nResults written to {opts.output} ({results['meta']['seconds']:.0f} s)")


def print_report(results: dict[str, Any]) -> None:
    meta = results["meta"]
    sizes = results["sizes"]
    print(
        f"\n## Scale — lancelot {meta['lancelot']}, lancedb {meta['lancedb']}, {meta['cpus']} CPUs, "
        f"limit {meta['limit']}, {meta['queries']} queries ({meta['scan_queries']} for the scan)\n"
    )
    head = "| | " + " | ".join(f"{s['rows']:,} chunks" for s in sizes) + " |"
    print(head)
    print("|---|" + "---:|" * len(sizes))

    def line(label: str, get: Callable[[dict[str, Any]], Any]) -> None:
        cells = []
        for s in sizes:
            try:
                cells.append(get(s))
            except (KeyError, TypeError):
                cells.append("—")
        print(f"| {label} | " + " | ".join(str(c) for c in cells) + " |")

    line(
        "mean chunk chars / distinct", lambda s: f"{s['chunks']['mean_chars']:.0f} / {s['chunks']['distinct_texts']:,}"
    )
    line("write (TableWriter.write) s", lambda s: f"{s['write_s']:.1f}")
    line("  of which optimize (FTS indexing) s", lambda s: f"{s['optimize_s']:.1f}")
    line("FTS rebuild from scratch s", lambda s: f"{s['fts_rebuild_s']:.1f}")
    line(
        "vector index build (TableWriter.optimize) s",
        lambda s: f"{s['vector_index_s']:.1f}" if "vector_index" in s else "none",
    )
    line("disk MB (text + vectors + FTS)", lambda s: f"{s['disk_mb_after_write']:.0f}")
    line("disk MB with the vector index", lambda s: f"{s['disk_mb_after_vector_index']:.0f}")
    labels = list(dict.fromkeys(k for s in sizes for k in s.get("search", {})))
    for label in labels:
        line(
            f"{label} p50 / p95 ms",
            lambda s, k=label: f"{s['search'][k]['p50_ms']:.1f} / {s['search'][k]['p95_ms']:.1f}",
        )
    scan, bm25 = "text (substring scan, same table)", "text (BM25 index)"
    line("**scan p50 / BM25 p50**", lambda s: f"**{s['search'][scan]['p50_ms'] / s['search'][bm25]['p50_ms']:.0f}×**")
    line("ANN recall@10 vs exact (engine)", lambda s: f"{s['ann_recall_at_10']:.3f}")
    line("server VmRSS after searches MiB", lambda s: f"{s['server']['after_searches']['VmRSS_kib'] / 1024:.0f}")
    line("server VmHWM (peak) MiB", lambda s: f"{s['server']['after_searches']['VmHWM_kib'] / 1024:.0f}")
    line("server VmRSS after initialize MiB", lambda s: f"{s['server']['after_initialize']['VmRSS_kib'] / 1024:.0f}")
    if len(sizes) > 1 and "search" in sizes[0]:
        first, last = sizes[0]["search"], sizes[-1]["search"]
        call_only = "text (lancedb FTS call only)"
        print(
            f"\nBM25 p50 {sizes[-1]['rows']:,} / {sizes[0]['rows']:,} rows: "
            f"{last['text (BM25 index)']['p50_ms'] / first['text (BM25 index)']['p50_ms']:.2f}× "
            f"(lancedb FTS call only: {last[call_only]['p50_ms'] / first[call_only]['p50_ms']:.2f}×)"
        )


if __name__ == "__main__":
    main()
