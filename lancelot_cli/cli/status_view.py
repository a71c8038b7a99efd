"""`status` drawn for a person: the database, a table of its tables, what a search does on each,
what `index --embed` would embed with, the background server, and the settings with where each
came from.

Re-exported by `render`, which the commands import.
"""

from __future__ import annotations

from datetime import datetime

from rich.markup import escape
from rich.text import Text

from lancelot_cli.cli.consoles import grid_table, print_table, stdout
from lancelot_cli.cli.widths import left_over, longest
from lancelot_cli.models import Embeddings, Status, TableStatus
from lancelot_cli.settings import Settings
from lancelot_cli.settings import rows as settings_rows


# The settings `status` shows, with where each came from (flag, env, file, default).
def _when(stamp: str | None) -> str:
    if not stamp:
        return "-"
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def _vectors_cell(entry: TableStatus) -> str:
    cells = []
    for vector in entry.vectors:
        cell = f"{vector.column} ({vector.dimension}-d"
        cell += f", {vector.model})" if vector.model else ")"
        missing = vector.missing
        if missing:
            cell += f", {missing} missing"
        elif missing == 0:
            cell += ", all rows"
        cells.append(cell)
    return "\n".join(cells) or "none"


def _fts_cell(entry: TableStatus) -> str:
    columns = entry.fts_columns
    if not columns:
        return "none (substring scan)"
    cell = ", ".join(columns)
    unindexed = (entry.fts_coverage or {}).get("unindexed")
    return cell + (f" ({unindexed} rows not yet indexed)" if unindexed else "")


def _new_vectors(emb: Embeddings, tables: tuple[TableStatus, ...], source: str | None = None) -> str:
    """What `lancelot index --embed` would embed with (EMBEDDING_MODEL and the key are for new
    vectors: a table's vectors are searched with the model that made them, as its Search line says).
    ``source``: where EMBEDDING_MODEL comes from; a local one from the settings file leaves a table
    made by another local model with its own (indexer/run.py ``table_model``)."""
    from lancelot_cli.local_embed import available, install, is_local, same_model

    if is_local(emb.model):
        extra = "" if available() else f", which needs the local extra ({install()})"
        line = f"`lancelot index SRC --embed` makes them with {emb.model} on this machine{extra}"
        made_otherwise = [t for t in tables if t.embedding_model and not same_model(t.embedding_model, emb.model)]
        kept = [t for t in made_otherwise if source == "file" and is_local(t.embedding_model)]
        swapped = [t for t in made_otherwise if t not in kept]
        if kept:
            line += "; " + ", ".join(f"table {t.name!r} keeps its own {t.embedding_model}" for t in kept)
            line += " (--embed-model MODEL switches a table)"
        if swapped:
            names = ", ".join(repr(t.name) for t in swapped)
            line += f"; in table {names} they would replace the vectors of another model"
        return line
    if emb.key_source or emb.base_url:
        where = emb.base_url or "OpenAI"
        key = f" (key from {emb.key_source})" if emb.key_source else ""
        other = [
            t.name
            for t in tables
            if t.embedding_model
            and t.embedding_model != emb.model
            and not (is_local(t.embedding_model) and is_local(emb.model) and same_model(t.embedding_model, emb.model))
        ]
        replaced = (
            f"; in table {', '.join(repr(n) for n in other)} they would replace the vectors of another model"
            if other
            else ""
        )
        return f"`lancelot index SRC --embed` makes them with {emb.model} through {where}{key}{replaced}"
    # No key, no endpoint: --embed reuses a table's own local model (indexer.run.embedder).
    own = {t.name: t.embedding_model for t in tables if t.embedding_model and is_local(t.embedding_model)}
    if own:
        models = "; ".join(f"{name}: {model}" for name, model in own.items())
        extra = "" if available() else f" (needs the local extra: {install()})"
        return f"`lancelot index SRC --embed` makes them with the table's own local model, no key ({models}){extra}"
    return (
        "`lancelot index SRC --embed` needs an OpenAI key (set OPENAI_API_KEY or run `lancelot init`) or "
        "a local model (--embed-model local:NAME); text search works without either"
    )


def status_reply(reply: Status, settings: Settings, background: str | None = None) -> None:
    """Database, a table of its tables, vector search, the background server (``background``: one
    line, background/daemon.py) and the settings with where each came from."""
    out = stdout()
    conn = reply.connection
    store = f" ({conn.store})" if conn.store not in (None, "local") else ""
    if conn.ok:
        out.print(f"[bold]Database[/]  {escape((conn.path or '') + store)}  [green]ok[/]")
    else:
        out.print(
            f"[bold]Database[/]  {escape(conn.path or '(not set)')}  [red]{escape(conn.error or 'unavailable')}[/]"
        )
    if reply.tables:
        table = grid_table(out, "table", "rows", "language", "full-text index", "vectors", "last indexed")
        for entry in reply.tables:
            if entry.error is not None:
                table.add_row(entry.name, "?", "", Text(entry.error, style="red"), "", "")
                continue
            table.add_row(
                entry.name,
                str(entry.rows),
                ", ".join(entry.languages) or "-",  # ISO codes: a narrow column (issue 38)
                _fts_cell(entry),
                _vectors_cell(entry),
                _when(entry.updated_at),
            )
        # a table's name is what --table takes: whole on one line (up to a third of the terminal)
        table.columns[0].width = min(longest(["table", *(entry.name for entry in reply.tables)]), out.width // 3)
        out.print()
        print_table(out, table)
        for entry in reply.tables:
            if entry.columns is not None:
                out.print(escape(f"  {entry.name} columns: {', '.join(entry.columns)}"))
    elif conn.ok:
        out.print("No tables yet: run `lancelot index SRC DB`.")
    emb = reply.embeddings
    out.print()
    searchable = [entry for entry in reply.tables if entry.search]
    for n, entry in enumerate(searchable):
        label = "[bold]Search[/]" if n == 0 else "      "
        out.print(f"{label}  {escape(entry.name)}: {escape(entry.search or '')}")
    out.print(
        f"[bold]New vectors[/]  {escape(_new_vectors(emb, reply.tables, settings.sources.get('EMBEDDING_MODEL')))}"
    )
    if background is not None:
        out.print(f"[bold]Background server[/]  {escape(background)}")
    out.print()
    rows = [
        *settings_rows(settings, status_only=True),
        # the key itself: a local model's vectors make `available` true with no key anywhere
        ("OPENAI_API_KEY", "(set)" if emb.key_source else "(not set)", emb.key_source or "-"),
    ]
    table = grid_table(out, "setting", "value", "from")
    for name, value, source in rows:
        table.add_row(name, value, source)
    # A value is often a path or a URL: whole on one line, with what "from" needs to stay readable left.
    names = longest(["setting", *(row[0] for row in rows)])
    table.columns[0].width = names
    table.columns[1].width = min(longest(["value", *(row[1] for row in rows)]), left_over(table, out.width, (names, 8)))
    print_table(out, table)
    out.print(f"[dim]settings file: {settings.config_dir / 'settings.json'}[/]")
