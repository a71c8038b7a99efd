"""Chinese, Japanese and Korean text in the full-text index (storage/analyzer.py), the words of a
query in those scripts, English terms that must not change, a table from the earlier tokenizer
upgraded in place, and hits that show a person none of the query's words.

Real LanceDB tables made by ``index_folder``; every expected value is read off the fixture texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lancelot_cli.indexer import index_folder
from lancelot_cli.storage.analyzer import FTS_OPTIONS, split_words
from lancelot_cli.textmatch import query_words
from lancelot_cli.wire import to_wire
from tests.support.engines import engine_for

ZH = """# 向量搜索

设置 API 密钥后，Lancelot 使用 OpenAI 嵌入进行向量搜索；未设置时，则进行纯文本匹配。

## 备份

可以用 rsync 备份整个数据库文件夹，恢复时复制回来即可。
"""
JA = """# ベクトル検索

API キーを設定すると、Lancelot は OpenAI の埋め込みを使ってベクトル検索を行います。

## パッケージ管理

aptitude で依存関係を解決するには、まずパッケージの一覧を更新します。
"""
KO = """# 한국어 문서

벡터 검색은 임베딩을 사용합니다. 백업은 rsync 로 합니다.
"""
EN = """# Refund policy

Refunds are issued within 14 days. The MAX_SAVED limit and createClient() are described in auth/tokens.md.
"""


@pytest.fixture(scope="module")
def languages_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("languages-src")
    for name, text in {"zh.md": ZH, "ja.md": JA, "ko.md": KO, "en.md": EN}.items():
        (src / name).write_text(text, encoding="utf-8")
    folder = src / "policies"
    folder.mkdir()
    (folder / "shipping.md").write_text("# Shipping\n\nParcels leave the warehouse on weekdays.\n", encoding="utf-8")
    (src / "archive").mkdir()
    (src / "archive" / "old.md").write_text("# Old notes\n\nNothing here is current.\n", encoding="utf-8")
    db = tmp_path_factory.mktemp("languages-db") / "db"
    index_folder(src, str(db))
    return db


def search(monkeypatch: pytest.MonkeyPatch, db: Path, query: str, **kwargs) -> dict:
    return to_wire(engine_for(db, monkeypatch).search(query, search_type="text", **kwargs))


@pytest.mark.parametrize(
    ("query", "source"),
    [
        ("向量搜索", "zh.md"),  # an unspaced run: one token to LanceDB's default tokenizer
        ("ベクトル検索", "ja.md"),
        ("备份", "zh.md"),  # a word inside a longer run of the text
        ("依存関係", "ja.md"),
        ("벡터 검색", "ko.md"),
    ],
)
def test_words_inside_unspaced_runs_are_found(monkeypatch, languages_db, query, source):
    reply = search(monkeypatch, languages_db, query)
    assert reply["hits"], f"no hits for {query!r}"
    assert reply["hits"][0]["source"] == source
    assert reply["hits"][0]["matched"] == 1.0  # every word of the query is in the hit's text


@pytest.mark.parametrize(
    ("query", "source", "words"),
    [
        ("用 rsync 备份", "zh.md", ["用", "rsync", "备份"]),
        ("aptitude で依存関係", "ja.md", ["aptitude", "依存", "関係"]),  # で (a particle) is not a word to look for
    ],
)
def test_cjk_mixed_with_latin_finds_both_parts(monkeypatch, languages_db, query, source, words):
    assert query_words(query, split_words) == words
    hits = search(monkeypatch, languages_db, query)["hits"]
    assert hits[0]["source"] == source and hits[0]["matched"] == 1.0
    assert all(word in hits[0]["snippet"] for word in words)


def test_a_question_in_words_finds_its_page(monkeypatch, languages_db):
    hits = search(monkeypatch, languages_db, "如何用 rsync 备份数据库？")["hits"]
    assert hits[0]["source"] == "zh.md"
    hits = search(monkeypatch, languages_db, "依存関係を解決するにはどうすればいいですか")["hits"]
    assert hits[0]["source"] == "ja.md"


def test_query_words_split_only_unspaced_scripts():
    assert query_words("ベクトル検索", split_words) == ["ベクトル", "検索"]
    assert query_words("用rsync备份的方法", split_words) == ["用", "rsync", "备份", "方法"]
    # Latin text, accented or not, is split by white space alone, as before
    for query in ("How do refunds work?", "café naïve-approach MAX_SAVED", "createClient auth/tokens.md"):
        assert query_words(query, split_words) == query_words(query)


# The English terms of the text below, as LanceDB's `simple` tokenizer made them up to lancedb 0.40
# (stems, its stop words, identifiers split at punctuation), which English ranking was tuned on.
ENGLISH_TERMS = (
    "refund work run runner ran cafe v1 2 foo bar dec 0054 2025 06 18 e g user set alic api key store".split()
)


def test_english_terms_are_those_of_the_simple_tokenizer():
    """The index's English terms are the ones English ranking was tuned on (LanceDB's `simple`
    tokenizer up to 0.40), so a lancedb release does not move English ranking unnoticed. lancedb
    0.41's `simple` keeps the stop words "don", "t", "s" and "aren" (issue 45 #1); ours, given its
    stop words, did not change."""
    import lancedb

    text = (
        EN + "How do refunds work? Running runners ran through the café; v1.2 foo_bar DEC-0054 "
        "2025-06-18 e.g. don't it's the users' settings. Alice's API keys aren't stored."
    )
    options = {k: v for k, v in FTS_OPTIONS.items() if k not in ("with_position",)}
    ours = [t.text for t in lancedb.tokenize(text, **options)]
    en_terms = [t.text for t in lancedb.tokenize(EN, **options)]
    assert ours[len(en_terms) :] == ENGLISH_TERMS, f"lancedb {lancedb.__version__} analyzes English differently"


def test_a_hit_that_matched_only_its_folder_name_is_left_out(monkeypatch, languages_db):
    """`policies/shipping.md` matches "policy" through its path only: a person sees no query word in it."""
    hits = search(monkeypatch, languages_db, "refund policy")["hits"]
    assert [h["source"] for h in hits] == ["en.md"]
    # a stem counts as a match: "policies" is "policy" to the index
    hits = search(monkeypatch, languages_db, "refund policies")["hits"]
    assert [h["source"] for h in hits] == ["en.md"]


def test_a_search_where_only_paths_match_keeps_those_hits(monkeypatch, languages_db):
    hits = search(monkeypatch, languages_db, "archive")["hits"]
    assert [h["source"] for h in hits] == ["archive/old.md"] and hits[0]["matched"] == 0


def test_a_table_of_the_earlier_tokenizer_is_upgraded_by_the_next_index(monkeypatch, tmp_path):
    """A table whose full-text indexes were built with the earlier options (LanceDB's default
    tokenizer) finds no Chinese word inside a run; the next `index` run, with no file changed,
    rebuilds its indexes with today's analyzer."""
    import lancedb
    from lancedb.index import FTS

    src = tmp_path / "src"
    src.mkdir()
    (src / "zh.md").write_text(ZH, encoding="utf-8")
    db = tmp_path / "db"
    index_folder(src, str(db))
    table = lancedb.connect(str(db)).open_table("documents")
    earlier = FTS(with_position=True, base_tokenizer="simple", remove_stop_words=True, stem=True)
    for index in table.list_indices():
        if str(index.index_type).upper() in ("FTS", "INVERTED"):
            table.create_index(index.columns[0], config=earlier, name=index.name, replace=True)
    assert not search(monkeypatch, db, "向量")["hits"]

    report = index_folder(src, str(db))
    assert (report.read, report.added, report.updated, report.deleted) == (0, 0, 0, 0)
    assert sorted(report.indexes_built) == ["heading", "path", "text", "title"]  # the summary names them
    details = [
        index.index_details
        for index in lancedb.connect(str(db)).open_table("documents").list_indices()
        if str(index.index_type).upper() in ("FTS", "INVERTED")
    ]
    assert details and all(d["base_tokenizer"] == FTS_OPTIONS["base_tokenizer"] for d in details)
    assert search(monkeypatch, db, "向量")["hits"][0]["source"] == "zh.md"


@pytest.mark.parametrize(("folder", "cjk_search"), [("minilm", "text"), ("paraphrase-multilingual-minilm", "hybrid")])
def test_auto_searches_a_cjk_query_by_text_when_the_local_model_is_english(monkeypatch, tmp_path, folder, cjk_search):
    """An English-only local model's vectors pull a Chinese or Japanese query down (measured in
    tests/benchmarks/README.md): auto runs a text search for a query with CJK words, hybrid for
    the rest; a model whose name says multilingual keeps hybrid for both."""
    from lancelot_cli.local_embed import LocalEmbedder
    from tests.support.tiny_onnx import build

    model = build(tmp_path / folder, ["refund", "policy", "kayak"])
    src = tmp_path / "src"
    src.mkdir()
    (src / "zh.md").write_text(ZH, encoding="utf-8")
    (src / "en.md").write_text(EN, encoding="utf-8")
    embedder = LocalEmbedder(f"local:{model}")
    db = tmp_path / "db"
    index_folder(src, str(db), embed=embedder.embed, model=embedder.model)
    engine = engine_for(db, monkeypatch)
    assert engine.search("refund policy").search_type == "hybrid"
    for query in ("向量搜索", "用 rsync 备份", "ベクトル検索とは"):
        reply = engine.search(query)
        assert reply.search_type == cjk_search, query
        # auto chose; nothing failed (no fallback note). The only note allowed is the no-good-match one:
        # no document here is in Japanese, so hybrid's hits for ベクトル検索とは hold none of its terms.
        assert reply.note is None or (query == "ベクトル検索とは" and reply.note.startswith("no good match")), query
    assert engine.search("向量搜索", search_type="hybrid").search_type == "hybrid"  # asked for: done


def test_one_long_korean_file_among_english_pages_leaves_the_table_english(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 51: a 120 KB Korean file among ten English pages made a fresh table Korean (every
    English page cut into n-grams, no stemming), while the same folder indexed a page at a time
    stayed English. Each document now votes once: the same folder gives the same analysis however
    it was built."""
    src = tmp_path / "src"
    src.mkdir()
    for n in range(10):
        (src / f"page{n}.md").write_text(
            f"# Page {n}\n\n{EN}\n\nRunning the refund workflow, page {n}.\n", encoding="utf-8"
        )
    (src / "ko.md").write_text(KO * (120_000 // len(KO.encode("utf-8")) + 1), encoding="utf-8")
    fresh = index_folder(src, str(tmp_path / "fresh"))
    assert fresh.languages == ["en", "ko"]
    piecewise = tmp_path / "piecewise-src"
    piecewise.mkdir()
    for n in range(10):
        (piecewise / f"page{n}.md").write_bytes((src / f"page{n}.md").read_bytes())
    index_folder(piecewise, str(tmp_path / "piecewise"))
    (piecewise / "ko.md").write_bytes((src / "ko.md").read_bytes())
    again = index_folder(piecewise, str(tmp_path / "piecewise"))
    assert again.languages[0] == fresh.languages[0] == "en"
    hits = search(monkeypatch, tmp_path / "fresh", "runs")["hits"]
    assert hits and hits[0]["source"].startswith("page")  # stemmed: "runs" finds "Running"


def test_a_one_syllable_korean_query_finds_the_chunks_holding_it_and_says_how(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 46 #9: a Korean table's index holds 2-3 character pieces, so "책" (book) matched no
    term: 0 hits and no note. It is now looked for in the text, with a note that says so."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "ko.md").write_text(KO + "\n책 한 권을 읽습니다.\n", encoding="utf-8")
    (src / "other.md").write_text("# 다른 문서\n\n벡터 검색은 빠릅니다.\n", encoding="utf-8")
    db = tmp_path / "db"
    assert index_folder(src, str(db)).languages[0] == "ko"
    reply = search(monkeypatch, db, "책")
    assert [h["source"] for h in reply["hits"]] == ["ko.md"]
    assert "pieces of 2 or more characters" in reply["note"]
    assert search(monkeypatch, db, "벡터")["hits"]  # a longer word still goes through the index
    with_phrasings = search(monkeypatch, db, "책", queries=["도서"])
    assert [h["source"] for h in with_phrasings["hits"]] == ["ko.md"] and not with_phrasings.get("noGoodMatch")
