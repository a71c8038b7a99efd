"""Local embeddings three ways, paired: chunks per CPU-second and per second, and SciFact nDCG@10.

Run from the repository root with the local extra and an ONNX copy of all-MiniLM-L6-v2:
    python ../shared/tools/minilm_to_onnx.py /tmp/minilm
    python tests/benchmarks/embed_ways.py --model /tmp/minilm [--docs 300] [--rounds 2] [--quality]

The ways, each in a process of its own, round-robin ``--rounds`` times over the same ``--docs``
SciFact abstracts (title + text, as the cached vectors were made):

- ``batches``: what `lancelot index` did before: batches of 32, one ONNX run on all cores;
- ``one-by-one``: one text per run, one thread per run, a run per core (``local_embed`` now), float;
- ``int8``: the same with the model's int8 copy (``local_embed.quantized``, the default).

CPU seconds are the process's own (``time.process_time``), so a busy machine changes wall time
more than the per-CPU-second figure. ``--quality`` then embeds all 5,183 abstracts and the 1,109
claims each way (a few minutes each) and scores exact cosine search with trec_eval's nDCG@10
(quality.py): the float ways give the published 0.6451 on test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "scifact"
WAYS = ("batches", "one-by-one", "int8")


def configure(way: str, model: str):  # type: ignore[no-untyped-def]
    """A ``LocalEmbedder`` set up the ``way`` way (in this process)."""
    sys.path.insert(0, str(REPO))
    from lancelot_cli import local_embed

    os.environ["LANCELOT_LOCAL_INT8"] = "1" if way == "int8" else "0"
    if way == "batches":
        local_embed.BATCH, local_embed.WORKERS = 32, 1
        return local_embed.LocalEmbedder(f"local:{model}", threads=None)
    return local_embed.LocalEmbedder(f"local:{model}", threads=1)


def abstracts() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    return [(row["_id"], f"{row['title']} {row['text']}") for row in rows]


def speed(way: str, model: str, docs: int) -> dict[str, float]:
    texts = [text for _, text in abstracts()[1000 : 1000 + docs]]
    embedder = configure(way, model)
    embedder.embed(texts[:4])  # loaded, and the int8 copy made, before the clock starts
    cpu, wall = time.process_time(), time.perf_counter()
    embedder.embed(texts)
    return {"per_cpu_s": docs / (time.process_time() - cpu), "per_s": docs / (time.perf_counter() - wall)}


def quality(way: str, model: str) -> dict[str, float]:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import quality as q

    embedder = configure(way, model)
    docs = abstracts()
    matrix = np.array(embedder.embed([text for _, text in docs]), dtype=np.float32)
    queries = q.load_queries(DATA)
    out = {}
    for split in ("test", "train"):
        judged = q.load_qrels(DATA, split)
        vectors = np.array(embedder.embed([queries[qid] for qid in judged]), dtype=np.float32)
        runs = {}
        for qid, vector in zip(judged, vectors, strict=True):
            sims = matrix @ vector
            top = np.argpartition(-sims, 120)[:120]
            runs[qid] = q.trec_order({docs[i][0]: float(sims[i]) for i in top})[:100]
        out[split] = q.evaluate(runs, judged)["ndcg10"]
    return out


def child(way: str, model: str, docs: int, what: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", way, "--model", model, "--docs", str(docs), "--what", what],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="folder made by ../shared/tools/minilm_to_onnx.py")
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quality", action="store_true", help="also SciFact nDCG@10 of each way")
    parser.add_argument("--child", choices=WAYS, help=argparse.SUPPRESS)
    parser.add_argument("--what", default="speed", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        result = speed(opts.child, opts.model, opts.docs) if opts.what == "speed" else quality(opts.child, opts.model)
        print(json.dumps(result))
        return
    runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for _ in range(opts.rounds):
        for way in WAYS:
            runs[way].append(child(way, opts.model, opts.docs, "speed"))
    base = statistics.median(r["per_cpu_s"] for r in runs["batches"])
    print("| way | chunks per CPU-second (each run) | median ×batches | chunks/s (each run) |")
    print("|---|---|---|---|")
    for way in WAYS:
        per_cpu = [r["per_cpu_s"] for r in runs[way]]
        per_s = ", ".join(f"{r['per_s']:.1f}" for r in runs[way])
        print(
            f"| {way} | {', '.join(f'{v:.1f}' for v in per_cpu)} | {statistics.median(per_cpu) / base:.2f}× | {per_s} |"
        )
    if opts.quality:
        print("\n| way | SciFact nDCG@10 test | train |\n|---|---|---|")
        for way in WAYS:
            found = child(way, opts.model, opts.docs, "quality")
            print(f"| {way} | {found['test']:.4f} | {found['train']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
