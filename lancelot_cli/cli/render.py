"""Rich output for a person at a terminal. Plain text when piped; colour obeys NO_COLOR.

The only module of the CLI that draws with rich; everything here writes to stdout, except
progress and summaries of long work, which go to stderr.
"""

from __future__ import annotations

import re
from typing import Any

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from lancelot_cli.settings import Settings
from lancelot_cli.textmatch import query_words


def stdout() -> Console:
    return Console(highlight=False, soft_wrap=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _box(console: Console) -> box.Box:
    return box.SIMPLE_HEAD if console.is_terminal else box.ASCII2


def _highlight(snippet: str, words: list[str]) -> Text:
    text = Text(snippet)
    for word in words:
        text.highlight_regex(re.compile(re.escape(word), re.I), style="bold yellow")
    return text


def search_reply(reply: dict[str, Any]) -> None:
    out = stdout()
    err = stderr()
    how = f"{reply['searchType']} search, ranked by {reply['ranking']}"
    if reply.get("note"):
        err.print(f"[yellow]note:[/] {reply['note']}")
    if not reply["hits"]:
        err.print(f"No matches for {reply['query']!r} in table {reply['table']!r} ({how}).")
        return
    words = query_words(reply["query"])
    table = Table(box=_box(out), show_lines=False, expand=False, pad_edge=False)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("title / source", ratio=1, min_width=18)
    table.add_column("snippet", ratio=3)
    for rank, hit in enumerate(reply["hits"], start=1):
        where = Text(hit["title"], style="bold")
        where.append("\n")
        where.append(hit["source"], style=f"cyan link file://{hit['source']}" if False else "cyan")
        table.add_row(str(rank), f"{hit['score']:.3f}", where, _highlight(hit["snippet"], words))
    out.print(table)
    err.print(f"{reply['count']} hit{'s' if reply['count'] != 1 else ''} in table {reply['table']!r} ({how}).", style="dim")


def context_block(reply: dict[str, Any]) -> None:
    out = stdout()
    if out.is_terminal:
        out.print(Markdown(reply["context"]))
    else:
        out.file.write(reply["context"])
        out.file.flush()
    stderr().print(
        f"{reply['included']} chunk(s), {len(reply['context'])} of {reply['budget']} characters"
        + (f", {reply['leftOut']} left out" if reply["leftOut"] else ""),
        style="dim",
    )


def status_reply(reply: dict[str, Any], settings: Settings) -> None:
    out = stdout()
    conn = reply["connection"]
    if conn["ok"]:
        out.print(f"[bold]Database[/] {conn['path']}  [green]ok[/]")
    else:
        out.print(f"[bold]Database[/] {conn['path'] or '(not set)'}  [red]{conn.get('error', 'unavailable')}[/]")
    if reply["tables"]:
        table = Table(box=_box(out), pad_edge=False)
        for column in ("table", "rows", "full-text index", "vectors", "version"):
            table.add_column(column, justify="right" if column in {"rows", "version"} else "left")
        for entry in reply["tables"]:
            vectors = ", ".join(f"{v['column']} ({v['dimension']}-d)" for v in entry["vectors"]) or "-"
            fts = ", ".join(entry["fullTextColumns"]) or "-"
            table.add_row(entry["name"], str(entry["rows"]), fts, vectors, str(entry["version"]))
        out.print(table)
        for entry in reply["tables"]:
            if "columns" in entry:
                out.print(f"  {entry['name']}: {', '.join(entry['columns'])}")
    elif conn["ok"]:
        out.print("No tables yet: run `lancelot index SRC DB`.")
    emb = reply["embeddings"]
    if emb["available"]:
        out.print(f"[bold]Vector search[/] available (key from {emb['keySource']}), model {emb['model']}")
    else:
        out.print(f"[bold]Vector search[/] off: no OpenAI key (set OPENAI_API_KEY or run `lancelot init`); "
                  f"text search works without one")
    sources = settings.sources
    rows = [(name, sources.get(name, "default")) for name in ("LANCEDB_PATH", "LANCEDB_TABLE", "EMBEDDING_MODEL")]
    out.print("[dim]" + " · ".join(f"{name} from {origin}" for name, origin in rows) + "[/]")


def index_summary(report: dict[str, Any]) -> None:
    err = stderr()
    for item in report["skipped"]:
        err.print(f"[yellow]skipped[/] {item['path']}: {item['reason']}")
    change = (f"{report['added']} added, {report['updated']} updated, {report['deleted']} removed"
              if report["committed"] else "no changes")
    err.print(
        f"Indexed {report['files']} file(s) into {report['chunks']} chunk(s) in table {report['table']!r} "
        f"of {report['database']} ({change}; {len(report['skipped'])} skipped) in {report['seconds']:.1f} s."
    )
    if report.get("embeddingModel"):
        err.print(f"Vectors: {report['embedded']} chunk(s) embedded with {report['embeddingModel']}, the rest reused"
                  + (f"; {report['truncatedForEmbedding']} long chunk(s) cut to 8,000 characters for embedding"
                     if report["truncatedForEmbedding"] else ""))
    elif report.get("withoutVectors"):
        err.print(f"[yellow]note:[/] {report['withoutVectors']} chunk(s) have no vector yet; "
                  f"run with --embed to add them")


def batch_line(report: dict[str, Any], clock: str) -> str:
    """One line for a --watch batch: what changed, how many rows, how long."""
    skipped = f", {len(report['skipped'])} skipped ({', '.join(s['path'] for s in report['skipped'][:3])})" \
        if report["skipped"] else ""
    return (f"{clock}  {report['read']} file(s) read: +{report['added']} ~{report['updated']} -{report['deleted']} "
            f"chunks, {report['chunks']} in table, {report['seconds']:.2f} s{skipped}")
