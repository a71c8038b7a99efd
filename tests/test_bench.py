"""`lancelot bench QUESTIONS.jsonl` (issue 24): MRR@10, success@k and the misses, for text and auto."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lancelot_cli.cli.app import app


def _bench(db: Path, questions: Path, *extra: str, **env: str) -> Any:
    return CliRunner().invoke(
        app, ["bench", str(questions), "--db", str(db), *extra], prog_name="lancelot", env={"LANCELOT_WARM": "0", **env}
    )


def _questions(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "\n", encoding="utf-8")
    return path


def test_bench_scores_each_mode_and_lists_the_misses_with_what_came_instead(sample_db: Path, tmp_path: Path) -> None:
    questions = _questions(
        tmp_path,
        {"question": "how do refunds work?", "expected": "policies/refunds.md"},
        {"question": "warranty", "expected": ["nope.md", "policies/warranty.md"]},
        {"question": "refund", "expected": "guides/repairs.md#99"},  # no such chunk: a miss
    )
    result = _bench(sample_db, questions, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["questions"] == 3 and set(data["modes"]) == {"text", "auto"}
    text = data["modes"]["text"]
    assert text["ran"] == {"text": 3}
    assert text["success"]["10"] == round(2 / 3, 4)
    assert 0 < text["mrr10"] <= round(2 / 3, 4)
    [miss] = text["misses"]
    assert miss["line"] == 3 and miss["expected"] == ["guides/repairs.md#99"]
    assert len(miss["top"]) == 3 and all({"id", "source", "title", "score"} <= set(h) for h in miss["top"])

    shown = _bench(sample_db, questions)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == "3 questions, table documents"
    assert lines[1].split() == ["mode", "ran", "MRR@10", "success@1", "success@3", "success@10"]
    assert lines[2].split()[:3] == ["text", "text", "3"]
    assert "line 3: refund" in shown.stdout and "expected guides/repairs.md#99" in shown.stdout


def test_an_expected_source_may_name_the_end_of_the_indexed_path(sample_db: Path, tmp_path: Path) -> None:
    questions = _questions(tmp_path, {"question": "refund policy", "source": "refunds.md"})
    data = json.loads(_bench(sample_db, questions, "--json").stdout)
    assert data["modes"]["text"]["success"]["1"] == 1.0


def test_a_bad_line_is_one_line_naming_it(sample_db: Path, tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "refund", "expected": "a.md"}\nnot json\n', encoding="utf-8")
    result = _bench(sample_db, path)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"lancelot: error: {path}:2 is not JSON")
    missing = _bench(sample_db, _questions(tmp_path, {"question": "refund"}))
    assert missing.exit_code == 2 and 'has no "expected"' in missing.stderr
