"""What the MCP tools cost an agent in tokens: the `tools/list` reply per tool, and each tool's
default reply on the bundled sample and on a documentation site (issue 14).

    python tests/benchmarks/reply_tokens.py [--site /usr/share/doc/postgresql-doc-15/html] [--pages 300]

Tokens are estimated as characters / 4 (the usual rule of thumb for English and JSON). `tools/list`
is measured as sent: the JSON-RPC line `lancelot serve` writes on stdio. Each tool is called once
with its defaults through the SDK's in-memory client; "text" is what a client shows the model, "sent"
adds the structuredContent the same reply carries. The doc site (the first --pages HTML pages of the
PostgreSQL manual, `apt-get install postgresql-doc-15`) is indexed into a temporary database; when it
is missing, that part is skipped and the reason printed. Results go to
tests/benchmarks/results/reply_tokens.json. The budget test is
tests/test_tool_surface.py::test_default_replies_on_the_sample_stay_within_their_token_budgets.

Measured 2026-11-30 (2 cores), `tools/list` as sent over stdio, characters per tool:

| | whole line | search | query | document | status | version |
|---|---:|---:|---:|---:|---:|---:|
| before (72f8fdb^) | 10,348 | 3,783 | 2,406 | 1,608 | 1,592 | 909 |
| after (perDocument added meanwhile) | 5,636 | 2,505 | 1,187 | 1,057 | 550 | 287 |
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make `lancelot_cli` importable from the checkout too
    sys.path.insert(0, str(REPO))

SAMPLE_DOCS = REPO / "examples" / "sample-docs"
SITE = Path("/usr/share/doc/postgresql-doc-15/html")
RESULTS = Path(__file__).resolve().parent / "results" / "reply_tokens.json"
QUESTIONS = {"sample": "how do refunds work?", "site": "how do I build an index without locking writes?"}


def tokens(chars: int) -> int:
    return round(chars / 4)


def tools_list_as_sent(db: Path) -> tuple[int, dict[str, int]]:
    """(length of the tools/list JSON-RPC line, compact JSON length of each tool)."""
    env = {
        **os.environ,
        "LANCEDB_PATH": str(db),
        "PYTHONPATH": str(REPO),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "lancelot_cli", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        proc.stdout.readline()
        line = proc.stdout.readline().rstrip("\n")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    tools = json.loads(line)["result"]["tools"]
    return len(line), {t["name"]: len(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in tools}


def default_replies(db: Path, question: str) -> dict[str, dict[str, int]]:
    """Each tool called with its defaults: characters of the text, and of text + structuredContent."""
    import anyio
    from mcp import Client

    from lancelot_cli.server.app import build_server
    from lancelot_cli.settings import load

    async def run() -> dict[str, dict[str, int]]:
        sizes: dict[str, dict[str, int]] = {}
        async with Client(build_server(load(environ={**os.environ, "LANCEDB_PATH": str(db)}))) as client:
            found = await client.call_tool("lancedb_search", {"query": question})
            top = (found.structured_content or {}).get("hits", [{}])[0].get("source", "")
            calls = {
                "lancedb_search": {"query": question},
                "lancedb_query": {"question": question},
                "lancedb_document": {"source": top},
                "lancedb_status": {},
                "lancedb_version": {},
            }
            for name, arguments in calls.items():
                result = await client.call_tool(name, arguments)
                text = sum(len(part.text) for part in result.content if getattr(part, "type", "") == "text")
                structured = (
                    0
                    if result.structured_content is None
                    else len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
                )
                sizes[name] = {"text": text, "sent": text + structured, "error": bool(result.is_error)}
        return sizes

    return anyio.run(run)


def index(folder: Path, db: Path) -> float:
    from lancelot_cli.indexer import index_folder

    started = time.perf_counter()
    index_folder(folder, str(db))
    return time.perf_counter() - started


def table(title: str, sizes: dict[str, dict[str, int]]) -> None:
    print(f"\n{title}\n\n| tool | text chars | text tokens | sent chars (with structuredContent) | sent tokens |")
    print("|---|---:|---:|---:|---:|")
    for name, size in sizes.items():
        flag = " (error)" if size["error"] else ""
        print(
            f"| {name}{flag} | {size['text']:,} | {tokens(size['text']):,} | {size['sent']:,} | "
            f"{tokens(size['sent']):,} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--pages", type=int, default=300)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="lancelot-tokens-") as tmp:
        sample_db = Path(tmp) / "sample-db"
        index(SAMPLE_DOCS, sample_db)
        line, per_tool = tools_list_as_sent(sample_db)
        results["toolsList"] = {"asSent": line, "perTool": per_tool}
        print(f"tools/list as sent: {line:,} characters (~{tokens(line):,} tokens); budget 6,000\n")
        print("| tool | characters | tokens |\n|---|---:|---:|")
        for name, size in per_tool.items():
            print(f"| {name} | {size:,} | {tokens(size):,} |")
        results["sample"] = default_replies(sample_db, QUESTIONS["sample"])
        table(f"Default replies on the sample (question: {QUESTIONS['sample']!r})", results["sample"])

        pages = sorted(args.site.glob("*.html"))[: args.pages] if args.site.is_dir() else []
        if not pages:
            print(f"\nDoc site skipped: no HTML pages in {args.site} (apt-get install postgresql-doc-15).")
            results["site"] = {"skipped": f"no HTML pages in {args.site}"}
        else:
            site = Path(tmp) / "site"
            site.mkdir()
            for page in pages:
                shutil.copy2(page, site / page.name)
            seconds = index(site, Path(tmp) / "site-db")
            replies = default_replies(Path(tmp) / "site-db", QUESTIONS["site"])
            results["site"] = {
                "folder": str(args.site),
                "pages": len(pages),
                "indexSeconds": round(seconds, 1),
                "replies": replies,
            }
            table(f"Default replies on {len(pages)} pages of {args.site} (question: {QUESTIONS['site']!r})", replies)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"\nwritten: {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
