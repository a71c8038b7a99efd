"""What encoding a reply costs: ``wire.to_json`` of a 10-hit search reply and of a 3-table status,
in this tree and (``--base``) another tree of the package, each in its own process, alternated.

    git archive 9f0dcc0 | tar -x -C /tmp/base     # e.g. the hand-written codec, before it was derived
    python tests/benchmarks/wire_encode.py --base /tmp/base [--rounds 3]

The models are built by keyword where both trees take them; a tree whose models take another shape
(a version's features) is not asked for that one. Best of 5 x 20,000 calls per round.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

MEASURE = r"""
import timeit
from lancelot_cli import models as m
from lancelot_cli.wire import to_json

meta = {"page": 3, "chunk": 1, "path": "a/b.md", "heading": "Refunds > Policy"}
hits = tuple(
    m.Hit(id=f"a#{i}", score=1.0, matched=0.5, title="T", source="a.md", snippet="s" * 200,
          metadata=meta, ranks={"bm25": 1, "vector": 2}, strength=0.5)
    for i in range(10)
)
search = m.SearchResult("refund policy", "docs", "hybrid", "rrf", hits=hits, note="n")
table = m.TableStatus(name="t", rows=3, version=2, updated_at="2024", fts_columns=("text",),
                      vectors=(m.VectorStatus("vector", 3, "mini", 1),), embedding_model="mini", languages=("en",))
status = m.Status(
    connection=m.Connection(path="/db", ok=True, store="local"),
    tables=(table, table, table),
    embeddings=m.Embeddings(available=True, key_source="env", model="m", dimensions=3, base_url=None),
    defaults=m.Defaults(table="documents", text_column="text", vector_column="vector", limit=10, context_budget=8000),
)
for name, reply in (("search", search), ("status", status)):
    best = min(timeit.repeat(lambda: to_json(reply), number=20000, repeat=5)) / 20000
    print(name, round(best * 1e6, 1))
"""


def measure(tree: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", MEASURE], env=env, capture_output=True, text=True, check=True)
    return {name: float(value) for name, value in (line.split() for line in out.stdout.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("load", os.getloadavg()[0])
    for _ in range(args.rounds):
        here, base = measure(HERE), measure(args.base)
        print(" ".join(f"{k}: {here[k]} µs (base {base[k]} µs, {here[k] / base[k]:.2f}x)" for k in here))
    print("load", os.getloadavg()[0])


if __name__ == "__main__":
    main()
