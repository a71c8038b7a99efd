"""Shared fixtures: an isolated config dir, the sample documents, real LanceDB databases in tmp
folders, a real OpenAI-compatible embeddings server on 127.0.0.1, and the anyio backend; plus the
rule that a test which starts a process is marked ``slow`` (tests/support/spawns.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lancelot_cli.settings import ENVIRONMENT
from tests.support import spawns
from tests.support.embed_server import MODEL, EmbedServer, embed

REPO = Path(__file__).resolve().parent.parent

# A shell started without job control (`cmd &` in a script, some CI runners) starts its background
# jobs with SIGINT ignored, and a child inherits that: the commands the tests start would then not
# see the Ctrl-C the tests send them. A handler (unlike an ignore) is reset to the default at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
SAMPLE_DOCS = REPO / "examples" / "sample-docs"

spawns.install()
_STARTED = pytest.StashKey[int]()  # processes started before the phase being reported


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Fail a test that is not marked ``slow`` but started a process (in its set-up, with the
    fixtures it asked for, or its call), so that ``pytest -m "not slow"`` stays an inner loop."""
    report: pytest.TestReport = yield
    count = spawns.started()
    before = item.stash.get(_STARTED, count)
    item.stash[_STARTED] = count
    if count > before and report.passed and call.when != "teardown" and item.get_closest_marker("slow") is None:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started {count - before} process(es) during its {call.when} "
            f"({', '.join(spawns.programs(before))}) but is not marked slow: mark it "
            f"@pytest.mark.slow, or test the same thing in-process"
        )
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_STARTED] = spawns.started()


# Variables that would leak the developer's own set-up into a test: every one Lancelot reads (from
# the settings table, so a new setting is cleared without anyone remembering to), plus colour.
# LANCELOT_CONFIG_DIR is set again by `isolated_env`.
_LEAKY = [*ENVIRONMENT, "NO_COLOR", "FORCE_COLOR"]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """`@pytest.mark.anyio` tests run on asyncio only (the MCP SDK's own backend)."""
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test gets its own config dir and no key; the machine's keychain is never touched."""
    for name in _LEAKY:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("LANCELOT_CONFIG_DIR", str(config))
    # the int8 copies of local models (local_embed.quantized) go to a cache of the session's own
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.delenv("LANCELOT_LOCAL_INT8", raising=False)
    monkeypatch.setenv("LANCELOT_WARM", "0")  # no background server unless a test asks (tests/test_background.py)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("COLUMNS", "120")
    return config


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a spawned `lancelot` (StdioServerParameters passes only a few variables)."""
    # The test's own config folder and LANCELOT_WARM=0 (set by `isolated_env`) go along; the rest of _LEAKY does not.
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY or k in ("LANCELOT_CONFIG_DIR", "LANCELOT_WARM")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def lancelot_command() -> list[str]:
    """The installed console script when present, else `python -m lancelot_cli`."""
    script = Path(sys.executable).with_name("lancelot")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lancelot_cli"]


def hash_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, keyed by relative path."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A private copy of the sample documents that a test may change."""
    target = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, target)
    return target


@pytest.fixture(scope="session")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents indexed by `index_folder` once per session. Tests must not write to it."""
    from lancelot_cli.indexer import index_folder

    db = tmp_path_factory.mktemp("sample") / "db"
    index_folder(SAMPLE_DOCS, str(db))
    return db


def sample_words() -> list[str]:
    """The sample documents' text: the vocabulary of the tiny test encoder."""
    return [p.read_text("utf-8", errors="replace") for p in SAMPLE_DOCS.rglob("*") if p.is_file()]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ONNX encoder (tests/support/tiny_onnx.py: 32-d, random weights) whose vocabulary is the
    sample documents' words: a local model for ``--embed-model local:DIR`` with no download. Built
    once per session; a test that moves it away puts it back before it ends."""
    pytest.importorskip("onnx", reason="the tiny test encoder is built with the onnx package")
    from tests.support import tiny_onnx

    return tiny_onnx.build(tmp_path_factory.mktemp("tiny") / "model", sample_words())


@pytest.fixture(scope="session")
def embed_server_session() -> Iterator[EmbedServer]:
    server = EmbedServer().start()
    yield server
    server.stop()


@pytest.fixture
def embed_server(embed_server_session: EmbedServer) -> EmbedServer:
    embed_server_session.reset()
    return embed_server_session


@pytest.fixture(scope="session")
def vector_db(tmp_path_factory: pytest.TempPathFactory, sample_db: Path) -> Path:
    """A copy of the sample table with a 32-d ``vector`` column from the test embedder, its model
    recorded in the table metadata, and the full-text index; plus ``textonly`` (no vectors)."""
    import json

    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    rows = lancedb.connect(str(sample_db)).open_table("documents").to_arrow().to_pylist()
    for row in rows:
        row["vector"] = embed(row["text"])
    db_path = tmp_path_factory.mktemp("vectors") / "db"
    db = lancedb.connect(str(db_path))
    base = pa.Table.from_pylist(rows[:1]).schema
    fields = [f if f.name != "vector" else pa.field("vector", pa.list_(pa.float32(), 32)) for f in base]
    schema = pa.schema(fields, metadata={"lancelot": json.dumps({"embedding_model": MODEL, "dimension": 32})})
    table = db.create_table("documents", data=pa.Table.from_pylist(rows, schema=schema))
    table.create_index("text", config=FTS())
    plain = [{k: v for k, v in row.items() if k != "vector"} for row in rows]
    text_only = db.create_table("textonly", data=pa.Table.from_pylist(plain))
    text_only.create_index("text", config=FTS())
    return db_path


@pytest.fixture
def vector_env(monkeypatch: pytest.MonkeyPatch, embed_server: EmbedServer, vector_db: Path) -> EmbedServer:
    """Environment for vector search against ``vector_db`` through the loopback embeddings server."""
    monkeypatch.setenv("LANCEDB_PATH", str(vector_db))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", embed_server.url)
    monkeypatch.setenv("EMBEDDING_MODEL", MODEL)
    return embed_server


@pytest.fixture
def use_keyring() -> Iterator[Callable[[Any], Any]]:
    """Install a keyring backend for one test (e.g. ``MemoryKeyring()``); the previous one comes back after."""
    import keyring

    previous = keyring.get_keyring()

    def install(backend: Any) -> Any:
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.set_keyring(previous)
