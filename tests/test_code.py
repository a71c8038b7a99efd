"""Source code split by syntax (indexer/code.py, issue 47): one chunk per definition, named and found
by its names, in every language whose grammar ships with the package; and a project's code indexed
with no flag (indexer/scanning.py), found by a question in words and by the symbol's name."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from lancelot_cli.indexer.code import (
    CODE_SUFFIXES,
    Definition,
    code_chunks,
    code_role,
    definitions,
    has_grammar,
    name_words,
)
from lancelot_cli.indexer.scanning import is_project, scan

# One small file per language: (suffix, source, the qualified names its definitions must have)
SOURCES: list[tuple[str, str, list[str]]] = [
    (
        ".py",
        '''
        import os

        @register
        class UsernameReplacementView(APIView):
            """Replace a user's name everywhere."""

            def post(self, request):
                return replace(request)

        async def retire_user(name):
            pass
        ''',
        ["UsernameReplacementView", "UsernameReplacementView.post", "retire_user"],
    ),
    (
        ".ts",
        """
        export class TokenStore {
          get(key: string): string { return this.items[key]; }
        }
        export interface Options { ttl: number }
        export const refreshToken = async (id: string) => { return id; };
        function helper() {}
        """,
        ["TokenStore", "TokenStore.get", "Options", "refreshToken", "helper"],
    ),
    (
        ".js",
        """
        class Queue { push(item) { this.items.push(item); } }
        function drain(queue) { return queue.items; }
        """,
        ["Queue", "Queue.push", "drain"],
    ),
    (
        ".go",
        """
        package server

        // Server answers requests.
        type Server struct { addr string }

        func (s *Server) Serve() error { return nil }

        func NewServer(addr string) *Server { return &Server{addr} }
        """,
        ["Server", "Server.Serve", "NewServer"],
    ),
    (
        ".rs",
        """
        /// A block header.
        pub struct Header { height: u64 }

        impl Header {
            pub fn verify(&self) -> bool { true }
        }

        fn main() {}
        """,
        ["Header", "Header", "Header.verify", "main"],
    ),
    (
        ".java",
        """
        public class LedgerService {
            public LedgerService() {}
            public void settle(int amount) {}
        }
        """,
        ["LedgerService", "LedgerService.LedgerService", "LedgerService.settle"],
    ),
    (
        ".c",
        """
        struct buffer { int size; };
        static int grow_buffer(struct buffer *b, int n) { return b->size + n; }
        """,
        ["buffer", "grow_buffer"],
    ),
    (
        ".cpp",
        """
        namespace net {
        class Socket { public: void close() {} };
        }
        """,
        ["net", "net.Socket", "net.Socket.close"],
    ),
    (
        ".rb",
        """
        module Billing
          class Invoice
            def total; 0; end
          end
        end
        """,
        ["Billing", "Billing.Invoice", "Billing.Invoice.total"],
    ),
    (
        ".sh",
        """
        #!/bin/sh
        backup_database() {
          pg_dump "$1"
        }
        """,
        ["backup_database"],
    ),
]


def _names(found: list[Definition]) -> list[str]:
    out: list[str] = []
    for definition in found:
        out.append(definition.name)
        out.extend(_names(list(definition.members)))
    return out


@pytest.mark.parametrize(("suffix", "source", "expected"), SOURCES, ids=[s[0] for s in SOURCES])
def test_each_language_gives_its_definitions_by_qualified_name(suffix: str, source: str, expected: list[str]) -> None:
    assert has_grammar(suffix)
    found = definitions(textwrap.dedent(source), suffix)
    assert found is not None
    assert _names(found) == expected


def test_every_suffix_indexed_by_default_has_its_grammar_installed() -> None:
    """The grammars are dependencies: a suffix found by default is never read as mere lines."""
    assert [s for s in sorted(CODE_SUFFIXES) if not has_grammar(s)] == []


def _long_module(functions: int = 30) -> str:
    parts = ['"""A module."""\n\nimport os\nLIMIT = 10\n']
    for n in range(functions):
        body = "\n".join(f"    value_{i} = compute_{n}({i})  # step {i}" for i in range(12))
        parts.append(f"\n\ndef handler_{n}(request):\n    '''Handle request {n}.'''\n{body}\n    return value_0\n")
    return "".join(parts)


def test_a_long_file_is_one_chunk_per_definition_with_exact_lines() -> None:
    text = _long_module()
    chunks = code_chunks(text, ".py", 1200)
    assert chunks is not None
    lines = text.split("\n")
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.first - 1 : chunk.last])  # path:first-last opens it
        assert len(chunk.text) <= 1200
    named = [c.name for c in chunks if c.name]
    assert named == [f"handler_{n}" for n in range(30)]
    # the module's own lines (a docstring, an import, a constant) are too few for a chunk of their own
    assert chunks[0].first == 1 and "import os" in chunks[0].text


def test_a_few_module_lines_join_the_definition_after_them_across_blank_lines() -> None:
    """`T = 1` two blank lines above a function is no chunk of its own (nor the last `Z = 3`)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    text = f"import os\n\nT = 1\n\n\ndef f():\n{body}\n\n\nU = 2\n\n\ndef g():\n{body}\n\n\nZ = 3\n"
    chunks = code_chunks(text, ".py", 1200)
    assert chunks is not None
    assert [(c.name, c.first, c.last) for c in chunks] == [("f", 1, 66), ("g", 69, 135)]
    lines = text.split("\n")
    assert all(c.text == "\n".join(lines[c.first - 1 : c.last]) for c in chunks)


def test_a_long_function_is_cut_between_statements() -> None:
    body = "\n".join(f"    total += step_{i}(total)" for i in range(300))
    text = f"def accumulate(total):\n{body}\n    return total\n"
    chunks = code_chunks(text, ".py", 1200)
    assert chunks is not None and len(chunks) > 3
    assert {c.name for c in chunks} == {"accumulate"}
    for chunk in chunks:
        assert len(chunk.text) <= 1200
        assert all(line.startswith(("def ", "    total", "    return")) for line in chunk.text.split("\n"))
    assert chunks[0].first == 1 and chunks[-1].last == 302
    assert all(a.last + 1 == b.first for a, b in itertools.pairwise(chunks))  # nothing lost, no overlap


def test_a_big_class_is_cut_into_its_header_and_methods() -> None:
    methods = "\n".join(
        f"    def method_{n}(self):\n" + "\n".join(f"        self.x += {i}" for i in range(20)) for n in range(12)
    )
    text = f'class Account:\n    """Money in and out."""\n    rate = 3\n\n{methods}\n'
    chunks = code_chunks(text, ".py", 1200)
    assert chunks is not None
    assert chunks[0].name == "Account" and "Money in and out" in chunks[0].text
    assert [c.name for c in chunks[1:]] == [f"Account.method_{n}" for n in range(12)]


def test_a_file_that_fits_stays_whole_and_names_what_it_defines() -> None:
    text = "def a():\n    pass\n\n\nclass B:\n    def c(self):\n        pass\n"
    chunks = code_chunks(text, ".py", 4800)
    assert chunks is not None and len(chunks) == 1
    assert chunks[0].text == text.rstrip("\n") or chunks[0].text == text
    assert chunks[0].defines == ("a", "B", "B.c")


def test_names_are_split_into_the_words_a_person_types() -> None:
    assert name_words("UsernameReplacementView.post") == "username replacement view post"
    assert name_words("parse_HTTPResponse") == "parse http response"
    assert name_words("getHTTP2Client") == "get http2 client"
    assert name_words("MAX_SAVED") == "max saved"


def test_a_64_kb_line_and_deep_nesting_are_parsed_in_bounded_work() -> None:
    """Hostile input: one 64 KB line, and 500 nested brackets, give chunks, not a hang or a crash."""
    line = "x = [" + "1, " * 21_000 + "]\n"
    chunks = code_chunks(line + "def f():\n    pass\n", ".py", 4800)
    assert chunks is not None and [(c.first, c.last) for c in chunks] == [(1, 1), (2, 3)]
    nested = "def g():\n    return " + "(" * 500 + "1" + ")" * 500 + "\n"
    assert code_chunks(nested * 20, ".py", 1200) is not None


def test_a_c_table_under_an_if_is_read_not_a_recursion_error() -> None:
    """A few hundred numbers in a C initializer under ``#if`` parse as a chain of comma expressions
    as deep as the table is long (mypyc's base64 tables): the walk raised RecursionError, and the
    whole `lancelot index` run ended with it."""
    numbers = ", ".join(f"0x{i:04X}U" for i in range(2000))
    table = f"const uint16_t table[] = {{\n#if LITTLE\n{numbers}\n#else\n{numbers}\n#endif\n}};\n"
    text = table + "\nint f(void) { return 0; }\n"
    chunks = code_chunks(text, ".c", 4800)
    assert chunks is not None and [c.name for c in chunks if c.name] == ["f"]
    assert chunks[0].first == 1 and "0x0000U" in chunks[1].text


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/accounts/views.py", "code"),
        ("tests/test_views.py", "test"),
        ("accounts/test_views.py", "test"),
        ("pkg/server_test.go", "test"),
        ("web/src/store.spec.ts", "test"),
        ("src/test/java/LedgerServiceTest.java", "test"),
        ("accounts/migrations/0003_add_email.py", "migration"),
        ("conftest.py", "test"),
        ("contest.py", "code"),
    ],
)
def test_tests_and_migrations_are_marked(path: str, role: str) -> None:
    assert code_role(path) == role


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    (root / "app" / "views.py").write_text("class UsernameReplacementView:\n    def post(self):\n        pass\n")
    (root / "app" / "urls.py").write_text("from app.views import UsernameReplacementView\n")
    (root / "node_modules" / "left").mkdir(parents=True)
    (root / "node_modules" / "left" / "index.js").write_text("function pad() {}\n")
    (root / "app" / "bundle.min.js").write_text("function a(){}\n")
    (root / "README.md").write_text("# App\n\nUsername replacement is done by a view.\n")
    return root


def test_a_project_gets_its_code_and_a_folder_of_documents_does_not(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert is_project(root)
    found = scan(root)
    assert found.paths == ["README.md", "app/urls.py", "app/views.py"]
    note = found.code_note()
    assert note is not None and "2 file(s)" in note and "1 vendored" in note and "1 generated or minified" in note
    (root / "pyproject.toml").unlink()
    assert not is_project(root)
    found = scan(root)
    assert found.paths == ["README.md"]
    note = found.code_note()
    assert note is not None and "--code" in note
    assert scan(root, code=True).paths == ["README.md", "app/urls.py", "app/views.py"]


def test_a_symbol_is_found_at_its_definition_before_the_files_that_import_it(tmp_path: Path) -> None:
    """Indexed with no flag, searched as a person and as an agent would: by the name, and in words."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load

    root = _project(tmp_path)
    db = tmp_path / "db"
    index_folder(root, str(db))
    engine = Engine(load({"LANCEDB_PATH": str(db)}))
    hits = engine.search("UsernameReplacementView", limit=5).hits
    assert hits[0].source == "app/views.py", [h.source for h in hits]
    assert hits[0].title == "UsernameReplacementView (app/views.py:1-3)"
    # In words: found through the name's words in the chunk's heading (the code holds none of them)
    hits = engine.search("username replacement view", limit=5).hits
    (found,) = [h for h in hits if h.source == "app/views.py"]
    assert found.metadata["heading"] == "UsernameReplacementView (username replacement view)"
    coded = engine.search("UsernameReplacementView", limit=5, filters={"kind": "code"}).hits
    assert {h.source for h in coded} == {"app/views.py", "app/urls.py"}


def test_tests_rank_below_the_code_they_exercise(tmp_path: Path) -> None:
    """A test that repeats the words of the code it exercises (its name, its calls) outranked the
    code itself; marked `kind: test`, it now moves below it, and a search for tests still finds it."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load

    root = tmp_path / "repo"
    (root / "billing").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'billing'\n")
    (root / "billing" / "invoice.py").write_text(
        "def invoice_total(lines):\n    '''The invoice total of the lines, tax included.'''\n"
        "    return sum(line.amount for line in lines)\n"
    )
    (root / "tests" / "test_invoice.py").write_text(
        "from billing.invoice import invoice_total\n\n\ndef test_invoice_total():\n"
        "    '''invoice total invoice total: the invoice total of two lines.'''\n"
        "    assert invoice_total([]) == 0  # invoice total\n"
    )
    db = tmp_path / "db"
    index_folder(root, str(db))
    engine = Engine(load({"LANCEDB_PATH": str(db)}))
    hits = engine.search("invoice total", limit=5).hits
    assert [h.source for h in hits][:2] == ["billing/invoice.py", "tests/test_invoice.py"]
    assert hits[1].metadata["kind"] == "test"
    only_tests = engine.search("invoice total", limit=5, filters={"kind": "test"}).hits
    assert [h.source for h in only_tests] == ["tests/test_invoice.py"]


def test_the_shift_is_stable_and_leaves_other_rankings_alone() -> None:
    from lancelot_cli.engine.ranking import SUPPORTING_SHIFT, supporting_later

    rows = [{"id": n, "kind": "test" if n == 0 else "code"} for n in range(SUPPORTING_SHIFT + 3)]
    assert [r["id"] for r in supporting_later(rows, lambda r: r)] == [*range(1, SUPPORTING_SHIFT + 1), 0, 6, 7]
    plain = [{"id": n} for n in range(4)]
    assert supporting_later(plain, lambda r: r) == plain


def test_code_or_no_code_is_saved_with_the_table(tmp_path: Path) -> None:
    """--code in a folder of documents, then runs with no flag keep it; --no-code takes it out."""
    from lancelot_cli.indexer import index_folder

    root = _project(tmp_path)
    (root / "pyproject.toml").unlink()  # a folder of documents now
    db = str(tmp_path / "db")
    first = index_folder(root, db)
    assert first.files == 1 and first.code is not None and "--code" in first.code
    assert index_folder(root, db, code=True).files == 3
    again = index_folder(root, db)
    assert again.files == 3 and not again.committed  # the choice stood, nothing changed
    assert (
        again.code
        == "Source code: 2 file(s) read as definitions; left out: 1 generated or minified, 1 vendored or build output"
    )
    gone = index_folder(root, db, code=False)
    assert gone.files == 1 and gone.deleted > 0


def test_the_instructions_say_the_table_holds_code_and_decisions(tmp_path: Path) -> None:
    """An agent reads in the server's instructions that the table holds a project's code and its
    ADRs, and which filters reach them (issue 47 #3); a folder of documents says nothing of it."""
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.server.app import instructions
    from lancelot_cli.settings import load

    root = _project(tmp_path)
    (root / "tests").mkdir()
    (root / "tests" / "test_views.py").write_text("def test_post():\n    assert True\n")
    (root / "docs" / "adr").mkdir(parents=True)
    (root / "docs" / "adr" / "0001-use-postgres.md").write_text(
        "# 1. Use PostgreSQL\n\nDate: 2024-03-01\n\n## Status\n\nAccepted\n\n## Context\n\nWe need a database.\n\n"
        "## Decision\n\nPostgreSQL.\n\n## Consequences\n\nBackups.\n"
    )
    db = tmp_path / "db"
    index_folder(root, str(db))
    said = instructions(load({"LANCEDB_PATH": str(db)}))
    assert (
        "Table documents also holds source code, one chunk per function or class (2 files: filter kind: code; "
        "1 of tests: kind: test; 0 migrations: kind: migration) and 1 architecture decision records "
        "(filter kind: adr; columns status, date)." in said
    )
    docs_only = tmp_path / "notes"
    docs_only.mkdir()
    (docs_only / "a.md").write_text("# Notes\n\nNothing but prose.\n")
    index_folder(docs_only, str(tmp_path / "db2"))
    assert "also holds" not in instructions(load({"LANCEDB_PATH": str(tmp_path / "db2")}))


def test_a_code_hit_reads_as_its_whole_definition_with_the_files_line_numbers(tmp_path: Path) -> None:
    """Issue 47 #5: `lancedb_document` (and `lancelot show`) with a code hit's id gives the whole
    definition, each line numbered as in the file, fenced so a terminal draws it as code."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load

    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'm'\n")
    text = _long_module(8)
    (root / "handlers.py").write_text(text)
    db = tmp_path / "db"
    index_folder(root, str(db), chunk_size=300)
    engine = Engine(load({"LANCEDB_PATH": str(db)}))
    hit = engine.search("handler_3", limit=3).hits[0]
    assert hit.title.startswith("handler_3 (handlers.py:")
    first, last = hit.metadata["line_start"], hit.metadata["line_end"]
    shown = engine.document(chunk_id=hit.id, before=0, after=0)
    assert shown.title == "handlers.py"
    lines = text.split("\n")
    body = shown.context.split("```\n", 1)[1].rsplit("\n```", 1)[0]
    width = len(str(last))
    expected = [f"{n:>{width}}  {lines[n - 1]}" if lines[n - 1] else f"{n:>{width}}" for n in range(first, last + 1)]
    assert body.split("\n") == expected
    assert lines[first - 1].startswith("def handler_3(")


RUST_WITH_TESTS = """
/// The invoice total of the lines, tax included.
pub fn invoice_total(lines: &[Line]) -> u64 {
    lines.iter().map(|line| line.amount).sum()
}

#[cfg(any(feature = "std", test))]
pub fn render_invoice(total: u64) -> String {
    format!("{total}")
}

#[cfg(not(test))]
pub fn send_invoice() {}

#[tokio::test]
async fn invoice_total_over_the_wire() {}

#[cfg(all(test, feature = "rust-crypto"))]
fn signed_invoice_fixture() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invoice_total_of_no_lines_is_zero() {
        // invoice total: the invoice total of no lines
        assert_eq!(invoice_total(&[]), 0);
    }
}
"""


def test_rust_items_compiled_only_for_tests_are_test_chunks() -> None:
    """``#[cfg(test)] mod tests`` in a module of code, a ``#[tokio::test]`` function and a
    ``cfg(all(test, ...))`` item are tests; ``cfg(any(..., test))`` and ``cfg(not(test))`` items
    are in the program too. A cut never joins lines of the program to lines for tests."""
    text = textwrap.dedent(RUST_WITH_TESTS) + "\n".join(f"fn filler_{n}() {{ let _ = {n}; }}" for n in range(80))
    chunks = code_chunks(text, ".rs", 1200)
    assert chunks is not None
    tested = {c.name: c.test for c in chunks if c.name}
    assert tested["invoice_total"] is False
    assert tested["render_invoice"] is False and tested["send_invoice"] is False
    assert tested["invoice_total_over_the_wire"] is True
    assert tested["signed_invoice_fixture"] is True
    assert tested["tests"] is True
    (module,) = [c for c in chunks if c.name == "tests"]
    assert module.text.startswith("#[cfg(test)]\nmod tests {")  # the attribute belongs to the module
    assert {c.test for c in chunks if c.name and c.name.startswith("filler_")} == {False}


def test_a_small_file_stays_whole_and_is_a_test_only_when_all_of_it_is() -> None:
    mixed = code_chunks(textwrap.dedent(RUST_WITH_TESTS), ".rs", 4800)
    assert mixed is not None and len(mixed) == 1 and mixed[0].test is False
    only = code_chunks("#[cfg(test)]\nmod tests {\n    #[test]\n    fn works() {}\n}\n", ".rs", 4800)
    assert only is not None and len(only) == 1 and only[0].test is True


def test_python_test_names_in_a_module_of_code_stay_code() -> None:
    """pytest collects ``test_*`` functions and ``Test*`` classes only from test files: elsewhere
    they are the program's own (``TestClient``, a ``test_connection`` health check)."""
    text = "class TestClient:\n    pass\n\n\ndef test_connection(url):\n    return ping(url)\n" * 40
    chunks = code_chunks(text, ".py", 1200)
    assert chunks is not None and len(chunks) > 1
    assert {c.test for c in chunks} == {False}


def _rust_crate(tmp_path: Path) -> Path:
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "billing"\n')
    filler = "\n".join(f"pub fn ledger_entry_{n}(x: u64) -> u64 {{\n    x + {n}\n}}\n" for n in range(150))
    (root / "src" / "lib.rs").write_text(textwrap.dedent(RUST_WITH_TESTS) + "\n" + filler)
    return root


def test_a_rust_modules_own_tests_are_kind_test_and_rank_below_its_code(tmp_path: Path) -> None:
    """The in-file tests repeat the words of the function they exercise; marked `kind: test` they
    move below it (engine/ranking.py supporting_later), `kind: code` leaves them out and
    `kind: test` finds them. Before, the whole file was `kind: code`, tests included."""
    from lancelot_cli.engine import Engine
    from lancelot_cli.indexer import index_folder
    from lancelot_cli.settings import load

    root = _rust_crate(tmp_path)
    db = tmp_path / "db"
    index_folder(root, str(db))
    engine = Engine(load({"LANCEDB_PATH": str(db)}))
    hits = engine.search("invoice total", limit=10).hits
    titles = [h.title.split(" (")[0] for h in hits]
    # before: invoice_total_over_the_wire, invoice_total, tests, ... (all `kind: code`)
    assert titles[:3] == ["invoice_total", "render_invoice", "send_invoice"], titles
    assert titles.index("tests") > titles.index("invoice_total_over_the_wire") > 2
    assert {h.metadata["kind"] for h in hits if h.title.startswith("tests ")} == {"test"}
    coded = engine.search("invoice total", limit=10, filters={"kind": "code"}).hits
    assert coded and not any(h.title.startswith(("tests ", "invoice_total_over_the_wire")) for h in coded)
    tests = engine.search("invoice total", limit=10, filters={"kind": "test"}).hits
    assert {h.title.split(" (")[0] for h in tests} >= {"tests", "invoice_total_over_the_wire"}
    assert all(h.source == "src/lib.rs" for h in tests)


def test_a_chunk_whose_kind_changed_is_rewritten() -> None:
    """The kind of a chunk that is not its file's is in its hash: a table written before the chunk
    was marked a test gets the mark when the file is read again, though its text is the same."""
    from lancelot_cli.indexer.rows import chunk_hash

    title, text = "tests (src/lib.rs:1-9)", "mod tests {}"
    assert chunk_hash(title, text, "test") != chunk_hash(title, text)
    assert chunk_hash(title, text, None) == chunk_hash(title, text)
