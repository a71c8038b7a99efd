"""Known-item search on a real documentation build: does the page that answers a user's question
come first? Scores lancelot, used as a user would, on a fixed question set.

Run from the repository root:
    python tests/benchmarks/known_items.py [--src /usr/share/doc/postgresql-doc-15/html]
        [--questions tests/benchmarks/known_items/postgresql15.jsonl] [--code-at REV]
        [--via serve|cli] [--check-cli 10] [--reuse | --rebuild] [--output PATH]
        [--embed-model local:/path/to/minilm] [--phrasings]
    python tests/benchmarks/known_items.py --compare BEFORE.json AFTER.json [--list-heldout]

1. Code: the working tree by default; ``--code-at REV`` runs the package as committed at REV (a
   ``git archive`` of ``lancelot_cli/`` under results/known_items/), so other people's unfinished
   edits do not leak into a measurement. Every lancelot process is ``python -m lancelot_cli`` with
   that code first on PYTHONPATH, no LANCEDB_/LANCELOT_/OPENAI_ variables and a throwaway config.
2. Index: ``lancelot index SRC DB`` (timed). The database is cached under results/known_items/,
   keyed on the content of the code's ``lancelot_cli/**/*.py``, SRC and the embedding model;
   ``--rebuild`` forces a new one, ``--reuse`` takes the newest cached one for SRC (and model)
   whatever the code. ``--embed-model MODEL`` indexes with vectors (``lancelot index SRC DB
   --embed-model MODEL``, e.g. ``local:DIR`` with DIR made by ../shared/tools/minilm_to_onnx.py):
   the searches are then ``auto``, which is hybrid on a table with local vectors, with no key.
   Only the index changes: the questions, their splits and the scoring stay as they are.
3. Search: every question as ``lancedb_search {"query": Q, "limit": 10}`` through one ``lancelot
   serve`` (stdio, MCP SDK client; the reply is what ``lancelot search Q --json --limit 10``
   prints), or ``--via cli`` one ``lancelot search`` process per question (about 3 s each here).
   ``--check-cli N`` also runs the first N questions through the CLI and counts differing replies.
   ``--phrasings`` sends each question's ``queries`` (other phrasings a separate model wrote from
   the question and the tool description alone: known_items/README.md) with it, as an agent would.
4. Scores per split (tune, heldout, all), from the hits' ``source`` against the question's
   answer pages: MRR@10, success@10, success@1 (right page first) and the mean number of distinct
   documents among the top 10 hits. Also: share of top-1 hits that are navigation-only pages
   (tables of contents, the book index: see ``link_list_pages``).

Prints Markdown tables and writes tests/benchmarks/results/known_items.json (git-ignored).
``--compare`` prints both runs' scores with deltas, a paired bootstrap interval for the MRR delta,
and which questions moved (tune split only, unless ``--list-heldout``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CACHE = RESULTS / "known_items"
QUESTIONS = HERE / "known_items" / "postgresql15.jsonl"
SRC = Path("/usr/share/doc/postgresql-doc-15/html")
K = 10
SPLITS = ("tune", "heldout", "all")
METRICS = (
    ("mrr@10", "MRR@10", 4),
    ("success@10", "success@10", 3),
    ("success@1", "right page first", 3),
    ("distinct@10", "distinct docs in top 10", 2),
    ("top1_link_list", "top-1 is a navigation page", 3),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_questions(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if not row.get("answers") or row.get("split") not in ("tune", "heldout"):
            raise SystemExit(f"{path}: question {row.get('id')} needs answers and split tune|heldout")
    return rows


# -- code, environment and index --------------------------------------------------------------


def code_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((root / "lancelot_cli").rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def code_root(rev: str | None) -> tuple[Path, str]:
    """The folder holding the ``lancelot_cli`` to run, and a description (commit or 'working tree')."""
    if rev is None:
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "lancelot_cli"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        return REPO, f"working tree at {head[:12]}" + (" (with uncommitted lancelot_cli changes)" if dirty else "")
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=REPO, capture_output=True, text=True
    )
    if sha.returncode:
        raise SystemExit(f"--code-at {rev}: not a commit in {REPO}")
    sha_text = sha.stdout.strip()
    root = CACHE / f"code-{sha_text[:12]}"
    if not (root / "lancelot_cli").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha_text, "lancelot_cli"], cwd=REPO, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root, f"commit {sha_text[:12]}"


def lancelot_env(root: Path, config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCEDB_", "LANCELOT_", "OPENAI_", "EMBEDDING_"))}
    env.update(
        PYTHONPATH=str(root),
        LANCELOT_CONFIG_DIR=str(config),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        COLUMNS="200",
    )
    return env


def build_index(root: Path, env: dict[str, str], src: Path, opts: argparse.Namespace) -> dict[str, Any]:
    model = opts.embed_model or ""
    key = hashlib.sha256(f"{code_hash(root)}|{src.resolve()}{'|' + model if model else ''}".encode()).hexdigest()[:16]
    db = CACHE / f"db-{key}"
    done = db / "known_items_index.json"
    if opts.reuse and not done.exists():
        cached = sorted(
            (
                p
                for p in CACHE.glob("db-*/known_items_index.json")
                if json.loads(p.read_text())["src"] == str(src.resolve())
                and json.loads(p.read_text()).get("embed_model", "") == model
            ),
            key=lambda p: p.stat().st_mtime,
        )
        if cached:
            done, db = cached[-1], cached[-1].parent
            log(f"--reuse: using {db} (built by {json.loads(done.read_text())['code']})")
    if done.exists() and not opts.rebuild:
        return {**json.loads(done.read_text()), "db": str(db), "reused": True}
    shutil.rmtree(db, ignore_errors=True)
    log(f"indexing {src} into {db} …")
    t0 = time.perf_counter()
    # Without --embed-model the index is text only, even on a machine with a local model cached
    # (code since 9835bba would embed with it by default); older code has no --no-embed flag.
    text_only = "--no-embed" in (root / "lancelot_cli" / "cli" / "index.py").read_text(encoding="utf-8")
    embed = ["--embed-model", model] if model else ["--no-embed"] if text_only else []
    run = subprocess.run(
        [sys.executable, "-m", "lancelot_cli", "index", str(src), str(db), *embed],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=opts.index_timeout,
    )
    seconds = time.perf_counter() - t0
    if run.returncode:
        raise SystemExit(f"lancelot index failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    summary = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    info = {
        "src": str(src.resolve()),
        "code": opts.code_desc,
        "embed_model": model,
        "index_seconds": round(seconds, 1),
        "summary": summary[-3:],
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    done.write_text(json.dumps(info, indent=1))
    return {**info, "db": str(db), "reused": False}


# -- searching ----------------------------------------------------------------------------------


def search_cli(root: Path, env: dict[str, str], db: str, query: str) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "lancelot_cli", "search", query, "--db", db, "--json", "--limit", str(K)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode:
        raise SystemExit(f"lancelot search {query!r} failed (exit {run.returncode}): {run.stderr.strip()[-500:]}")
    return json.loads(run.stdout)


async def search_serve(
    root: Path, env: dict[str, str], db: str, queries: list[str], phrasings: list[list[str]] | None = None
) -> list[tuple[dict, float]]:
    import mcp

    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "lancelot_cli", "serve"], env={**env, "LANCEDB_PATH": db}, cwd=str(root)
    )
    replies = []
    async with mcp.Client(params) as client:
        for n, query in enumerate(queries):
            arguments: dict[str, Any] = {"query": query, "limit": K}
            if phrasings is not None and phrasings[n]:
                arguments["queries"] = phrasings[n]
            t0 = time.perf_counter()
            result = await client.call_tool("lancedb_search", arguments)
            seconds = time.perf_counter() - t0
            text = "".join(getattr(block, "text", "") for block in result.content)
            if result.is_error:
                raise SystemExit(f"lancedb_search {query!r} failed: {text[:500]}")
            replies.append((json.loads(text), seconds))
    return replies


LIST_CLASSES = ("toc", "index", "toctree-wrapper", "genindextable")  # DocBook, Sphinx
CHROME_CLASSES = ("navheader", "navfooter", "related", "sphinxsidebar", "md-sidebar", "md-nav")
NAV_TEXT_MAX = 600


def link_list_pages(src: Path) -> set[str]:
    """HTML pages that are navigation only: they hold a table of contents or book index, and with
    it and the navigation bars removed fewer than NAV_TEXT_MAX characters of text remain."""
    import lxml.html

    def xpath(classes: tuple[str, ...]) -> str:
        return (
            "//*[" + " or ".join(f'contains(concat(" ", normalize-space(@class), " "), " {c} ")' for c in classes) + "]"
        )

    pages = set()
    for path in src.rglob("*.htm*"):
        try:
            body = lxml.html.parse(str(path)).getroot().find("body")
        except (OSError, ValueError, AttributeError):
            continue
        if body is None or not body.xpath(xpath(LIST_CLASSES)):
            continue
        for block in body.xpath(xpath(LIST_CLASSES + CHROME_CLASSES)):
            if block.getparent() is not None:
                block.drop_tree()
        if len("".join(body.text_content().split())) < NAV_TEXT_MAX:
            pages.add(path.relative_to(src).as_posix())
    return pages


# -- scores -------------------------------------------------------------------------------------


def norm(source: str) -> str:
    return source.replace("\\", "/").removeprefix("./")


def score_one(question: dict[str, Any], reply: dict[str, Any], link_list: set[str]) -> dict[str, Any]:
    sources = [norm(hit.get("source") or "") for hit in reply["hits"][:K]]
    answers = {norm(a) for a in question["answers"]}
    rank = next((i + 1 for i, s in enumerate(sources) if s in answers), None)
    return {
        "id": question["id"],
        "split": question["split"],
        "query": question["query"],
        "answers": question["answers"],
        "rank": rank,
        "hits": len(sources),
        "distinct": len(set(sources)),
        "top1_link_list": bool(sources) and sources[0] in link_list,
        "sources": sources,
        "searchType": reply.get("searchType"),
        "kind": question.get("kind"),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    n = len(rows)
    if not n:
        return {}
    return {
        "n": n,
        "mrr@10": sum(1 / r["rank"] for r in rows if r["rank"]) / n,
        "success@10": sum(r["rank"] is not None for r in rows) / n,
        "success@1": sum(r["rank"] == 1 for r in rows) / n,
        "distinct@10": statistics.fmean(r["distinct"] for r in rows),
        "top1_link_list": sum(r["top1_link_list"] for r in rows) / n,
    }


def by_split(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {s: [r for r in rows if s == "all" or r["split"] == s] for s in SPLITS}


def table(header: list[str], lines: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(out + ["| " + " | ".join(line) + " |" for line in lines])


def report(result: dict[str, Any]) -> str:
    s = result["scores"]
    lines = [[label] + [f"{s[sp][key]:.{digits}f}" for sp in SPLITS] for key, label, digits in METRICS]
    lines.append(["questions"] + [str(s[sp]["n"]) for sp in SPLITS])
    return table(["metric", *SPLITS], lines)


# -- compare ------------------------------------------------------------------------------------


def bootstrap_delta(a: list[float], b: list[float], rounds: int = 5000) -> tuple[float, float]:
    rng = random.Random(0)
    n = len(a)
    deltas = sorted(statistics.fmean(b[i] - a[i] for i in (rng.randrange(n) for _ in range(n))) for _ in range(rounds))
    return deltas[int(0.025 * rounds)], deltas[int(0.975 * rounds)]


def compare(path_a: Path, path_b: Path, list_heldout: bool) -> None:
    a, b = (json.loads(p.read_text()) for p in (path_a, path_b))
    print(f"A: {path_a} ({a['code']}, via {a['via']})\nB: {path_b} ({b['code']}, via {b['via']})\n")
    rows_a, rows_b = ({r["id"]: r for r in x["questions"]} for x in (a, b))
    for split in SPLITS:
        ids = [i for i in rows_a if i in rows_b and (split == "all" or rows_a[i]["split"] == split)]
        sa, sb = summarize([rows_a[i] for i in ids]), summarize([rows_b[i] for i in ids])
        lines = [
            [label, f"{sa[key]:.{digits}f}", f"{sb[key]:.{digits}f}", f"{sb[key] - sa[key]:+.{digits}f}"]
            for key, label, digits in METRICS
        ]
        rr = [[1 / r["rank"] if r["rank"] else 0.0 for r in (rows[i] for i in ids)] for rows in (rows_a, rows_b)]
        low, high = bootstrap_delta(*rr)
        better = sum(y > x for x, y in zip(*rr, strict=True))
        worse = sum(y < x for x, y in zip(*rr, strict=True))
        print(f"### {split} ({len(ids)} questions)\n")
        print(table(["metric", "A", "B", "B − A"], lines))
        print(
            f"\nMRR delta 95 % paired bootstrap interval [{low:+.4f}, {high:+.4f}]; "
            f"questions better {better}, worse {worse}, same {len(ids) - better - worse}\n"
        )
    moved = [
        i
        for i in rows_a
        if i in rows_b and rows_a[i]["rank"] != rows_b[i]["rank"] and (list_heldout or rows_a[i]["split"] == "tune")
    ]
    if moved:
        lines = [
            [
                i,
                rows_a[i]["split"],
                rows_a[i]["query"],
                str(rows_a[i]["rank"] or "-"),
                str(rows_b[i]["rank"] or "-"),
                rows_b[i]["sources"][0] if rows_b[i]["sources"] else "",
            ]
            for i in moved
        ]
        print(table(["id", "split", "query", "rank A", "rank B", "B's first hit"], lines))


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=SRC, help=f"documentation folder (default {SRC})")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="JSONL question file")
    parser.add_argument("--code-at", metavar="REV", help="run lancelot_cli as committed at REV (default: working tree)")
    parser.add_argument("--via", choices=("serve", "cli"), default="serve", help="how to search (default serve)")
    parser.add_argument(
        "--check-cli",
        type=int,
        default=0,
        metavar="N",
        help="also run the first N questions through `lancelot search --json` and compare",
    )
    parser.add_argument("--reuse", action="store_true", help="reuse the newest cached index of SRC whatever the code")
    parser.add_argument("--rebuild", action="store_true", help="index again even if a cached index matches")
    parser.add_argument("--output", type=Path, default=RESULTS / "known_items.json", help="results JSON")
    parser.add_argument(
        "--embed-model",
        metavar="MODEL",
        help="index with vectors from MODEL (e.g. local:DIR): searches are then auto = hybrid",
    )
    parser.add_argument(
        "--index-timeout",
        type=float,
        default=3600.0,
        metavar="S",
        help="seconds the index run may take (default 3600; embedding ~8k chunks locally on 2 busy cores takes longer)",
    )
    parser.add_argument(
        "--phrasings",
        action="store_true",
        help='send each question\'s "queries" (other phrasings, written by a separate model) with it',
    )
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two results files")
    parser.add_argument("--list-heldout", action="store_true", help="with --compare: list moved heldout questions too")
    opts = parser.parse_args()
    if opts.compare:
        return compare(*opts.compare, opts.list_heldout)
    if not opts.src.is_dir():
        raise SystemExit(f"{opts.src} is not a folder: apt-get install postgresql-doc-15, or pass --src")
    questions = load_questions(opts.questions)
    root, opts.code_desc = code_root(opts.code_at)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="known-items-config-") as config:
        env = lancelot_env(root, Path(config))
        index = build_index(root, env, opts.src, opts)
        log(f"index: {index['index_seconds']} s{' (cached)' if index['reused'] else ''}; {index['summary'][-1]}")
        queries = [q["query"] for q in questions]
        t0 = time.perf_counter()
        if opts.via == "serve":
            import anyio

            phrasings = [list(q.get("queries", [])) for q in questions] if opts.phrasings else None
            if phrasings is not None and not any(phrasings):
                raise SystemExit(f'--phrasings: {opts.questions} has no "queries" (other phrasings) to send')
            replies = anyio.run(search_serve, root, env, index["db"], queries, phrasings)
        else:
            replies = []
            for query in queries:
                t1 = time.perf_counter()
                replies.append((search_cli(root, env, index["db"], query), time.perf_counter() - t1))
        search_seconds = time.perf_counter() - t0
        mismatches = [
            q
            for q, (reply, _) in zip(queries[: opts.check_cli], replies, strict=False)
            if [h["id"] for h in search_cli(root, env, index["db"], q)["hits"]] != [h["id"] for h in reply["hits"]]
        ]
    link_list = link_list_pages(opts.src)
    rows = [score_one(q, reply, link_list) for q, (reply, _) in zip(questions, replies, strict=False)]
    latencies = sorted(seconds * 1000 for _, seconds in replies)
    result = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "code": opts.code_desc,
        "via": opts.via + (" with phrasings" if opts.phrasings else ""),
        "src": str(opts.src.resolve()),
        "questions_file": str(opts.questions),
        "index": index,
        "search_seconds": round(search_seconds, 1),
        "search_ms_p50": round(statistics.median(latencies), 1),
        "search_types": sorted({r["searchType"] for r in rows}),
        "corpus": {"html_files": sum(1 for _ in opts.src.rglob("*.htm*")), "link_list_pages": len(link_list)},
        "check_cli": {"questions": min(opts.check_cli, len(queries)), "differing": mismatches},
        "scores": {split: summarize(rows_) for split, rows_ in by_split(rows).items()},
        "questions": rows,
    }
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(result, indent=1))
    vectors = f", vectors {opts.embed_model}" if opts.embed_model else ""
    print(f"## Known items: {opts.questions.name} on {opts.src} ({opts.code_desc}, via {opts.via}{vectors})\n")
    print(report(result))
    print(f"\nIndex {index['index_seconds']} s{' (cached)' if index['reused'] else ''}: {index['summary'][-1]}")
    print(
        f"{result['corpus']['html_files']} HTML files, {len(link_list)} navigation-only pages; "
        f"search p50 {result['search_ms_p50']} ms ({', '.join(result['search_types'])})"
    )
    if opts.check_cli:
        print(
            f"CLI check: {len(mismatches)} of {result['check_cli']['questions']} replies differ from "
            f"`lancelot search --json`"
        )
    log(f"wrote {opts.output}")


if __name__ == "__main__":
    main()
