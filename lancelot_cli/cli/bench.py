"""`lancelot bench QUESTIONS.jsonl`: how well search finds the expected documents for the user's own questions.

Runs in-process (the engine, not the background server): a bench is a batch of searches, and its
figures must not depend on whether a server happened to be running.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lancelot_cli.cli.options import Db, Table, load_settings

if TYPE_CHECKING:
    from lancelot_cli.engine.bench import ModeScore

HELP = (
    "Score search on your own questions: each line of QUESTIONS is a JSON object "
    '{"question": "...", "expected": "path/of/doc.md"} (expected: a source or a hit id SOURCE#N, or a list of '
    'them); "queries": [...] adds other phrasings, as an agent sends them. Prints MRR@10 and success@1/3/10 '
    "for text and auto search (and again with the phrasings, when there are any), and the questions missed "
    "(not in the first 10 hits) with the 3 hits returned instead, so you can see whether --embed or a setting helps."
)


def bench(
    ctx: typer.Context,
    questions: Annotated[
        Path, typer.Argument(help="JSON Lines file of questions.", metavar="QUESTIONS", show_default=False)
    ],
    table: Table = None,
    misses: Annotated[
        int, typer.Option("--misses", min=0, metavar="N", help="Misses to print per mode (--json: all).")
    ] = 20,
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures and every miss as JSON.")] = False,
    db: Db = None,
) -> None:
    from lancelot_cli.engine import Engine
    from lancelot_cli.engine import bench as benching
    from lancelot_cli.wire import to_json

    settings = load_settings(ctx, db)
    asked = benching.read_questions(questions)
    scores = benching.score(Engine(settings), asked, table=table)
    if json_out:
        typer.echo(to_json(benching.to_data(scores, table or settings.table, len(asked))))
        return
    typer.echo(f"{len(asked)} question{'' if len(asked) == 1 else 's'}, table {table or settings.table}")
    typer.echo(_table(scores))
    for mode in scores:
        _print_misses(mode, misses)


def _table(scores: list[ModeScore]) -> str:
    from lancelot_cli.engine.bench import SUCCESS_AT

    head = ["mode", "ran", "MRR@10", *(f"success@{k}" for k in SUCCESS_AT)]
    rows = [
        [
            s.mode,
            ", ".join(f"{kind} {n}" for kind, n in s.ran.most_common()),
            f"{s.mrr:.3f}",
            *(f"{s.success(k):.3f}" for k in SUCCESS_AT),
        ]
        for s in scores
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = ("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in [head, *rows])
    return "\n".join(line.rstrip() for line in lines)


def _print_misses(mode: ModeScore, shown: int) -> None:
    if not mode.misses or not shown:
        return
    typer.echo(f"\nMissed by {mode.mode} ({len(mode.misses)}; not in the first 10 hits):")
    for miss in mode.misses[:shown]:
        q = miss.question
        typer.echo(f"  line {q.line}: {q.text}")
        typer.echo(f"    expected {', '.join(q.expected)}")
        got = "; ".join(f"{hit.id} ({hit.title})" for hit in miss.top) or "no hits"
        typer.echo(f"    got {got}")
    if len(mode.misses) > shown:
        typer.echo(f"  … {len(mode.misses) - shown} more (--misses N, or --json for all)")
