"""Local embeddings end to end, offline: a tiny random-weight ONNX encoder built here (tests/support/
tiny_onnx.py) is indexed with `--embed-model local:DIR`, searched hybrid with no key by the engine,
the in-memory MCP server and a spawned one, guarded against another model, and shown by status.

Skipped, with the reason, where the `local` extra (fastembed, onnx, tokenizers) is not installed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastembed", reason="local embeddings need the local extra: pip install -e '.[local]'")
pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")

from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.server.app import build_server
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, lancelot_command, sample_words, subprocess_env
from tests.support.engines import engine_for
from tests.support.terminal import read_all


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="lancelot")


@pytest.fixture(scope="module")
def local_db(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents indexed with the tiny local model (module-wide; tests must not write)."""
    db = tmp_path_factory.mktemp("localdb") / "db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EMBEDDING_"))}
    with pytest.MonkeyPatch.context() as mp:
        for name in set(os.environ) - set(env):
            mp.delenv(name)
        result = cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{tiny_model}", "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["embeddingModel"] == f"local:{tiny_model.resolve()}"
    assert summary["embedded"] > 0
    return db


def test_auto_search_is_hybrid_with_no_key_and_vector_search_runs(local_db: Path) -> None:
    hybrid = engine_for(local_db).search("refund store credit")
    assert (hybrid.search_type, hybrid.ranking, hybrid.note) == ("hybrid", "rrf", None)
    assert any("refund" in hit.source for hit in hybrid.hits[:3])
    vector = engine_for(local_db).search("refund store credit", search_type="vector")
    assert (vector.search_type, vector.ranking) == ("vector", "distance")
    scores = [hit.score for hit in vector.hits]
    assert scores == sorted(scores) and len(scores) > 1


def test_status_names_the_local_model_and_embeddings_are_available(local_db: Path, tiny_model: Path) -> None:
    status = engine_for(local_db).status()
    table = status.tables[0]
    assert table.embedding_model == f"local:{tiny_model.resolve()}"
    assert table.vectors[0].model == f"local:{tiny_model.resolve()}" and table.vectors[0].dimension == 32
    assert status.embeddings.available and status.embeddings.key_source is None
    result = cli("status", "--db", local_db)
    assert result.exit_code == 0 and f"local:{tiny_model.resolve()}" in result.stdout


def test_an_api_model_table_is_not_queried_with_a_local_model(vector_db: Path, tiny_model: Path) -> None:
    found = engine_for(vector_db, EMBEDDING_MODEL=f"local:{tiny_model}").search("refund")
    assert found.search_type == "text" and "EMBEDDING_MODEL" in found.note


def test_a_missing_model_folder_falls_back_to_text_with_a_note(
    monkeypatch: pytest.MonkeyPatch, tiny_model: Path, tmp_path: Path
) -> None:
    moved = tmp_path / "model"
    shutil.copytree(tiny_model, moved)
    db = tmp_path / "db"
    assert cli("index", SAMPLE_DOCS, db, "--embed-model", f"local:{moved}").exit_code == 0
    shutil.rmtree(moved)
    monkeypatch.setattr("lancelot_cli.local_embed._shared", {})  # as in a new process (a server)
    found = engine_for(db).search("refund")
    assert found.search_type == "text" and "does not exist" in found.note
    assert engine_for(db).search("refund", search_type="text").note is None


def test_reindex_embeds_only_changed_chunks(tiny_model: Path, docs: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = json.loads(cli("index", docs, db, "--embed-model", f"local:{tiny_model}", "--json").stdout)
    again = json.loads(cli("index", docs, db, "--embed", "--json").stdout)  # no key: the table's model
    assert first["embedded"] > 0 and again["embedded"] == 0
    assert again["embeddingModel"] == first["embeddingModel"] == f"local:{tiny_model.resolve()}"
    (docs / "policies" / "refunds.md").write_text("# Refunds\n\nRefunds are paid back as store credit.\n")
    changed = json.loads(cli("index", docs, db, "--embed", "--json").stdout)
    assert 1 <= changed["embedded"] < first["embedded"]
    assert changed["embeddingModel"] == first["embeddingModel"]


def test_index_with_a_bad_local_model_is_one_line_and_exit_1(docs: Path, tmp_path: Path) -> None:
    result = cli("index", docs, tmp_path / "db", "--embed-model", f"local:{tmp_path / 'nope'}")
    assert result.exit_code == 1 and "does not exist" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "db").exists()


def test_without_the_extra_the_message_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tiny_model: Path, docs: Path, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "fastembed", None)  # `import fastembed` now fails as if not installed
    monkeypatch.setattr("lancelot_cli.local_embed._shared", {})
    result = cli("index", docs, tmp_path / "db", "--embed-model", f"local:{tiny_model}")
    from lancelot_cli.install_hint import install_command

    assert result.exit_code == 1 and install_command("local") in result.stderr  # for this copy (install_hint.py)


@pytest.mark.anyio
async def test_in_memory_server_searches_hybrid_with_no_key(local_db: Path, tiny_model: Path) -> None:
    server = build_server(load(environ={**os.environ, "LANCEDB_PATH": str(local_db)}))
    async with Client(server) as client:
        found = (await client.call_tool("lancedb_search", {"query": "refund store credit"})).structured_content
        status = (await client.call_tool("lancedb_status", {})).structured_content
    assert found["searchType"] == "hybrid" and found["ranking"] == "rrf" and found["hits"]
    assert status["tables"][0]["embeddingModel"] == f"local:{tiny_model.resolve()}"
    assert status["embeddings"]["available"] is True


@pytest.mark.slow
@pytest.mark.anyio
async def test_spawned_server_warms_the_model_and_searches_hybrid(local_db: Path, tmp_path: Path) -> None:
    command = lancelot_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "serve"],
        env=subprocess_env(LANCEDB_PATH=str(local_db), LANCELOT_CONFIG_DIR=str(tmp_path)),
    )
    async with Client(params) as client:
        text = (await client.call_tool("lancedb_search", {"query": "refund", "searchType": "text"})).structured_content
        found = (await client.call_tool("lancedb_search", {"query": "refund store credit"})).structured_content
    assert text["searchType"] == "text"
    assert found["searchType"] == "hybrid" and found.get("note") is None


def test_a_batch_of_mixed_lengths_gives_each_text_its_own_vector_in_order(tiny_model: Path) -> None:
    """Texts run sorted by length (less padding); the vectors come back in the order given, each
    the one the text gets alone."""
    import numpy as np

    from lancelot_cli.local_embed import BATCH, LocalEmbedder

    words = " ".join(sample_words()).split()
    texts = [" ".join(words[i * 7 : i * 7 + 3 + (i * 37) % 150]) for i in range(BATCH + 9)]
    texts[5] = texts[0]  # a repeated text gets the same vector
    embedder = LocalEmbedder(f"local:{tiny_model}")
    together = np.array(embedder.embed(texts))
    alone = np.array([embedder.embed([text])[0] for text in texts])
    assert together.shape == alone.shape
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(together[5], together[0])
    assert not np.allclose(together[1], together[2])


MINILM = os.environ.get("MINILM_ONNX_DIR")
SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"


@pytest.mark.slow
@pytest.mark.skipif(
    not MINILM,
    reason="no real model: set MINILM_ONNX_DIR to a folder made by "
    "../shared/tools/minilm_to_onnx.py (.ci/run builds one)",
)
@pytest.mark.skipif(not (SCIFACT / "corpus.jsonl").exists(), reason="no ../shared/data/scifact")
@pytest.mark.parametrize(("int8", "least", "mean"), [("0", 0.9999, 0.9999), ("1", 0.975, 0.99)])
def test_real_minilm_gives_the_published_vectors(
    monkeypatch: pytest.MonkeyPatch, int8: str, least: float, mean: float
) -> None:
    """all-MiniLM-L6-v2 through the local provider equals sentence-transformers' vectors (the cached
    ones in ../shared/data/scifact), inputs cut to 256 word pieces as there; its int8 copy (the
    default, local_embed.quantized) stays close to them."""
    import numpy as np

    from lancelot_cli import local_embed
    from lancelot_cli.local_embed import LocalEmbedder

    monkeypatch.setenv("LANCELOT_LOCAL_INT8", int8)
    folder = local_embed.quantized(Path(MINILM))
    assert (folder != Path(MINILM)) == (int8 == "1")  # the int8 copy is made (onnx is installed for tests)

    cached = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
    ids = json.loads((cached / "ids.json").read_text())["corpus"][:12]
    corpus = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            corpus[row["_id"]] = f"{row['title']} {row['text']}"
            if len(corpus) >= 50:
                break
    mine = np.array(LocalEmbedder(f"local:{MINILM}").embed([corpus[i] for i in ids]))
    assert mine.shape == (12, 384)
    cosines = (mine * np.load(cached / "corpus.npy")[:12]).sum(axis=1)
    assert float(cosines.min()) > least and float(cosines.mean()) > mean


@pytest.mark.slow
def test_the_progress_bar_names_the_model_that_embeds(tiny_model: Path, docs: Path, tmp_path: Path) -> None:
    """Plain `--embed` on a table of local vectors embeds with the table's model: the bar says so,
    not EMBEDDING_MODEL's API default (the bar is drawn only on a terminal: stderr on a pty)."""
    import pty
    import subprocess

    from lancelot_cli.settings import Settings

    db = tmp_path / "db"
    assert cli("index", docs, db, "--embed-model", f"local:{tiny_model}").exit_code == 0
    for number in range(40):  # enough new chunks for a bar that is drawn at least once
        (docs / f"new-{number}.md").write_text(f"# Note {number}\n\nStore credit note number {number}.\n")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*lancelot_command(), "index", str(docs), str(db), "--embed"],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=subprocess_env(TERM="xterm-256color"),
    )
    os.close(follower)
    output = read_all(leader)
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    shown = output.decode("utf-8", "replace")
    assert f"embedding (local:{tiny_model.resolve()}" in shown.replace("\r", "").replace("\n", ""), shown[-2000:]
    assert Settings().embedding_model not in shown  # the API model plain --embed would have named


# A registry model that is not in fastembed's cache: warming it must not fetch it (a server warms
# after `initialize`, before any call asked for vectors); the first embed may. The hub is a
# recording server on loopback (HF_ENDPOINT) and every other address goes to a closed port.
WARM_OR_EMBED = """
import json, sys
from lancelot_cli import local_embed
from lancelot_cli.errors import EmbeddingError
embedder = local_embed.LocalEmbedder("local:sentence-transformers/all-MiniLM-L6-v2")
if sys.argv[1] == "warm":
    embedder.warm().join(120)
    print(json.dumps({"loaded": embedder.loaded}))
else:
    try:
        embedder.embed(["a query"])
    except EmbeddingError:
        pass
"""


@pytest.mark.slow
def test_warming_an_uncached_registry_model_downloads_nothing(tmp_path: Path) -> None:
    import subprocess
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []
    model_asked = threading.Event()

    class Hub(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            if "all-MiniLM-L6-v2" in self.path:
                model_asked.set()
            self.send_error(404)

        do_HEAD = do_GET  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    hub = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    env = subprocess_env(
        HF_ENDPOINT=f"http://127.0.0.1:{hub.server_address[1]}",
        FASTEMBED_CACHE_PATH=str(tmp_path / "empty-cache"),
        HF_HOME=str(tmp_path / "hf"),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
    )
    env.pop("HF_HUB_OFFLINE", None)

    def run(mode: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", WARM_OR_EMBED, mode], capture_output=True, text=True, timeout=180, env=env
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    try:
        warmed = run("warm")
        assert warmed == {"loaded": False}
        assert asked == []  # nothing fetched by the warm-up, not even huggingface_hub's agent registry
        # The test can fail: a load that may download does ask the hub for the model (fastembed then
        # retries with back-off for ~40 s before it gives up, so the process is stopped once it asked).
        # It asks for `/api/agent-harnesses` first (huggingface_hub 1.33 detects agents for its user agent
        # that way): waiting for the first request stopped it in between on a loaded machine.
        embedding = subprocess.Popen(
            [sys.executable, "-c", WARM_OR_EMBED, "embed"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            deadline = time.monotonic() + 120
            while not model_asked.wait(0.1) and embedding.poll() is None and time.monotonic() < deadline:
                pass
        finally:
            embedding.kill()
            embedding.wait(30)
        assert model_asked.is_set(), asked
    finally:
        hub.shutdown()


def test_status_with_local_vectors_and_no_key_says_index_embed_reuses_the_model(
    local_db: Path, tiny_model: Path, tmp_path: Path
) -> None:
    """Issue 39 #8: it said `index --embed` "needs an OpenAI key" and listed `OPENAI_API_KEY (set)`."""
    result = CliRunner().invoke(app, ["status", "--db", str(local_db)], prog_name="lancelot", env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "needs an OpenAI key" not in out
    assert f"makes them with the table's own local model, no key (documents: local:{tiny_model.resolve()})" in out
    assert "OPENAI_API_KEY (not set) -" in out
    # and it does: --embed with no key, no endpoint, no EMBEDDING_MODEL uses the table's model
    db = tmp_path / "db"
    shutil.copytree(local_db, db)
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    (docs / "new.md").write_text("# New\n\nA note about tents.\n", encoding="utf-8")
    indexed = cli("index", docs, db, "--embed", "--json")
    assert indexed.exit_code == 0, indexed.stderr
    summary = json.loads(indexed.stdout)
    assert summary["embeddingModel"] == f"local:{tiny_model.resolve()}" and summary["embedded"] == 1


def test_search_help_says_a_local_model_needs_no_key() -> None:
    result = CliRunner().invoke(app, ["search", "--help"], prog_name="lancelot", env={"COLUMNS": "100"})
    text = " ".join(result.output.replace("│", " ").split())
    assert "vector: by meaning (needs vectors, and a key unless a local model made them)" in text
    assert "(made by a local model, or a key is set)" in text
