"""Retrieval quality on BEIR SciFact: lancelot's text (BM25), vector, hybrid and substring search,
scored with trec_eval's nDCG@10 (``ndcg_cut.10``) and Recall@100; then BM25 tuning on train.

Run from the repository root:
    python tests/benchmarks/quality.py [--data ../shared/data/scifact] [--no-tuning] [--no-substring]

1. Checks the metric code: exact cosine search over the cached all-MiniLM-L6-v2 vectors must give
   the README's published reference (test: nDCG@10 0.6451, Recall@100 0.925).
2. Writes one Markdown file per abstract (``# title``, blank line, text; ``<doc id>.md``) and indexes
   them with ``index_folder`` (what ``lancelot index SRC DB --embed --chunk-size 12000`` runs) against
   ``../shared/tools/embed_server.py`` on loopback, so every abstract is one chunk with its vector.
3. Runs every SciFact claim (``text`` only: ``metadata`` names the relevant documents and is never
   read) through ``Engine.search(limit=100)`` as ``text``, ``vector`` and ``hybrid``, and as
   ``text`` against a copy of the table without a full-text index (the engine's substring scan, the
   original algorithm). Hits map to doc ids through their path. Scores are per split (test, train).
4. Tuning (train decides, test is only reported): FTS tokenizer options, title handling, query
   handling, hybrid depth and K, and whether exact identifiers are still the top hit. Every variant
   is an EXPERIMENT done by monkeypatching in this script (``writer.fts_config``, the engine's
   constants, ``Engine._bm25``); the package is not changed. A final table compares the engine
   before commit f06d563 (query as typed, RRF K 60, depth 50), the shipped engine, and the
   combination these rules pick from train numbers.

Prints Markdown tables and writes tests/benchmarks/results/quality.json (git-ignored).
Needs numpy. About 5-8 minutes on 2 cores with tuning; about 2 without.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

from lancelot_cli.wire import to_wire  # noqa: E402 - the engine's replies in their JSON form

DATA = (REPO / ".." / "shared" / "data" / "scifact").resolve()
EMBED_SERVER = (REPO / ".." / "shared" / "tools" / "embed_server.py").resolve()
RESULTS = Path(__file__).resolve().parent / "results" / "quality.json"
MODEL = "all-MiniLM-L6-v2"
DIMENSION = 384
LIMIT = 100
CHUNK_SIZE = 12_000  # the longest abstract (title + text) is 10,130 characters: every abstract stays whole
REFERENCE = {"ndcg10": 0.6451, "recall100": 0.925}  # exact cosine, test split (README; MTEB 0.64508 / 0.925)
TARGETS = {"text": 0.684, "hybrid": 0.716}  # nDCG@10 on test

# Small documents holding identifiers that must stay findable, with near-miss distractors.
IDENTIFIER_DOCS = {
    "ids/settings.md": "# Settings\n\nMAX_SAVED limits how many drafts are kept; the default is 50.",
    "ids/decisions.md": "# Decision record\n\nDEC-0054: store chunks in LanceDB and build the full-text index first.",
    "ids/pricing.md": "# Pricing tables\n\nThe kit_prices table holds one row per kit and currency.",
    "ids/client.md": "# Client set-up\n\nCall createClient() with the base URL before any request.",
    "ids/changelog.md": "# Changelog\n\nProtocol version 2025-06-18 adds structured tool output.",
    # distractors: the parts of the identifiers, but not the identifiers
    "ids/limits.md": "# Limits\n\nThe max number of saved searches is ten; saved drafts past the max are dropped. "
    "Max saved size is 1 MB.",
    "ids/other-decisions.md": "# Other decisions\n\nDEC-0053 and DEC-0055 were rejected in Dec; see the Dec notes.",
    "ids/kits.md": "# Kits\n\nKit prices vary: each kit lists prices per item, and kit prices change yearly.",
    "ids/clients.md": "# Clients\n\nEach client can create a client record; create one client per shop.",
    "ids/releases.md": "# Releases\n\nReleased 2025-05-18, 2024-06-18 and 2025-06-11; the 18 June 2025 build "
    "was withdrawn.",
}
IDENTIFIERS = {
    "MAX_SAVED": "ids/settings.md",
    "DEC-0054": "ids/decisions.md",
    "kit_prices": "ids/pricing.md",
    "createClient": "ids/client.md",
    "2025-06-18": "ids/changelog.md",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- data ---------------------------------------------------------------------------------------


def load_corpus(data: Path) -> dict[str, tuple[str, str]]:
    """doc id -> (title, text)."""
    corpus = {}
    with (data / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
    return corpus


def load_queries(data: Path) -> dict[str, str]:
    """query id -> claim. Only ``text`` is read: ``metadata`` names the relevant documents."""
    queries = {}
    with (data / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                queries[str(row["_id"])] = str(row["text"])
    return queries


def load_qrels(data: Path, split: str) -> dict[str, set[str]]:
    """query id -> relevant doc ids (score > 0)."""
    qrels: dict[str, set[str]] = {}
    lines = (data / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        if line.strip():
            qid, doc_id, score = line.split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(doc_id)
    return qrels


def markdown(title: str, text: str) -> str:
    return f"# {title}\n\n{text}\n"


# -- metrics (trec_eval ndcg_cut.10 and recall_100, binary relevance) ----------------------------


def trec_order(scores: dict[str, float]) -> list[str]:
    """Doc ids the way trec_eval ranks a run: score descending, ties by doc id descending."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def ndcg_at(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    """trec_eval ndcg_cut.k with gains 0/1: DCG = sum rel_i / log2(i + 1), ideal from the qrels."""
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: list[str], relevant: set[str], k: int = 100) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def evaluate(runs: dict[str, list[str]], qrels: dict[str, set[str]], recall_k: int = 100) -> dict[str, Any]:
    """Means over every judged query; a query with no hits (or not run) scores 0 (trec_eval -c)."""
    ndcgs = [ndcg_at(runs.get(qid, []), rel) for qid, rel in qrels.items()]
    recalls = [recall_at(runs.get(qid, []), rel, recall_k) for qid, rel in qrels.items()]
    empty = sum(1 for qid in qrels if not runs.get(qid))
    return {
        "ndcg10": statistics.fmean(ndcgs),
        f"recall{recall_k}": statistics.fmean(recalls),
        "queries": len(qrels),
        "empty": empty,
    }


def reference_check(data: Path, qrels: dict[str, dict[str, set[str]]]) -> dict[str, Any]:
    """Exact cosine over the cached vectors, scored by this module's trec_eval code."""
    import numpy as np

    folder = data / "embeddings" / MODEL
    ids = json.loads((folder / "ids.json").read_text())
    corpus = np.load(folder / "corpus.npy")
    queries = np.load(folder / "queries.npy")
    row = {qid: i for i, qid in enumerate(ids["queries"])}
    doc_ids = ids["corpus"]
    out: dict[str, Any] = {}
    for split, judged in qrels.items():
        runs = {}
        for qid in judged:
            sims = corpus @ queries[row[qid]]
            top = np.argpartition(-sims, LIMIT)[: LIMIT + 20]  # a margin so ties at the cut are kept
            runs[qid] = trec_order({doc_ids[i]: float(sims[i]) for i in top})[:LIMIT]
        out[split] = evaluate(runs, judged)
    test = out["test"]
    out["matches_reference"] = (
        abs(test["ndcg10"] - REFERENCE["ndcg10"]) < 5e-4 and abs(test["recall100"] - REFERENCE["recall100"]) < 5e-4
    )
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# -- the embeddings server (a child process on loopback) ---------------------------------------


class EmbedServerProcess:
    """``embed_server.py --port 0`` as a child process; ``url`` is its OpenAI base URL."""

    def __init__(self, script: Path = EMBED_SERVER, *args: str, timeout: float = 120.0) -> None:
        self.script, self.args, self.timeout = script, args, timeout
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self._stderr: Any = None

    def __enter__(self) -> Self:
        if not self.script.is_file():
            raise SystemExit(f"{self.script} not found; pass --embed-server")
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, str(self.script), "--port", "0", *self.args],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(self.timeout)
        match = re.search(r"listening on (http://\S+)", line[0]) if line else None
        if not match:
            self._stderr.seek(0)
            self.__exit__(None, None, None)
            raise SystemExit(f"embed_server.py did not start: {self._stderr.read()[-2000:]!r}")
        self.url = match.group(1)
        return self

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(self.url.rsplit("/v1", 1)[0] + "/stats", timeout=10) as reply:
            return json.loads(reply.read())

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        if self.proc is not None and self.proc.stdout:
            self.proc.stdout.close()


def full_text_embedder(embed: Callable[[list[str]], list[list[float]]], markdowns: list[str]):  # type: ignore[no-untyped-def]
    """``embed``, but a text the indexer cut at MAX_EMBED_CHARS is sent whole.

    embed_server.py serves cached vectors only for whole abstracts, and 2 abstracts are longer than
    the indexer's 8,000-character embedding cut. The cached vectors were made from the first 256
    word pieces (far fewer than 8,000 characters), so the whole text's vector is the vector the
    model gives the cut text: this changes no number, it only lets the cache answer.
    """
    from lancelot_cli.indexer.embedding import MAX_EMBED_CHARS

    whole = {m.strip()[:MAX_EMBED_CHARS]: m.strip() for m in markdowns if len(m.strip()) > MAX_EMBED_CHARS}

    def wrapped(texts: list[str]) -> list[list[float]]:
        return embed([whole.get(t, t) for t in texts])

    return wrapped


# -- engine plumbing ----------------------------------------------------------------------------


def make_engine(db: Path, url: str | None, config: Path, *, memo: dict[str, list[float]] | None = None):  # type: ignore[no-untyped-def]
    """An Engine over ``db`` with the embeddings server at ``url`` (no key when None).

    Query vectors are fetched through the real OpenAIEmbedder once and kept in ``memo``.
    """
    from lancelot_cli import settings as settings_module
    from lancelot_cli.credentials import FoundKey
    from lancelot_cli.engine import Engine
    from lancelot_cli.providers import OpenAIEmbedder

    env = {"LANCEDB_PATH": str(db), "LANCELOT_CONFIG_DIR": str(config), "EMBEDDING_MODEL": MODEL}
    if url:
        env.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-bench")
    settings = settings_module.load(environ=env)
    cache = memo if memo is not None else {}

    def make_embedder(key: FoundKey):  # type: ignore[no-untyped-def]
        real = OpenAIEmbedder(key.value, settings.embedding_model, settings.openai_base_url).embed

        def embed(texts: list[str]) -> list[list[float]]:
            missing = [t for t in texts if t not in cache]
            if missing:
                cache.update(zip(missing, real(missing), strict=True))
            return [cache[t] for t in texts]

        return embed

    key = FoundKey("sk-bench", "env") if url else None
    return Engine(settings, find_key=lambda: key, make_embedder=make_embedder)


def doc_id_of(source: str) -> str:
    return Path(source).stem


def run_engine(
    engine: Any,
    queries: dict[str, str],
    search_type: str,
    limit: int = LIMIT,
    *,
    expect_type: str | None = None,
    expect_ranking: str | None = None,
    label: str = "",
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Every query through ``engine.search``; doc ids in rank order (first chunk of a doc counts)."""
    runs: dict[str, list[str]] = {}
    latencies = []
    notes: dict[str, int] = {}
    errors: dict[str, list[str]] = {}
    started = time.perf_counter()
    for n, (qid, text) in enumerate(queries.items(), start=1):
        t0 = time.perf_counter()
        try:
            reply = to_wire(engine.search(text, limit=limit, search_type=search_type))
        except Exception as exc:  # noqa: BLE001 - counted; a variant may reject some queries
            errors.setdefault(" ".join(str(exc).split())[:200], []).append(qid)
            runs[qid] = []
            continue
        latencies.append(time.perf_counter() - t0)
        if expect_type and reply["searchType"] != expect_type:
            raise SystemExit(f"{label}: asked {search_type}, got {reply['searchType']} ({reply.get('note')})")
        if expect_ranking and reply["ranking"] != expect_ranking:
            raise SystemExit(f"{label}: expected ranking {expect_ranking}, got {reply['ranking']}")
        if reply.get("note"):
            notes[reply["note"]] = notes.get(reply["note"], 0) + 1
        ranked: list[str] = []
        for hit in reply["hits"]:
            doc = doc_id_of(hit["source"])
            if doc not in ranked:
                ranked.append(doc)
        runs[qid] = ranked
        if n % 250 == 0:
            log(f"  {label or search_type}: {n}/{len(queries)} queries, {time.perf_counter() - started:.0f} s")
    info = {
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p95_ms": percentile(latencies, 0.95) * 1000,
        "seconds": time.perf_counter() - started,
        "notes": notes,
        "errors": {message: len(qids) for message, qids in errors.items()},
    }
    if len(errors) and sum(len(q) for q in errors.values()) == len(queries):
        raise RuntimeError(f"{label}: every query failed, e.g. {next(iter(errors))}")
    return runs, info


def scored(runs: dict[str, list[str]], qrels: dict[str, dict[str, set[str]]], recall_k: int = LIMIT) -> dict[str, Any]:
    return {split: evaluate(runs, judged, recall_k) for split, judged in qrels.items()}


Runs = dict[str, list[str]]


def paired(pairs: list[tuple[Runs, Runs]], judged: dict[str, set[str]], resamples: int = 2000) -> dict[str, Any]:
    """Per-query nDCG@10 difference (variant - base; averaged over the given (variant, base) run
    pairs, e.g. text and hybrid), its mean and a paired bootstrap 95% interval over the queries."""
    import numpy as np

    diffs = np.mean(
        [
            [ndcg_at(run.get(q, []), rel) - ndcg_at(base.get(q, []), rel) for q, rel in judged.items()]
            for run, base in pairs
        ],
        axis=0,
    )
    draws = np.random.default_rng(0).integers(0, len(diffs), (resamples, len(diffs)))
    low, high = np.percentile(diffs[draws].mean(axis=1), [2.5, 97.5])
    return {
        "delta": float(diffs.mean()),
        "ci95": [float(low), float(high)],
        "better": int((diffs > 1e-12).sum()),
        "worse": int((diffs < -1e-12).sum()),
    }


def versus(variant: dict[str, Runs], base: dict[str, Runs], qrels: dict[str, dict[str, set[str]]]) -> dict[str, Any]:
    """``paired`` per mode and, with several modes, for their per-query mean ("both"), per split."""
    modes = [m for m in variant if m in base]
    out = {m: {split: paired([(variant[m], base[m])], judged) for split, judged in qrels.items()} for m in modes}
    if len(modes) > 1:
        out["both"] = {split: paired([(variant[m], base[m]) for m in modes], judged) for split, judged in qrels.items()}
    return out


def significant(row: dict[str, Any], mode: str) -> bool:
    """The train gain over shipped has a 95% interval above zero."""
    return row.get("vs_shipped", {}).get(mode, {}).get("train", {}).get("ci95", [0.0])[0] > 0


# -- experiments (monkeypatches, labelled; nothing in the package changes) ----------------------


@contextlib.contextmanager
def patched(target: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, old)


def fts_factory(options: dict[str, Any]) -> Callable[[], Any]:
    def fts_config():  # type: ignore[no-untyped-def]
        from lancedb.index import FTS

        return FTS(**options)

    return fts_config


def write_variant(
    db: Path, rows: list[dict[str, Any]], fts_options: dict[str, Any] | None, with_vectors: bool
) -> float:
    """A table written by TableWriter with ``writer.fts_config`` patched to ``FTS(**fts_options)``."""
    from lancelot_cli.storage.write import table as writer

    started = time.perf_counter()
    factory = fts_factory(fts_options) if fts_options is not None else writer.fts_config
    with patched(writer, "fts_config", factory):
        if with_vectors:
            writer.TableWriter(str(db), "documents").write(rows, model=MODEL, dimension=DIMENSION)
        else:
            writer.TableWriter(str(db), "documents").write(
                [{k: v for k, v in r.items() if k != "vector"} for r in rows]
            )
    return time.perf_counter() - started


def text_rows(rows: list[dict[str, Any]], transform: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    from lancelot_cli.indexer import chunk_hash

    out = []
    for row in rows:
        text = transform(row)
        out.append({**row, "text": text, "hash": chunk_hash(row["title"], text)})
    return out


def chunked_rows(corpus: dict[str, tuple[str, str]], size: int, title_every_chunk: bool) -> list[dict[str, Any]]:
    """Rows as index_folder makes them at ``size`` (via ``rows_for``); optionally every chunk after
    the first starts with the ``# title`` line too (a candidate change to ``rows_for``)."""
    from lancelot_cli.indexer import chunk_hash, rows_for
    from lancelot_cli.indexer.sources import Document

    rows = []
    for doc_id, (title, text) in corpus.items():
        for row in rows_for(Document(f"{doc_id}.md", title, markdown(title, text)), size):
            if title_every_chunk and row["chunk"] > 0:
                row["text"] = f"# {title}\n\n{row['text']}"
                row["hash"] = chunk_hash(title, row["text"])
            rows.append(row)
    return rows


# Query handling experiments replace ``Engine._bm25(self, ask, limit)``: the engine's one call into
# BM25 (``ask`` holds the query, its words, the table, text column, columns and row filter).
# None = the engine's own handling, as shipped.
Bm25 = Callable[[Any, Any, int], list[dict[str, Any]]]
_EDGE = "\"'`.,;:!?()[]{}<>"
_CONNECTED = re.compile(r"[A-Za-z0-9][_\-.:/#][A-Za-z0-9]|[a-z][A-Z]")
_LETTER_DIGIT = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")


def identifier_tokens(query: str, letters_digits: bool = False) -> list[str]:
    """Query tokens that look like identifiers: joined by _ - . : / # (MAX_SAVED, DEC-0054,
    2025-06-18, v1.2), camelCase (createClient), optionally letters mixed with digits (IL6, p53)."""
    found = []
    for raw in query.split():
        token = raw.strip(_EDGE)
        if _CONNECTED.search(token) or (letters_digits and _LETTER_DIGIT.search(token)):
            found.append(token.casefold())
    return found


def _fts(ask: Any, query: str, limit: int) -> list[dict[str, Any]]:
    # With the engine's weighted title/heading/path columns, so a variant differs only in its own change.
    return ask.tbl.fts(query, ask.text_col, limit, ask.columns, ask.row_filter, getattr(ask, "boosts", None))


def rewrite(transform: Callable[[str], str]) -> Bm25:
    """BM25 on the rewritten query; ``rewrite(lambda q: q)`` is the engine before f06d563 (as typed)."""

    def bm25(self: Any, ask: Any, limit: int) -> list[dict[str, Any]]:
        return _fts(ask, transform(ask.query), limit)

    return bm25


def identifier_first(
    letters_digits: bool = False,
    depth: int = 50,
    lookup_only: bool = False,
    transform: Callable[[str], str] | None = None,
) -> Bm25:
    """BM25 as before, but among the top max(limit, depth) hits the ones that contain the query's
    identifier-like tokens literally (case-insensitive) move to the front; BM25 order otherwise.

    With ``lookup_only``, only for queries where identifier-like tokens are at least half of the
    words (a lookup such as "MAX_SAVED" or "DEC-0054 status"), not for sentences that mention one.
    """

    def bm25(self: Any, ask: Any, limit: int) -> list[dict[str, Any]]:
        asked = transform(ask.query) if transform else ask.query
        tokens = identifier_tokens(ask.query, letters_digits)
        if lookup_only and len(tokens) * 2 < max(1, len(ask.words)):
            tokens = []
        if not tokens:
            return _fts(ask, asked, limit)
        rows = _fts(ask, asked, max(limit, depth))

        def literal(row: dict[str, Any]) -> int:
            text = str(row.get(ask.text_col) or "").casefold()
            return sum(1 for token in tokens if token in text)

        return sorted(rows, key=lambda row: -literal(row))[:limit]  # stable: BM25 order within a group

    return bm25


def once(query: str) -> str:
    """Each query word once (the engine's query_words); a query with a double quote is left as typed."""
    return query if '"' in query else " ".join(_query_words(query))


SHIPPED_QUERY = "shipped: the engine's own (Engine._bm25)"
BEFORE_QUERY = "as typed (the engine before f06d563)"
QUERY_VARIANTS: dict[str, Bm25 | None] = {
    SHIPPED_QUERY: None,
    BEFORE_QUERY: rewrite(lambda q: q),
    "punctuation -> spaces (no phrases)": rewrite(lambda q: re.sub(r"[^\w\s]", " ", q)),
    "each word once (quoted queries as typed)": rewrite(once),
    "identifier-first re-rank, every query": identifier_first(),
    "identifier-first re-rank, every query, + letter/digit tokens": identifier_first(True),
    "identifier-first re-rank, lookups only": identifier_first(lookup_only=True),
    "each word once + identifier-first, lookups only": identifier_first(lookup_only=True, transform=once),
}


def bm25_patch(variant: Bm25 | None):  # type: ignore[no-untyped-def]
    """Context manager: ``engine.ranking.bm25`` replaced by ``variant`` (None: left as shipped)."""
    from lancelot_cli.engine import ranking

    if variant is None:
        return contextlib.nullcontext()
    return patched(ranking, "bm25", lambda ask, limit: variant(None, ask, limit))


def _query_words(q: str) -> list[str]:
    from lancelot_cli.textmatch import query_words

    return query_words(q)


def identifier_check(
    tmp: Path,
    corpus: dict[str, tuple[str, str]],
    fts_options: dict[str, Any] | None,
    config: Path,
    name: str,
    bm25: Bm25 | None = None,
) -> dict[str, Any]:
    """Index the SciFact abstracts plus IDENTIFIER_DOCS (text only) and search each identifier.

    Returns {identifier: rank of the document that holds it (1 = top hit), or None}.
    """
    from lancelot_cli.indexer import rows_for
    from lancelot_cli.indexer.sources import Document, markdown_title

    rows = []
    for doc_id, (title, text) in corpus.items():
        rows.extend(rows_for(Document(f"{doc_id}.md", title, markdown(title, text)), CHUNK_SIZE))
    for path, text in IDENTIFIER_DOCS.items():
        rows.extend(rows_for(Document(path, markdown_title(text) or path, text), CHUNK_SIZE))
    db = tmp / f"ids-{name}"
    write_variant(db, rows, fts_options, with_vectors=False)
    engine = make_engine(db, None, config)
    ranks: dict[str, Any] = {}
    with bm25_patch(bm25):
        for ident, path in IDENTIFIERS.items():
            try:
                reply = to_wire(engine.search(ident, limit=10, search_type="text"))
            except Exception as exc:  # noqa: BLE001 - reported
                ranks[ident] = f"error: {exc}"
                continue
            sources = [h["source"] for h in reply["hits"]]
            ranks[ident] = sources.index(path) + 1 if path in sources else None
        try:
            phrase = to_wire(engine.search('"full-text index"', limit=5, search_type="text"))
        except Exception as exc:  # noqa: BLE001 - e.g. no positions in the index
            phrase = {"hits": [], "error": str(exc)}
        stop_words = to_wire(engine.search("the of and", limit=5, search_type="text"))
    found = sum(1 for r in ranks.values() if r == 1)
    return {
        "ranks": ranks,
        "top1": found,
        "of": len(IDENTIFIERS),
        "phrase_query_ok": bool(phrase["hits"]) and phrase["hits"][0]["source"] == "ids/decisions.md",
        "stop_word_query_hits": stop_words["count"],
    }


# -- main ---------------------------------------------------------------------------------------


FTS_VARIANTS: list[tuple[str, dict[str, Any] | None]] = [
    ("shipped: writer.fts_config()", None),
    ("with_position=False", {"with_position": False}),
    ("stem=False", {"with_position": True, "stem": False}),
    ("remove_stop_words=False", {"with_position": True, "remove_stop_words": False}),
    ("ascii_folding=False", {"with_position": True, "ascii_folding": False}),
    (
        "lower case only (no stem, stop words, folding)",
        {"with_position": True, "stem": False, "remove_stop_words": False, "ascii_folding": False},
    ),
    ("base_tokenizer=whitespace", {"with_position": True, "base_tokenizer": "whitespace"}),
    ("base_tokenizer=icu", {"with_position": True, "base_tokenizer": "icu"}),
    (
        "remove_stop_words=False, base_tokenizer=icu",
        {"with_position": True, "remove_stop_words": False, "base_tokenizer": "icu"},
    ),
    ("base_tokenizer=ngram (3)", {"with_position": False, "base_tokenizer": "ngram"}),
]
PARTS = ("fts", "title", "query", "hybrid", "recommended")
HYBRID_DEPTHS = (20, 50, 100, 200)
HYBRID_KS = (10, 30, 60, 100)
HYBRID_LIMIT = 20  # the server's default limit; depth only matters when it is above the limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"SciFact folder (default {DATA})")
    parser.add_argument("--embed-server", type=Path, default=EMBED_SERVER, help="embed_server.py to run")
    parser.add_argument("--no-tuning", action="store_true", help="skip the tuning experiments")
    parser.add_argument("--no-substring", action="store_true", help="skip the (slow) substring scan")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"tuning parts to run (default all: {','.join(PARTS)})"
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        help="smoke test: only the first N judged queries of each split (numbers mean nothing)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    opts = parser.parse_args()
    data = opts.data.resolve()
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/train.tsv"):
        if not (data / name).is_file():
            parser.error(f"{data / name} not found; pass --data")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

    import lancedb
    import numpy as np  # noqa: F401 - needed by the reference check and the server

    from lancelot_cli import __version__
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.providers import OpenAIEmbedder

    started = time.perf_counter()
    corpus = load_corpus(data)
    all_queries = load_queries(data)
    qrels = {split: load_qrels(data, split) for split in ("test", "train")}
    if opts.sample:
        qrels = {split: dict(list(judged.items())[: opts.sample]) for split, judged in qrels.items()}
    queries = {qid: all_queries[qid] for split in ("test", "train") for qid in qrels[split]}
    log(
        f"{len(corpus)} abstracts, {len(queries)} judged queries (test {len(qrels['test'])}, "
        f"train {len(qrels['train'])})"
    )

    ref = reference_check(
        data, qrels if not opts.sample else {split: load_qrels(data, split) for split in ("test", "train")}
    )
    log(
        f"reference check (exact cosine, test): nDCG@10 {ref['test']['ndcg10']:.4f}, "
        f"Recall@100 {ref['test']['recall100']:.4f} -> {'OK' if ref['matches_reference'] else 'MISMATCH'}"
    )
    if not ref["matches_reference"]:
        raise SystemExit("the metric code does not reproduce the published reference; fix it first")

    results: dict[str, Any] = {"reference_check": ref}
    with (
        tempfile.TemporaryDirectory(prefix="lancelot-quality-") as tmp_name,
        EmbedServerProcess(opts.embed_server) as server,
    ):
        tmp = Path(tmp_name)
        config = tmp / "config"
        config.mkdir()
        src, db = tmp / "scifact", tmp / "db"
        src.mkdir()
        texts = []
        for doc_id, (title, text) in corpus.items():
            texts.append(markdown(title, text))
            (src / f"{doc_id}.md").write_text(texts[-1], encoding="utf-8")
        # The same variables `lancelot index --embed` reads.
        os.environ.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench", EMBEDDING_MODEL=MODEL)
        embed = full_text_embedder(OpenAIEmbedder("sk-bench", MODEL, server.url, timeout=60.0).embed, texts)
        t0 = time.perf_counter()
        report = index_folder(src, str(db), chunk_size=CHUNK_SIZE, embed=embed, model=MODEL)
        index_s = time.perf_counter() - t0
        if report.skipped or report.chunks != len(corpus) or report.embedded != len(corpus):
            raise SystemExit(f"unexpected index report: {report.as_dict()}")
        results["index"] = {
            "files": report.files,
            "chunks": report.chunks,
            "embedded": report.embedded,
            "truncated_for_embedding": report.truncated,
            "chunk_size": CHUNK_SIZE,
            "seconds": index_s,
            "server_stats": server.stats(),
        }
        log(
            f"indexed {report.files} files -> {report.chunks} chunks, {report.embedded} embedded "
            f"({report.truncated} cut at 8,000 chars for embedding) in {index_s:.1f} s"
        )

        # A copy of the same rows with no full-text index: the engine falls back to its substring scan.
        plain = tmp / "plain"
        source_table = lancedb.connect(str(db)).open_table("documents")
        lancedb.connect(str(plain)).create_table("documents", data=source_table.to_arrow())
        base_rows = source_table.to_arrow().to_pylist()

        memo: dict[str, list[float]] = {}
        engine = make_engine(db, server.url, config, memo=memo)
        main_rows = []
        modes = [
            ("text", "text", "text", "bm25"),
            ("vector", "vector", "vector", "distance"),
            ("hybrid", "hybrid", "hybrid", "rrf"),
        ]
        for label, asked, expect, ranking in modes:
            runs, info = run_engine(engine, queries, asked, expect_type=expect, expect_ranking=ranking, label=label)
            main_rows.append({"mode": label, **scored(runs, qrels), **info})
        if not opts.no_substring:
            plain_engine = make_engine(plain, None, config)
            runs, info = run_engine(
                plain_engine, queries, "text", expect_type="text", expect_ranking="substring", label="substring scan"
            )
            main_rows.append({"mode": "substring scan (no FTS index)", **scored(runs, qrels), **info})
        results["main"] = main_rows

        if not opts.no_tuning:
            parts = {p.strip() for p in opts.parts.split(",") if p.strip()}
            results["tuning"] = tuning(tmp, config, corpus, queries, qrels, base_rows, server.url, memo, db, parts)
        results["embed_server_stats"] = server.stats()

    import importlib.metadata as md

    results["meta"] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "lancelot": __version__,
        "lancedb": md.version("lancedb"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "data": str(data),
        "limit": LIMIT,
        "model": MODEL,
        "seconds": time.perf_counter() - started,
        "targets_test_ndcg10": TARGETS,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print_report(results)
    print(f"\nResults written to {opts.output} ({results['meta']['seconds']:.0f} s)")
    misses = [
        f"{r['mode']} {r['test']['ndcg10']:.4f} < {TARGETS[r['mode']]}"
        for r in results["main"]
        if r["mode"] in TARGETS and not meets(r["test"]["ndcg10"], TARGETS[r["mode"]])
    ]
    if misses:
        print(f"\nBELOW TARGET: {'; '.join(misses)}")
        sys.exit(1)


def tuning(
    tmp: Path,
    config: Path,
    corpus: dict[str, tuple[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, set[str]]],
    base_rows: list[dict[str, Any]],
    url: str,
    memo: dict[str, list[float]],
    shipped_db: Path,
    parts: set[str],
) -> dict[str, Any]:
    from lancelot_cli.engine import ranking as engine_module  # snippet, RRF_K, HYBRID_DEPTH

    out: dict[str, Any] = {"fts": [], "title": [], "query": [], "hybrid": [], "recommended": [], "parts": sorted(parts)}
    # Speed only: snippets do not affect ranking, and at limit 100 the engine's snippet() takes
    # ~90% of a search (quadratic in the number of query-word matches), so the tuning runs use a
    # plain cut. The main table above used the real code.
    with patched(engine_module, "snippet", lambda text, words, size=300: text[:size]):
        return _tuning(out, tmp, config, corpus, queries, qrels, base_rows, url, memo, shipped_db, parts)


def _tuning(
    out: dict[str, Any],
    tmp: Path,
    config: Path,
    corpus: dict[str, tuple[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, set[str]]],
    base_rows: list[dict[str, Any]],
    url: str,
    memo: dict[str, list[float]],
    shipped_db: Path,
    parts: set[str],
) -> dict[str, Any]:
    from lancelot_cli.engine import ranking as engine_module  # snippet, RRF_K, HYBRID_DEPTH

    kept: dict[tuple[str, str], dict[str, Runs]] = {}  # runs in memory only, for paired comparisons

    def compare(section: str, rows: list[dict[str, Any]], base_name: str) -> None:
        base = kept.get((section, base_name))
        for row in rows:
            variant = kept.get((section, row["name"]))
            if base and variant and row["name"] != base_name:
                row["vs_shipped"] = versus(variant, base, qrels)

    # 1. FTS tokenizer options: the same rows (with vectors), text and hybrid at limit 100.
    for n, (name, options) in enumerate(FTS_VARIANTS if "fts" in parts else []):
        db = tmp / f"fts{n}"
        try:
            build_s = write_variant(db, base_rows, options, with_vectors=True)
        except Exception as exc:  # noqa: BLE001 - an option lancedb rejects is a result too
            out["fts"].append({"name": name, "options": options, "error": str(exc)})
            log(f"fts variant {name}: {exc}")
            continue
        engine = make_engine(db, url, config, memo=memo)
        row: dict[str, Any] = {"name": name, "options": options or {"with_position": True}, "build_s": build_s}
        for mode in ("text", "hybrid"):
            try:
                runs, info = run_engine(engine, queries, mode, expect_type=mode, label=f"{name} / {mode}")
                kept.setdefault(("fts", name), {})[mode] = runs
                row[mode] = {**scored(runs, qrels), "p50_ms": info["p50_ms"], "errors": info["errors"]}
            except Exception as exc:  # noqa: BLE001
                row[mode] = {"error": " ".join(str(exc).split())[:300]}
        row["identifiers"] = identifier_check(tmp, corpus, options, config, f"fts{n}")
        row["disk_mb"] = sum(p.stat().st_size for p in db.rglob("*") if p.is_file()) / 1e6
        out["fts"].append(row)
        log(f"fts variant {name}: train text {row['text'].get('train', {}).get('ndcg10', float('nan')):.4f}")
        shutil.rmtree(db, ignore_errors=True)

    compare("fts", out["fts"], FTS_VARIANTS[0][0])

    # 2. Title handling (shipped FTS options, text search; doc-level scores).
    one = lambda r: r["text"]  # noqa: E731
    no_title = lambda r: r["text"].split("\n\n", 1)[1] if r["text"].startswith("# ") else r["text"]  # noqa: E731
    twice = lambda r: f"# {r['title']}\n\n{r['title']}\n\n{no_title(r)}"  # noqa: E731
    variants: list[tuple[str, list[dict[str, Any]]]] = [
        ("one chunk per abstract, '# title' line in the chunk (shipped)", text_rows(base_rows, one)),
        ("one chunk per abstract, no title in the text", text_rows(base_rows, no_title)),
        ("one chunk per abstract, title twice (boost)", text_rows(base_rows, twice)),
        (
            "default chunk size 1200, title line in the first chunk only (shipped)",
            chunked_rows(corpus, 1200, title_every_chunk=False),
        ),
        (
            "default chunk size 1200, '# title' line prefixed to every chunk",
            chunked_rows(corpus, 1200, title_every_chunk=True),
        ),
    ]
    title_base = ""
    for n, (name, rows) in enumerate(variants if "title" in parts else []):
        db = tmp / f"title{n}"
        write_variant(db, rows, None, with_vectors=False)
        runs, info = run_engine(make_engine(db, None, config), queries, "text", expect_type="text", label=name)
        kept[("title", name)] = {"text": runs}
        out["title"].append({"name": name, "rows": len(rows), "text": scored(runs, qrels), "p50_ms": info["p50_ms"]})
        if "(shipped)" in name:
            title_base = name
        elif title_base:
            compare("title", out["title"][-1:], title_base)
        log(f"title variant {name}: train {out['title'][-1]['text']['train']['ndcg10']:.4f}")
        shutil.rmtree(db, ignore_errors=True)

    # 3. Query handling on the shipped table: the engine's query string is rewritten before BM25.
    engine = make_engine(shipped_db, url, config, memo=memo)
    for name, wrapper in QUERY_VARIANTS.items() if "query" in parts else []:
        row = {"name": name}
        with bm25_patch(wrapper):
            for mode in ("text", "hybrid"):
                runs, info = run_engine(engine, queries, mode, expect_type=mode, label=f"query {name} / {mode}")
                kept.setdefault(("query", name), {})[mode] = runs
                row[mode] = scored(runs, qrels)
        row["identifiers"] = identifier_check(tmp, corpus, None, config, "query", wrapper)
        out["query"].append(row)
        log(f"query variant {name}: train text {row['text']['train']['ndcg10']:.4f}")

    compare("query", out["query"], SHIPPED_QUERY)

    # 4. Hybrid depth and K at the server's default limit (20): nDCG@10 and Recall@20.
    for depth in HYBRID_DEPTHS if "hybrid" in parts else ():
        for k in HYBRID_KS:
            with patched(engine_module, "HYBRID_DEPTH", depth), patched(engine_module, "RRF_K", k):
                runs, info = run_engine(
                    engine, queries, "hybrid", HYBRID_LIMIT, expect_type="hybrid", label=f"hybrid depth {depth} K {k}"
                )
            name = f"depth {depth}, K {k}"
            kept[("hybrid", name)] = {"hybrid": runs}
            out["hybrid"].append(
                {
                    "name": name,
                    "depth": depth,
                    "k": k,
                    "shipped": depth == engine_module.HYBRID_DEPTH and k == engine_module.RRF_K,
                    "limit": HYBRID_LIMIT,
                    **scored(runs, qrels, HYBRID_LIMIT),
                    "p50_ms": info["p50_ms"],
                }
            )
        log(f"hybrid depth {depth}: done")
    compare("hybrid", out["hybrid"], f"depth {engine_module.HYBRID_DEPTH}, K {engine_module.RRF_K}")

    # 5. The recommended combination, picked by rules that read train numbers only (pick_recommended).
    if "recommended" in parts and out["fts"] and out["query"] and out["hybrid"]:
        pick = pick_recommended(out)
        shipped = {**SHIPPED, "depth": engine_module.HYBRID_DEPTH, "k": engine_module.RRF_K}
        configs = (
            ("before f06d563 (query as typed, K 60, depth 50)", BEFORE),
            ("shipped", shipped),
            ("recommended (picked on train)", pick),
        )
        out["recommended"] = [
            evaluate_config(tmp, config, corpus, queries, qrels, base_rows, url, memo, name, kept=kept, **cfg)
            for name, cfg in configs
        ]
        compare("config", out["recommended"], "shipped")
    return out


SHIPPED_FTS = "shipped: writer.fts_config()"
SHIPPED = {"fts_name": SHIPPED_FTS, "fts_options": None, "query_name": SHIPPED_QUERY}
BEFORE = {"fts_name": SHIPPED_FTS, "fts_options": None, "query_name": BEFORE_QUERY, "depth": 50, "k": 60}


def pick_recommended(out: dict[str, Any]) -> dict[str, Any]:
    """Train numbers only; a change from what ships must earn its place: its train gain over the
    shipped choice needs a paired bootstrap 95% interval above zero (text and hybrid nDCG@10
    averaged per query; hybrid alone for depth x K), else the shipped choice stays.
    FTS options: also a quoted phrase must still work and a stop-word-only query find nothing.
    Query handling: also every identifier must be the top hit. Among several, the highest train mean."""

    def train(row: dict[str, Any], mode: str) -> float:
        return float(row[mode]["train"]["ndcg10"])

    fts_ok = [
        r
        for r in out["fts"][1:]
        if "error" not in r
        and "error" not in r["text"]
        and "error" not in r["hybrid"]
        and r["identifiers"]["phrase_query_ok"]
        and r["identifiers"]["stop_word_query_hits"] == 0
        and significant(r, "both")
    ]
    fts = max(fts_ok, key=lambda r: train(r, "text") + train(r, "hybrid")) if fts_ok else out["fts"][0]
    query_ok = [
        r for r in out["query"][1:] if r["identifiers"]["top1"] == r["identifiers"]["of"] and significant(r, "both")
    ]
    query = max(query_ok, key=lambda r: train(r, "text") + train(r, "hybrid")) if query_ok else out["query"][0]
    shipped_hybrid = next(r for r in out["hybrid"] if r["shipped"])
    hybrid_ok = [r for r in out["hybrid"] if not r["shipped"] and significant(r, "hybrid")]
    hybrid = max(hybrid_ok, key=lambda r: r["train"]["ndcg10"]) if hybrid_ok else shipped_hybrid
    options = None if fts["name"] == SHIPPED["fts_name"] else fts["options"]
    return {
        "fts_name": fts["name"],
        "fts_options": options,
        "query_name": query["name"],
        "depth": hybrid["depth"],
        "k": hybrid["k"],
    }


def evaluate_config(
    tmp: Path,
    config: Path,
    corpus: dict[str, tuple[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, set[str]]],
    base_rows: list[dict[str, Any]],
    url: str,
    memo: dict[str, list[float]],
    name: str,
    *,
    fts_name: str,
    fts_options: dict[str, Any] | None,
    query_name: str,
    depth: int,
    k: int,
    kept: dict[tuple[str, str], dict[str, Runs]] | None = None,
) -> dict[str, Any]:
    """One configuration end to end: its table, its query handling, its fusion constants."""
    from lancelot_cli.engine import ranking as engine_module  # snippet, RRF_K, HYBRID_DEPTH

    db = tmp / f"config-{abs(hash(name))}"
    write_variant(db, base_rows, fts_options, with_vectors=True)
    engine = make_engine(db, url, config, memo=memo)
    wrapper = QUERY_VARIANTS[query_name]
    row: dict[str, Any] = {
        "name": name,
        "fts": fts_name,
        "fts_options": fts_options,
        "query": query_name,
        "depth": depth,
        "k": k,
    }
    with bm25_patch(wrapper), patched(engine_module, "HYBRID_DEPTH", depth), patched(engine_module, "RRF_K", k):
        for mode in ("text", "hybrid"):
            runs, _ = run_engine(engine, queries, mode, expect_type=mode, label=f"{name} / {mode}")
            if kept is not None:
                kept.setdefault(("config", name), {})[mode] = runs
            row[mode] = scored(runs, qrels)
        runs, _ = run_engine(engine, queries, "hybrid", HYBRID_LIMIT, expect_type="hybrid", label=f"{name} / hybrid@20")
        row["hybrid_limit20"] = scored(runs, qrels, HYBRID_LIMIT)
    row["identifiers"] = identifier_check(tmp, corpus, fts_options, config, f"config-{abs(hash(name))}", wrapper)
    shutil.rmtree(db, ignore_errors=True)
    log(f"{name}: train text {row['text']['train']['ndcg10']:.4f}, hybrid {row['hybrid']['train']['ndcg10']:.4f}")
    return row


def meets(value: float, target: float) -> bool:
    """The targets are the README's figures, given to 3 decimals: compare at that precision."""
    return round(value, 3) >= target


def _fmt(value: Any, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "—"


def print_report(results: dict[str, Any]) -> None:
    meta = results["meta"]
    ref = results["reference_check"]
    print(
        f"\n## SciFact retrieval quality — lancelot {meta['lancelot']}, lancedb {meta['lancedb']}, "
        f"{MODEL} vectors, limit {LIMIT}\n"
    )
    print(
        f"Metric check: exact cosine over the cached vectors gives test nDCG@10 {ref['test']['ndcg10']:.4f} / "
        f"Recall@100 {ref['test']['recall100']:.4f} (published {REFERENCE['ndcg10']} / {REFERENCE['recall100']}); "
        f"train {ref['train']['ndcg10']:.4f} / {ref['train']['recall100']:.4f}.\n"
    )
    print(
        "| search | test nDCG@10 | test R@100 | train nDCG@10 | train R@100 | p50 ms | p95 ms | errors "
        "| target (test) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results["main"]:
        target = TARGETS.get(r["mode"])
        verdict = "" if target is None else f"≥ {target}: {'met' if meets(r['test']['ndcg10'], target) else 'MISSED'}"
        print(
            f"| {r['mode']} | {_fmt(r['test']['ndcg10'])} | {_fmt(r['test']['recall100'], 3)} | "
            f"{_fmt(r['train']['ndcg10'])} | {_fmt(r['train']['recall100'], 3)} | {r['p50_ms']:.1f} | "
            f"{r['p95_ms']:.1f} | {sum(r['errors'].values())} | {verdict} |"
        )
    tuning = results.get("tuning")
    if not tuning:
        return
    print_tuning(tuning)


def print_tuning(tuning: dict[str, Any]) -> None:
    if tuning["fts"]:
        print_fts(tuning["fts"])
    if tuning["title"]:
        print_title(tuning["title"])
    if tuning["query"]:
        print_query(tuning["query"])
    if tuning["hybrid"]:
        print_hybrid(tuning["hybrid"])
    if tuning.get("recommended"):
        print_recommended(tuning["recommended"])


def print_fts(rows: list[dict[str, Any]]) -> None:
    print("\n### BM25 tokenizer options (train decides; test reported)\n")
    print(
        "| FTS config | train text | test text | train hybrid | test hybrid | Δ train vs shipped (text+hybrid) "
        "[95% CI] | test R@100 text | identifiers top-1 | phrase | 'the of and' hits | build s |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---|---|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['name']} | error: {r['error'][:80]} | | | | | | | | | |")
            continue
        t, h, ids = r["text"], r["hybrid"], r["identifiers"]
        print(
            f"| {r['name']} | {_fmt(t.get('train', {}).get('ndcg10'))} | {_fmt(t.get('test', {}).get('ndcg10'))} | "
            f"{_fmt(h.get('train', {}).get('ndcg10'))} | {_fmt(h.get('test', {}).get('ndcg10'))} | "
            f"{_delta(r, 'both')} | {_fmt(t.get('test', {}).get('recall100'), 3)} | {ids['top1']}/{ids['of']} "
            f"{_ranks(ids['ranks'])} | {'yes' if ids['phrase_query_ok'] else 'no'} | "
            f"{ids.get('stop_word_query_hits')} | "
            f"{r['build_s']:.1f} |"
        )


def print_title(rows: list[dict[str, Any]]) -> None:
    print("\n### Title handling (text search, shipped FTS options; doc-level scores)\n")
    print("| variant | rows | train nDCG@10 | test nDCG@10 | Δ train vs shipped [95% CI] | train R@100 | test R@100 |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for r in rows:
        t = r["text"]
        print(
            f"| {r['name']} | {r['rows']} | {_fmt(t['train']['ndcg10'])} | {_fmt(t['test']['ndcg10'])} | "
            f"{_delta(r, 'text')} | {_fmt(t['train']['recall100'], 3)} | {_fmt(t['test']['recall100'], 3)} |"
        )


def print_query(rows: list[dict[str, Any]]) -> None:
    print("\n### Query handling (Engine._bm25 replaced; shipped table and fusion constants)\n")
    print(
        "| query | train text | test text | train hybrid | test hybrid | Δ train vs shipped (text+hybrid) [95% CI] "
        "| identifiers top-1 |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    for r in rows:
        ids = r["identifiers"]
        print(
            f"| {r['name']} | {_fmt(r['text']['train']['ndcg10'])} | {_fmt(r['text']['test']['ndcg10'])} | "
            f"{_fmt(r['hybrid']['train']['ndcg10'])} | {_fmt(r['hybrid']['test']['ndcg10'])} | {_delta(r, 'both')} | "
            f"{ids['top1']}/{ids['of']} {_ranks(ids['ranks'])} |"
        )


def print_hybrid(rows: list[dict[str, Any]]) -> None:
    print(f"\n### Hybrid fusion depth and K (limit {HYBRID_LIMIT}: nDCG@10 and Recall@{HYBRID_LIMIT})\n")
    print(
        f"| depth | K | train nDCG@10 | test nDCG@10 | Δ train vs shipped [95% CI] | train R@{HYBRID_LIMIT} "
        f"| test R@{HYBRID_LIMIT} | p50 ms |"
    )
    print("|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in rows:
        mark = " (shipped)" if r["shipped"] else ""
        print(
            f"| {r['depth']}{mark} | {r['k']} | {_fmt(r['train']['ndcg10'])} | {_fmt(r['test']['ndcg10'])} | "
            f"{_delta(r, 'hybrid')} | {_fmt(r['train'][f'recall{HYBRID_LIMIT}'], 3)} | "
            f"{_fmt(r['test'][f'recall{HYBRID_LIMIT}'], 3)} | {r['p50_ms']:.1f} |"
        )


def print_recommended(rows: list[dict[str, Any]]) -> None:
    print("\n### Before / shipped / recommended (limit 100; recommended picked by rules on train numbers only)\n")
    for r in rows:
        print(
            f"- {r['name']}: FTS {r['fts']!r} {r['fts_options'] or ''}; query {r['query']!r}; "
            f"hybrid depth {r['depth']}, K {r['k']}; hybrid at limit {HYBRID_LIMIT}: train "
            f"{_fmt(r['hybrid_limit20']['train']['ndcg10'])}, test {_fmt(r['hybrid_limit20']['test']['ndcg10'])}"
        )
    print()
    print(
        "| configuration | search | train nDCG@10 | test nDCG@10 | Δ train vs shipped [95% CI] | Δ test vs shipped "
        "[95% CI] | train R@100 | test R@100 | identifiers top-1 |"
    )
    print("|---|---|---:|---:|---|---|---:|---:|---|")
    for r in rows:
        ids = r["identifiers"]
        for mode in ("text", "hybrid"):
            m = r[mode]
            print(
                f"| {r['name']} | {mode} | {_fmt(m['train']['ndcg10'])} | {_fmt(m['test']['ndcg10'])} | "
                f"{_delta(r, mode)} | {_delta(r, mode, 'test')} | "
                f"{_fmt(m['train']['recall100'], 3)} | {_fmt(m['test']['recall100'], 3)} | "
                f"{ids['top1']}/{ids['of']} {_ranks(ids['ranks'])} |"
            )


def _delta(row: dict[str, Any], mode: str, split: str = "train") -> str:
    d = row.get("vs_shipped", {}).get(mode, {}).get(split)
    if not d:
        return "—"
    return f"{d['delta']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}]"


def _ranks(ranks: dict[str, Any]) -> str:
    missed = [f"{k}: {v if v is not None else '>10'}" for k, v in ranks.items() if v != 1]
    return f"({', '.join(missed)})" if missed else ""


if __name__ == "__main__":
    main()
