"""Search quality that must not regress, fast enough for the default run: exact identifiers, queries
without words, phrases, snippet size, and `index --embed` behaviour (vectors reused, retries, a
rejected key, a model mismatch). The retrieval benchmark on SciFact is tests/benchmarks/quality.py.

Everything runs against real LanceDB tables in tmp folders and the loopback embeddings server of
tests/support/embed_server.py (through the real ``openai`` client).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lancelot_cli.cli.app import app
from lancelot_cli.engine import Engine
from lancelot_cli.errors import EmbeddingError, IndexingError
from lancelot_cli.indexer import index_folder, rows_for
from lancelot_cli.indexer.sources import read_document
from lancelot_cli.providers import OpenAIEmbedder
from lancelot_cli.settings import load
from tests.conftest import SAMPLE_DOCS, hash_tree
from tests.support.embed_server import MODEL, EmbedServer
from tests.support.engines import engine_for, wired

SNIPPET_MAX = 310

# Small documents, each holding one identifier the way notes and code docs write them.
IDENTIFIER_DOCS = {
    "notes/settings.md": "# Settings\n\nMAX_SAVED limits how many drafts are kept; the default is 50.\n",
    "notes/decisions.md": "# Decision log\n\nDEC-0054: keep the full-text index next to the table.\n",
    "notes/pricing.md": "# Pricing\n\nThe kit_prices table holds one row per kit and currency.\n",
    "notes/client.md": "# Client set-up\n\nCall `createClient()` with the base URL before any request.\n",
    "notes/changelog.md": "# Changelog\n\nProtocol version 2025-06-18 adds structured tool output.\n",
}
IDENTIFIERS = {
    "MAX_SAVED": "notes/settings.md",
    "DEC-0054": "notes/decisions.md",
    "kit_prices": "notes/pricing.md",
    "createClient": "notes/client.md",
    "2025-06-18": "notes/changelog.md",
}
# Near misses: the identifiers' parts, more often, but never the identifier itself.
NEAR_MISSES = {
    "notes/limits.md": "# Limits\n\nThe max number of saved searches is ten; saved drafts past the max are dropped. "
    "Max saved size is 1 MB.\n",
    "notes/kits.md": "# Kits\n\nKit prices vary: each kit lists prices per item, and kit prices change yearly.\n",
    "notes/releases.md": "# Releases\n\nReleased 2025-05-18, 2024-06-18 and 2025-06-11; the 18 June 2025 build "
    "was withdrawn.\n",
    "notes/other-decisions.md": "# Other decisions\n\nDEC-0053 and DEC-0055 were rejected in Dec; see the Dec notes.\n",
    "notes/clients.md": "# Clients\n\nEach client can create a client record; create one client per shop.\n",
}


def write_docs(root: Path, docs: dict[str, str]) -> None:
    for rel, text in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def sha_of_tree(root: Path) -> str:
    return hashlib.sha256(repr(sorted(hash_tree(root).items())).encode()).hexdigest()


@pytest.fixture(scope="module")
def identifier_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents plus IDENTIFIER_DOCS, indexed text-only."""
    import shutil

    src = tmp_path_factory.mktemp("ids") / "docs"
    shutil.copytree(SAMPLE_DOCS, src)
    write_docs(src, IDENTIFIER_DOCS)
    db = src.parent / "db"
    index_folder(src, str(db))
    return db


@pytest.fixture(scope="module")
def near_miss_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("near") / "docs"
    write_docs(src, {**IDENTIFIER_DOCS, **NEAR_MISSES})
    db = src.parent / "db"
    index_folder(src, str(db))
    return db


# -- identifiers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("search_type", ["text", "auto"])
@pytest.mark.parametrize("identifier", list(IDENTIFIERS))
def test_identifier_is_the_top_hit(
    identifier: str, search_type: str, identifier_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = wired(engine_for(identifier_db, monkeypatch)).search(identifier, search_type=search_type)
    assert reply["searchType"] == "text" and reply["ranking"] == "bm25"
    assert reply["hits"], reply
    assert reply["hits"][0]["source"] == IDENTIFIERS[identifier], [h["source"] for h in reply["hits"][:3]]
    assert reply["hits"][0]["matched"] == 1.0


# The tokenizer splits identifiers into parts (MAX_SAVED -> max + save), so a note that repeats
# the parts would win on BM25 alone; the engine puts literal matches of a looked-up identifier first.
@pytest.mark.parametrize("identifier", ["DEC-0054", "createClient", "MAX_SAVED", "kit_prices", "2025-06-18"])
def test_identifier_beats_near_misses(identifier: str, near_miss_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents that hold the identifier's parts, but not the identifier, must rank below it."""
    reply = wired(engine_for(near_miss_db, monkeypatch)).search(identifier, search_type="text", limit=5)
    assert reply["hits"][0]["source"] == IDENTIFIERS[identifier], [h["source"] for h in reply["hits"][:3]]


# -- queries without words, phrases, snippets -----------------------------------------------------


@pytest.mark.parametrize("search_type", ["text", "auto"])
@pytest.mark.parametrize("query", ["", "   ", "the of and", "to be or not to be", "!!! ??", "--- ... ;;", '""', "()"])
def test_query_without_searchable_words_gives_no_hits_and_no_error(
    query: str, search_type: str, sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = wired(engine_for(sample_db, monkeypatch)).search(query, search_type=search_type)
    assert reply["count"] == 0 and reply["hits"] == []
    assert reply["searchType"] == "text"


def test_empty_query_with_vectors_gives_no_hits(vector_env: EmbedServer) -> None:
    reply = wired(Engine(load())).search("", search_type="auto")
    assert reply["count"] == 0


def test_quoted_phrase_matches_the_words_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "docs"
    write_docs(
        src,
        {
            "a.md": "# A\n\nThe red apple fell from the tree.\n",
            "b.md": "# B\n\nAn apple that is red; red is the colour of the apple.\n",
            "c.md": "# C\n\nNothing about fruit here.\n",
        },
    )
    index_folder(src, str(tmp_path / "db"))
    engine = wired(engine_for(tmp_path / "db", monkeypatch))
    phrase = engine.search('"red apple"', search_type="text")
    words = engine.search("red apple", search_type="text")
    assert [h["source"] for h in phrase["hits"]] == ["a.md"]
    assert {h["source"] for h in words["hits"]} == {"a.md", "b.md"}


@pytest.mark.parametrize(
    "query",
    [
        "refund",
        "lost parcel claim form",
        "warranty repair",
        "a the of in to",
        "gift cards store credit online orders refund policy",
    ],
)
def test_snippets_stay_short(query: str, sample_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reply = wired(engine_for(sample_db, monkeypatch)).search(query, limit=20)
    assert all(len(hit["snippet"]) <= SNIPPET_MAX for hit in reply["hits"]), [len(h["snippet"]) for h in reply["hits"]]


def test_snippet_of_a_long_chunk_is_short_and_holds_the_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filler = " ".join(f"word{i}" for i in range(900))
    write_docs(tmp_path / "docs", {"long.md": f"# Long\n\n{filler} needle in the middle {filler}\n"})
    index_folder(tmp_path / "docs", str(tmp_path / "db"), chunk_size=20_000)
    hit = wired(engine_for(tmp_path / "db", monkeypatch)).search("needle", search_type="text")["hits"][0]
    assert len(hit["snippet"]) <= SNIPPET_MAX
    assert "needle" in hit["snippet"]


# -- index --embed ------------------------------------------------------------------------------


def embedder(server: EmbedServer, key: str = "sk-test"):  # type: ignore[no-untyped-def]
    return OpenAIEmbedder(key, MODEL, server.url, max_retries=2).embed


def chunk_hashes(root: Path, rel: str) -> set[str]:
    return {row["hash"] for row in rows_for(read_document(root, rel))}


def test_embed_rerun_embeds_only_changed_chunks(docs: Path, tmp_path: Path, embed_server: EmbedServer) -> None:
    db = str(tmp_path / "db")
    first = index_folder(docs, db, embed=embedder(embed_server), model=MODEL)
    assert first.embedded == first.chunks > 0
    assert embed_server.inputs == first.chunks

    before = embed_server.inputs
    again = index_folder(docs, db, embed=embedder(embed_server), model=MODEL)
    assert (again.embedded, again.committed) == (0, False)
    assert embed_server.inputs == before

    edited = "policies/refunds.md"
    old = chunk_hashes(docs, edited)
    path = docs / edited
    path.write_text(path.read_text(encoding="utf-8").replace("refund", "reimbursement"), encoding="utf-8")
    changed = chunk_hashes(docs, edited) - old
    assert changed
    third = index_folder(docs, db, embed=embedder(embed_server), model=MODEL)
    assert third.embedded == len(changed)
    assert embed_server.inputs - before == len(changed)


def test_cli_embed_survives_a_429(
    docs: Path, tmp_path: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", embed_server.url)
    monkeypatch.setenv("EMBEDDING_MODEL", MODEL)
    embed_server.fail_next = [429]
    result = CliRunner().invoke(app, ["index", str(docs), str(tmp_path / "db"), "--embed", "--json"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert embed_server.fail_next == []
    import json

    summary = json.loads(result.stdout)
    assert summary["embedded"] == summary["chunks"] > 0
    assert embed_server.inputs >= summary["chunks"]
    reply = wired(engine_for(tmp_path / "db", monkeypatch)).search("refund store credit", search_type="hybrid")
    assert reply["searchType"] == "hybrid" and reply["count"] > 0


def test_rejected_key_leaves_the_table_unchanged(
    docs: Path, tmp_path: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    index_folder(docs, str(db))  # text only
    before = sha_of_tree(db)
    embed_server.api_key = "other"
    with pytest.raises((IndexingError, EmbeddingError)) as caught:
        index_folder(docs, str(db), embed=embedder(embed_server, "sk-test"), model=MODEL)
    message = str(caught.value)
    assert "401" in message and "OPENAI_API_KEY" in message
    assert sha_of_tree(db) == before

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", embed_server.url)
    monkeypatch.setenv("EMBEDDING_MODEL", MODEL)
    result = CliRunner().invoke(app, ["index", str(docs), str(db), "--embed"])
    assert result.exit_code == 1
    assert "401" in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert sha_of_tree(db) == before


@pytest.mark.parametrize("search_type", ["auto", "hybrid", "vector"])
def test_model_mismatch_falls_back_to_text_naming_both_models(
    search_type: str, docs: Path, tmp_path: Path, embed_server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "db"
    index_folder(docs, str(db), embed=embedder(embed_server), model=MODEL)
    requests = embed_server.requests
    engine = wired(
        engine_for(
            db, monkeypatch, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=embed_server.url, EMBEDDING_MODEL="other-model"
        )
    )
    reply = engine.search("refund store credit", search_type=search_type)
    assert reply["searchType"] == "text" and reply["count"] > 0
    assert MODEL in reply["note"] and "other-model" in reply["note"]
    assert embed_server.requests == requests  # no query vector was asked for


# -- title, heading path and file path; chunks per document (issue 12) ------------------------------

# "Sequences" names the topic only in its title and its path; the FAQ paragraph repeats the words.
FIELD_DOCS = {
    "reference/sequences.md": "# Sequences\n\nA sequence generator hands out unique numbers; nextval advances it "
    "and currval reads the value last returned in this session.\n",
    "faq.md": "# Questions\n\nHow do I reset a counter? Counters, sequences and sequences of steps: see the "
    "sequences page for sequences.\n",
    "guides/backup.md": "# Backups\n\nCopy the data folder while the server is stopped.\n",
    "auth/tokens.md": "# Access\n\nEach request carries a bearer value that expires after an hour.\n",
}


@pytest.fixture(scope="module")
def field_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("fields") / "docs"
    write_docs(src, FIELD_DOCS)
    db = src.parent / "db"
    index_folder(src, str(db))
    return db


def test_title_and_path_are_searched_with_weights(field_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = wired(engine_for(field_db, monkeypatch))
    # The page titled "Sequences" beats the paragraph that repeats the word four times.
    assert engine.search("sequences", search_type="text")["hits"][0]["source"] == "reference/sequences.md"
    # A folder name is found through the file path, though no text says "auth".
    assert [h["source"] for h in engine.search("auth", search_type="text")["hits"]] == ["auth/tokens.md"]
    status = engine.status()["tables"][0]
    assert set(status["fullTextColumns"]) == {"text", "title", "heading", "path"}
    assert status["fullTextCoverage"]["indexed"] == len(FIELD_DOCS)  # per row, not summed over indexes


def test_quoted_phrase_searches_the_text_only(field_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hits = wired(engine_for(field_db, monkeypatch)).search('"unique numbers"', search_type="text")["hits"]
    assert [h["source"] for h in hits] == ["reference/sequences.md"]


def test_table_indexed_before_gets_the_field_indexes_on_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lancedb

    from lancelot_cli.storage.schema import FIELD_INDEX_NAMES

    src = tmp_path / "docs"
    write_docs(src, FIELD_DOCS)
    db = tmp_path / "db"
    index_folder(src, str(db))
    table = lancedb.connect(str(db)).open_table("documents")
    for name in FIELD_INDEX_NAMES.values():  # as an older Lancelot left it: the text index only
        table.drop_index(name)
    engine = wired(engine_for(db, monkeypatch))
    before = engine.search("sequences", search_type="text")
    assert before["hits"] and engine.status()["tables"][0]["fullTextColumns"] == ["text"]
    index_folder(src, str(db))  # nothing changed in the files: only the indexes are built
    assert set(engine.status()["tables"][0]["fullTextColumns"]) == {"text", "title", "heading", "path"}
    assert engine.search("auth", search_type="text")["hits"][0]["source"] == "auth/tokens.md"


@pytest.fixture(scope="module")
def long_page_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One long page whose every section mentions the query, and five short pages that do once."""
    src = tmp_path_factory.mktemp("long") / "docs"
    sections = "".join(f"## Part {n}\n\n" + f"Vacuum part {n} reclaims storage. " * 30 + "\n\n" for n in range(12))
    docs = {"manual.md": "# Manual\n\n" + sections}
    docs.update(
        {f"short{n}.md": f"# Note {n}\n\nA note that mentions vacuum once, and other things.\n" for n in range(5)}
    )
    write_docs(src, docs)
    db = src.parent / "db"
    index_folder(src, str(db), chunk_size=800)
    return db


def test_at_most_two_chunks_of_a_document_by_default(long_page_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = wired(engine_for(long_page_db, monkeypatch))
    hits = engine.search("vacuum", limit=10, search_type="text")["hits"]
    sources = [h["source"] for h in hits]
    assert sources[:2] == ["manual.md", "manual.md"]
    assert sorted(sources[2:7]) == [f"short{n}.md" for n in range(5)]
    # Fewer documents than the limit: the held-back chunks follow, best first.
    assert len(hits) == 10 and sources[7:] == ["manual.md"] * 3
    every = [h["source"] for h in engine.search("vacuum", limit=10, search_type="text", per_document=0)["hits"]]
    assert every == ["manual.md"] * 10
    three = [h["source"] for h in engine.search("vacuum", limit=6, search_type="text", per_document=3)["hits"]]
    assert three[:3] == ["manual.md"] * 3 and "manual.md" not in three[3:]


@pytest.mark.parametrize("value", [-1, 201, 1.5, True, "2"])
def test_per_document_must_be_a_small_whole_number(
    value: object, sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lancelot_cli.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="perDocument must be a whole number from 0"):
        wired(engine_for(sample_db, monkeypatch)).search("refund", per_document=value)


def test_per_document_through_the_cli_and_the_tool(long_page_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import anyio
    from mcp import Client

    from lancelot_cli.server.app import build_server

    monkeypatch.setenv("LANCEDB_PATH", str(long_page_db))

    def sources(args: list[str]) -> list[str]:
        result = CliRunner().invoke(app, ["search", "vacuum", "--type", "text", "-n", "6", "--json", *args])
        assert result.exit_code == 0, result.output
        return [hit["source"] for hit in json.loads(result.stdout)["hits"]]

    assert sources([]).count("manual.md") == 2
    assert sources(["--per-document", "0"]) == ["manual.md"] * 6

    async def tool(arguments: dict[str, object]) -> list[str]:
        async with Client(build_server(load())) as client:
            reply = await client.call_tool(
                "lancedb_search", {"query": "vacuum", "searchType": "text", "limit": 6, **arguments}
            )
            return [hit["source"] for hit in json.loads(reply.content[0].text)["hits"]]

    assert anyio.run(tool, {}).count("manual.md") == 2
    assert anyio.run(tool, {"perDocument": 0}) == ["manual.md"] * 6
    assert anyio.run(tool, {"perDocument": 3}).count("manual.md") == 3


def test_a_kept_engine_sees_new_rows_columns_and_a_rebuilt_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine keeps a folder's table handle and facts between calls (issue 13): a re-index, a
    front-matter column added by it, a --rebuild and a removed table are all seen at once."""
    import os
    import shutil

    from lancelot_cli.errors import TableNotFoundError
    from lancelot_cli.storage.read.database import SETTLED_NS

    src, db = tmp_path / "docs", tmp_path / "db"
    write_docs(src, {"a.md": "# Alpha\n\napples and pears\n"})
    index_folder(src, str(db))
    engine = wired(engine_for(db, monkeypatch))
    assert [h["source"] for h in engine.search("apples")["hits"]] == ["a.md"]
    # The last commit as if past the settling time (instead of waiting for it): the next search
    # notes the folder's new time, and the one after takes the table's facts from the cache.
    versions = db / "documents.lance" / "_versions"
    settled = versions.stat().st_mtime_ns - 2 * SETTLED_NS
    os.utime(versions, ns=(settled, settled))
    for _ in range(2):
        assert [h["source"] for h in engine.search("apples")["hits"]] == ["a.md"]
    write_docs(src, {"b.md": "---\nkind: note\n---\n# Beta\n\nbananas and apples\n"})
    index_folder(src, str(db))
    assert [h["source"] for h in engine.search("bananas", filters={"kind": "note"})["hits"]] == ["b.md"]
    index_folder(src, str(db), rebuild=True)
    assert [h["source"] for h in engine.search("bananas")["hits"]] == ["b.md"]
    shutil.rmtree(db / "documents.lance")
    with pytest.raises(TableNotFoundError):
        engine.search("apples")


@pytest.mark.parametrize(
    "text",
    [
        "The \u212aelvin scale",
        "a \u017fpecial long s",
        "\u0130stanbul and \u0131zmir",
        "Stra\u00dfe, \u03a3\u0391\u03a3 and plain words",
    ],
)
def test_snippet_finds_words_as_ignorecase_does(text: str) -> None:
    """The fast path of the snippet search (str.find on lower-cased text) is taken only where it
    finds what re.IGNORECASE finds: these letters match ASCII ones, so the regular expression runs."""
    import re

    from lancelot_cli.textmatch import snippet

    long_text = ("filler " * 60) + text + (" filler" * 60)
    for word in ("kelvin", "special", "istanbul", "izmir", "words", "σας"):
        cut = snippet(long_text, [word], 80)
        if re.search(re.escape(word), long_text, re.I):
            assert re.search(re.escape(word), cut, re.I), (word, cut)
