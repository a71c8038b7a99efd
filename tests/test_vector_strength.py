"""A vector search's "no good match" (issue 39): a hit found by meaning is strong when it is close,
whatever words it holds. The share of the query's terms alone called correct first hits no good
match ("make the browser pop up a username and password prompt" finds HTTP Basic Auth, which says
none of "pop", "browser prompt"...), and `lancelot search --type vector` told the person to give up
above the right answer. Off-topic questions are still flagged.

Real vectors: the all-MiniLM-L6-v2 ONNX folder .ci/run builds (MINILM_ONNX_DIR), through the local
provider, on a small documentation folder written here; engine and CLI in-process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.engine.strength import MATCH_FLOOR, SIMILARITY_FLOOR, by_meaning
from tests.support.engines import engine_for

MINILM = os.environ.get("MINILM_ONNX_DIR")

PAGES = {
    "advanced/security/http-basic-auth.md": """# HTTP Basic Auth

For the simplest cases, you can use HTTP Basic Auth. The application expects a header that contains
a username and a password. If it does not receive it, it returns an HTTP 401 "Unauthorized" error
with a `WWW-Authenticate` header whose value is `Basic`, which tells the browser to show its
integrated dialog for a username and password. Then, when you type them, the browser sends them in
the header automatically. Import `HTTPBasic` and `HTTPBasicCredentials` and use the security scheme
as a dependency of your path operation.
""",
    "tutorial/cors.md": """# CORS (Cross-Origin Resource Sharing)

CORS refers to the situations when a frontend running in a browser has JavaScript code that
communicates with a backend, and the backend is in a different origin than the frontend. An origin
is the combination of protocol, domain and port. Add `CORSMiddleware` with the list of allowed
origins, and whether credentials, methods and headers are allowed.
""",
    "tutorial/background-tasks.md": """# Background Tasks

You can define background tasks to be run after returning a response. This is useful for operations
that need to happen after a request, but that the client doesn't really have to be waiting for the
operation to complete before receiving the response, like email notifications or processing data.
Declare a parameter of type `BackgroundTasks` and call `add_task` with the function to run.
""",
    "tutorial/request-files.md": """# Request Files

You can define files to be uploaded by the client using `File`. To receive uploaded files, first
install `python-multipart`, because uploaded files are sent as form data. Use `UploadFile` for large
files: it keeps a spooled file in memory up to a size limit and on disk after that.
""",
    "tutorial/bigger-applications.md": """# Bigger Applications - Multiple Files

If you are building an application or a web API, it is rarely the case that you can put everything
in a single file. `APIRouter` lets you declare path operations in separate modules of a package and
include each router in the main application with `include_router`, with a prefix, tags and
dependencies shared by all of its path operations.
""",
    "deployment/docker.md": """# FastAPI in Containers - Docker

When deploying FastAPI applications a common approach is to build a Linux container image. Write a
Dockerfile that starts from the official Python image, copies the requirements file, installs the
dependencies, copies the code, and runs Uvicorn or the FastAPI CLI as the command.
""",
}
QUESTION = "make the browser pop up a username and password prompt before it can access an endpoint"
ANSWER = "advanced/security/http-basic-auth.md"
OFF_TOPIC = "Vitamin D deficiency during pregnancy raises the risk of multiple sclerosis in the child"


def test_closeness_meets_the_floor_where_similarity_does() -> None:
    """The mapping: cosine SIMILARITY_FLOOR is MATCH_FLOOR, 1 is 1, unrelated is 0, and a hit's share
    of terms is kept when it is higher (a close vector never lowers a strength)."""
    at_floor = 2 - 2 * SIMILARITY_FLOOR  # squared L2 distance of unit vectors at that similarity
    assert by_meaning(0.0, at_floor) == MATCH_FLOOR
    assert by_meaning(None, 0.0) == 1.0
    assert by_meaning(0.0, 2.0) == 0.0 and by_meaning(0.0, 4.0) == 0.0
    assert by_meaning(0.0, at_floor + 0.1) < MATCH_FLOOR < by_meaning(0.0, at_floor - 0.1)
    assert by_meaning(0.75, 2.0) == 0.75


@pytest.fixture(scope="module")
def minilm_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.local_embed import LocalEmbedder

    src = tmp_path_factory.mktemp("site")
    for name, text in PAGES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    db = tmp_path_factory.mktemp("minilm-db") / "db"
    embedder = LocalEmbedder(f"local:{MINILM}")
    index_folder(src, str(db), embed=embedder.embed, model=embedder.model)
    return db


needs_minilm = pytest.mark.skipif(
    not MINILM,
    reason="no real model: set MINILM_ONNX_DIR to a folder made by "
    "../shared/tools/minilm_to_onnx.py (.ci/run builds one)",
)


@pytest.mark.slow
@needs_minilm
def test_a_correct_first_hit_by_meaning_is_not_no_good_match(minilm_db: Path) -> None:
    engine = engine_for(minilm_db)
    found = engine.search(QUESTION, search_type="vector", limit=5)
    assert found.search_type == "vector" and found.hits[0].source == ANSWER
    first = found.hits[0]
    # it holds fewer than half of the query's terms: only its meaning is close
    text = engine.search(QUESTION, search_type="text", limit=5)
    assert all((hit.strength or 0) < MATCH_FLOOR for hit in text.hits if hit.source == ANSWER)
    assert not found.no_good_match, found.note
    assert first.strength is not None and first.strength >= MATCH_FLOOR
    assert "no good match" not in (found.note or "")


@pytest.mark.slow
@needs_minilm
def test_an_off_topic_question_is_still_no_good_match(minilm_db: Path) -> None:
    found = engine_for(minilm_db).search(OFF_TOPIC, search_type="vector", limit=5)
    assert found.hits and found.no_good_match
    assert all((hit.strength or 0) < MATCH_FLOOR for hit in found.hits)
    assert found.note and found.note.startswith(
        "no good match: no hit holds half of the query's terms and none is close in meaning"
    )


@pytest.mark.slow
@needs_minilm
def test_the_cli_says_nothing_of_no_good_match_above_the_right_answer(minilm_db: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["search", QUESTION, "--type", "vector", "--db", str(minilm_db), "-n", "3"])
    assert result.exit_code == 0, result.output
    assert "no good match" not in result.stderr and "not found" not in result.stderr
    assert result.stdout.splitlines()[1].strip().startswith(ANSWER)
    reply = json.loads(
        runner.invoke(app, ["search", QUESTION, "--type", "vector", "--db", str(minilm_db), "--json"]).stdout
    )
    assert "noGoodMatch" not in reply and reply["hits"][0]["source"] == ANSWER
