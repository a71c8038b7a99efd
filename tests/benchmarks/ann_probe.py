"""Probe for issue 17's "Vector search at scale": flat search against LanceDB's IVF_HNSW_SQ and IVF_PQ
indexes on N synthetic 384-d vectors (SciFact's cached all-MiniLM-L6-v2 abstracts plus Gaussian
noise, normalised: clustered like real text vectors), 50 SciFact claims as queries; p50 latency and
recall@10 against exact search, and index build time. An experiment, not wired into the indexer.

    python tests/benchmarks/ann_probe.py 200000      # writes /tmp/j_ann/dbN

Measured at 200,000 rows on the 2 shared cores at load average ~10 (see the benchmarks README).
"""
import sys
import time
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

N = int(sys.argv[1])
D = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact" / "embeddings" / "all-MiniLM-L6-v2"
C = np.load(f"{D}/corpus.npy"); Q = np.load(f"{D}/queries.npy")[:50]
rng = np.random.default_rng(0)
base = C[rng.integers(0, len(C), N)] + rng.normal(0, 0.04, (N, 384)).astype(np.float32)
base /= np.linalg.norm(base, axis=1, keepdims=True)
db = lancedb.connect(f"/tmp/j_ann/db{N}")
t = time.time()
vectors = pa.FixedSizeListArray.from_arrays(pa.array(base.ravel()), 384)
tbl = db.create_table("t", pa.table({"id": np.arange(N), "vector": vectors}), mode="overwrite")
print("write", round(time.time()-t,1), flush=True)
exact = [set(np.argsort(-(base @ q))[:10]) for q in Q]
def bench(label, **kw):
    lat = []; rec = []
    for q, ex in zip(Q, exact):
        t = time.perf_counter()
        s = tbl.search(q).distance_type("cosine").limit(10)
        if "nprobes" in kw: s = s.nprobes(kw["nprobes"])
        if "refine" in kw: s = s.refine_factor(kw["refine"])
        if kw.get("ef"): s = s.ef(kw["ef"])
        r = s.to_arrow()["id"].to_pylist()
        lat.append(time.perf_counter() - t); rec.append(len(ex & set(r)) / 10)
    print(f"{label}: p50 {np.median(lat)*1000:.1f} ms, recall@10 {np.mean(rec):.3f}", flush=True)
bench("flat")
for kind in ("IVF_HNSW_SQ", "IVF_PQ"):
    t = time.time()
    tbl.create_index(metric="cosine", vector_column_name="vector", index_type=kind, replace=True,
                     **({"num_sub_vectors": 48} if kind == "IVF_PQ" else {}))
    print(kind, "build", round(time.time()-t,1), "s", flush=True)
    if kind == "IVF_PQ":
        for nprobes, refine in ((20, None), (20, 10), (50, 10)):
            kw = {"nprobes": nprobes}
            if refine: kw["refine"] = refine
            bench(f"{kind} nprobes {nprobes} refine {refine}", **kw)
    else:
        for nprobes, ef in ((20, None), (20, 100), (50, 200)):
            bench(f"{kind} nprobes {nprobes} ef {ef}", nprobes=nprobes, ef=ef)
