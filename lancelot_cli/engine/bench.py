"""A retrieval check on a user's own questions (`lancelot bench`): MRR@10, success@k and the misses.

Each question is searched as a person or an agent would search it (``Engine.search`` with its
defaults, 10 hits), once per mode (text, auto); a hit answers it when its id is one of the expected
ids (``path#N``) or its source one of the expected sources. A question may carry ``queries``, other
phrasings as an agent would send them (the tools' ``queries``): then each mode is run again with
them ("text+queries", "auto+queries"), so the gain on a user's own folder shows. Read-only, like
every engine call.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lancelot_cli.errors import InvalidArgumentError
from lancelot_cli.models import Hit, SearchType

if TYPE_CHECKING:
    from lancelot_cli.engine.facade import Engine

DEPTH = 10  # hits asked for: MRR@10 and success@10 need no more
SUCCESS_AT = (1, 3, 10)
SHOWN = 3  # hits shown for each miss
_ID = re.compile(r"#\d+$")


@dataclass(frozen=True)
class Question:
    line: int  # in the file, from 1 (a miss names it)
    text: str
    expected: tuple[str, ...]  # sources, or ids (``path#N``)
    queries: tuple[str, ...] = ()  # other phrasings of ``text``, sent as the tools' ``queries``


@dataclass(frozen=True)
class Miss:
    question: Question
    top: tuple[Hit, ...]  # the first SHOWN hits returned


@dataclass
class ModeScore:
    """One mode's scores over all questions."""

    mode: str  # a search type, "+queries" when the phrasings were sent too
    reciprocal: list[float] = field(default_factory=list)  # 1/rank of the first answer, 0 when none in DEPTH
    ran: Counter[str] = field(default_factory=Counter)  # the search that ran: "hybrid" 40
    misses: list[Miss] = field(default_factory=list)

    @property
    def mrr(self) -> float:
        return sum(self.reciprocal) / len(self.reciprocal) if self.reciprocal else 0.0

    def success(self, k: int) -> float:
        """Share of the questions answered within the first ``k`` hits."""
        hits = sum(1 for r in self.reciprocal if r >= 1 / k)
        return hits / len(self.reciprocal) if self.reciprocal else 0.0


def read_questions(path: Path) -> list[Question]:
    """The questions of a JSON Lines file: ``{"question": ..., "expected": "a.md" | ["a.md", "b.md#2"]}``
    (``source`` or ``id`` may stand for ``expected``); blank lines are skipped. A bad line is an
    error naming it, so a typo is not scored as a miss."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(f"cannot read {path}: {exc}") from None
    found = [_question(n, line, path) for n, line in enumerate(lines, start=1) if line.strip()]
    if not found:
        raise InvalidArgumentError(f"{path} holds no questions; write one JSON object per line: {_SHAPE}")
    return found


_SHAPE = '{"question": "how do refunds work?", "expected": "policies/refunds.md"}'


def _question(number: int, line: str, path: Path) -> Question:
    where = f"{path}:{number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(f"{where} is not JSON ({exc.msg}); write one object per line: {_SHAPE}") from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"{where} is not a JSON object; write {_SHAPE}")
    text = data.get("question", data.get("query"))
    # "answers" before "id": a known-item file's "id" names the question, not an expected chunk (issue 39).
    wanted: Any = next((data[k] for k in ("expected", "answers", "source", "id") if k in data), None)
    if isinstance(wanted, str):
        wanted = [wanted]
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f'{where} has no "question" (a string); write {_SHAPE}')
    if not isinstance(wanted, list) or not wanted or not all(isinstance(w, str) and w for w in wanted):
        raise InvalidArgumentError(f'{where} has no "expected" (a source or id, or a list of them); write {_SHAPE}')
    queries = data.get("queries", [])
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise InvalidArgumentError(f'{where}: "queries" must be a list of strings (other phrasings of the question)')
    return Question(number, text, tuple(wanted), tuple(queries))


def answers(hit: Hit, expected: Iterable[str]) -> bool:
    """An expected id (``path#N``) is answered by that chunk, an expected source by any of its chunks.
    Either may name the end of the path (``tutorial/cors.md`` for ``en/docs/tutorial/cors.md``): questions
    are often written against a folder below the one indexed."""
    return any(_same(hit.id if _ID.search(want) else hit.source, want) for want in expected)


def _same(found: str, want: str) -> bool:
    return found == want or found.endswith("/" + want.lstrip("/"))


def score(
    engine: Engine,
    questions: Sequence[Question],
    modes: Sequence[SearchType] = ("text", "auto"),
    table: str | None = None,
) -> list[ModeScore]:
    """Each mode's scores over ``questions``; when any question has phrasings, each mode again with them."""
    phrased = any(q.queries for q in questions)
    scores = []
    for mode, with_queries in [(m, False) for m in modes] + ([(m, True) for m in modes] if phrased else []):
        result = ModeScore(f"{mode}+queries" if with_queries else mode)
        for question in questions:
            found = engine.search(
                question.text,
                limit=DEPTH,
                search_type=mode,
                table=table,
                queries=question.queries if with_queries else None,
            )
            result.ran[found.search_type] += 1
            rank = next((n for n, hit in enumerate(found.hits, start=1) if answers(hit, question.expected)), None)
            result.reciprocal.append(1 / rank if rank else 0.0)
            if rank is None:
                result.misses.append(Miss(question, found.hits[:SHOWN]))
        scores.append(result)
    return scores


def to_data(scores: Sequence[ModeScore], table: str, questions: int) -> dict[str, Any]:
    """The ``--json`` form: per mode, the figures, what ran, and the misses with their top hits."""
    return {
        "table": table,
        "questions": questions,
        "modes": {
            s.mode: {
                "mrr10": round(s.mrr, 4),
                "success": {str(k): round(s.success(k), 4) for k in SUCCESS_AT},
                "ran": dict(s.ran),
                "misses": [
                    {
                        "line": miss.question.line,
                        "question": miss.question.text,
                        "expected": list(miss.question.expected),
                        "top": [{"id": h.id, "source": h.source, "title": h.title, "score": h.score} for h in miss.top],
                    }
                    for miss in s.misses
                ],
            }
            for s in scores
        },
    }
