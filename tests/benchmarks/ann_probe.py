"""Probe for issue 17's "Vector search at scale": which LanceDB vector index, with which build and
query parameters, for the indexer to build (lancelot_cli/storage/ann.py). N synthetic 384-d vectors
made like scale.py's (SciFact's cached all-MiniLM-L6-v2 abstract vectors, later copies with Gaussian
noise of relative size 0.5, normalised), L2 like the engine's search, 50 SciFact claims as queries.
Per index: build time, then in a fresh process (so its memory is the index's): p50 of a limit-20
search, recall@10 against exact search (numpy), VmRSS / VmHWM after the queries; then the cost of
``optimize()`` folding 1 % new rows into the index and whether a new row is found at once.

    python tests/benchmarks/ann_probe.py 200000 [--configs pq96b4,pq48,flat,sq,hnsw]   # table in /tmp/ann_probe/dbN

Configs (``CONFIGS``): pq96b4 = IVF_PQ with 96 sub-vectors of 4 bits (what storage/write/ann.py builds),
pq48 = 48 of 8 bits, pq48s64 = the same with sample_rate 64, pq96 = 96 of 8 bits, flat = IVF_FLAT,
sq = IVF_SQ, hnsw = IVF_HNSW_SQ. Results: tests/benchmarks/README.md, "Vector search at scale".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact" / "embeddings" / "all-MiniLM-L6-v2"
DIM = 384
# name -> (index config factory kwargs, query kwargs list)
CONFIGS = {
    "pq48": (
        "IvfPq",
        {"num_sub_vectors": 48},
        [{"nprobes": 20, "refine": 10}, {"nprobes": 30, "refine": 20}, {"nprobes": 50, "refine": 20}],
    ),
    "pq48s64": (
        "IvfPq",
        {"num_sub_vectors": 48, "sample_rate": 64},
        [{"nprobes": 20, "refine": 10}, {"nprobes": 30, "refine": 20}],
    ),
    "pq96b4": (
        "IvfPq",
        {"num_sub_vectors": 96, "num_bits": 4},
        [{"nprobes": 20, "refine": 10}, {"nprobes": 20, "refine": 20}],
    ),
    "pq96": ("IvfPq", {"num_sub_vectors": 96}, [{"nprobes": 20, "refine": 10}, {"nprobes": 30, "refine": 10}]),
    "flat": ("IvfFlat", {}, [{"nprobes": 10}, {"nprobes": 20}, {"nprobes": 40}]),
    "sq": ("IvfSq", {}, [{"nprobes": 20, "refine": 5}, {"nprobes": 30, "refine": 10}]),
    "hnsw": ("HnswSq", {}, [{"nprobes": 20, "ef": 100}]),
}


def vectors(n: int, seed: int = 7) -> np.ndarray:
    corpus = np.load(DATA / "corpus.npy")
    rng = np.random.default_rng(seed)
    out = corpus[np.arange(n) % len(corpus)].astype(np.float32)
    later = np.arange(n) >= len(corpus)
    out[later] += rng.standard_normal((int(later.sum()), DIM)).astype(np.float32) * (0.5 / np.sqrt(DIM))
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def rss() -> dict[str, int]:
    lines = Path("/proc/self/status").read_text().splitlines()
    return {ln.split(":")[0]: int(ln.split()[1]) // 1024 for ln in lines if ln.startswith(("VmRSS", "VmHWM"))}


def query(db: str, n: int, runs: list[dict]) -> None:
    """In its own process: p50 and recall@10 of each query setting, then VmRSS/VmHWM (MiB)."""
    import lancedb

    base = vectors(n)
    qs = np.load(DATA / "queries.npy")[:50]
    exact = [set(np.argsort(((base - q) ** 2).sum(1))[:10].tolist()) for q in qs]
    del base
    start = rss()
    tbl = lancedb.connect(db).open_table("t")
    out = []
    for kw in runs:
        lat, rec = [], []
        for i, (q, ex) in enumerate(zip(qs, exact, strict=True)):
            t = time.perf_counter()
            s = tbl.search(q.tolist()).limit(20)
            if "nprobes" in kw:
                s = s.nprobes(kw["nprobes"])
            if kw.get("refine"):
                s = s.refine_factor(kw["refine"])
            if kw.get("ef"):
                s = s.ef(kw["ef"])
            ids = s.select(["id", "_distance"]).to_arrow()["id"].to_pylist()
            if i >= 3:  # (the first ones load the index)
                lat.append(time.perf_counter() - t)
            rec.append(len(ex & set(ids[:10])) / 10)
        out.append(
            {
                **kw,
                "p50_ms": round(float(np.median(lat)) * 1000, 1),
                "p95_ms": round(float(np.percentile(lat, 95)) * 1000, 1),
                "recall10": round(float(np.mean(rec)), 3),
            }
        )
    print(json.dumps({"runs": out, "rss_mib_before": start, "rss_mib": rss()}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int)
    parser.add_argument("--configs", default="pq48,flat,hnsw")
    parser.add_argument("--query", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    db = f"/tmp/ann_probe/db{opts.n}"
    if opts.query:
        return query(db, opts.n, json.loads(opts.query))
    import lancedb
    import lancedb.index
    import pyarrow as pa

    base = vectors(opts.n)
    column = pa.FixedSizeListArray.from_arrays(pa.array(base.ravel()), DIM)
    tbl = lancedb.connect(db).create_table("t", pa.table({"id": np.arange(opts.n), "vector": column}), mode="overwrite")
    del base, column
    flat = json.loads(subprocess.check_output([sys.executable, __file__, str(opts.n), "--query", "[{}]"]))
    print(f"flat (no index): {flat}", flush=True)
    for name in opts.configs.split(","):
        kind, build, runs = CONFIGS[name]
        t = time.time()
        tbl.create_index("vector", config=getattr(lancedb.index, kind)(distance_type="l2", **build), replace=True)
        built = time.time() - t
        res = json.loads(subprocess.check_output([sys.executable, __file__, str(opts.n), "--query", json.dumps(runs)]))
        print(f"{name} {kind} {build}: build {built:.1f} s; {res}", flush=True)
        # Maintenance: 1 % new rows (unindexed, searched flat), then optimize() folds them in.
        extra = vectors(opts.n + opts.n // 100)[opts.n :]
        extra_col = pa.FixedSizeListArray.from_arrays(pa.array(extra.ravel()), DIM)
        tbl.add(pa.table({"id": np.arange(opts.n, opts.n + len(extra)), "vector": extra_col}))
        found = (
            tbl.search(extra[0].tolist()).limit(1).nprobes(20).select(["id", "_distance"]).to_arrow()["id"][0].as_py()
        )
        t = time.time()
        tbl.optimize()
        opt = time.time() - t
        stats = {i.name: tbl.index_stats(i.name) for i in tbl.list_indices()}
        found2 = (
            tbl.search(extra[1].tolist()).limit(1).nprobes(20).select(["id", "_distance"]).to_arrow()["id"][0].as_py()
        )
        print(
            f"  +{len(extra)} rows: new row found before optimize {found == opts.n}, optimize {opt:.1f} s, "
            f"after {found2 == opts.n + 1}; {stats}",
            flush=True,
        )
        tbl.delete(f"id >= {opts.n}")
        tbl.optimize()


if __name__ == "__main__":
    main()
