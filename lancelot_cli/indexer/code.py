"""Source code as definitions: one chunk per function, class or method, found by its names (issue 47).

A file is parsed with tree-sitter (the grammars ship as PyPI wheels, prebuilt: no compiler, no
download at run time). Its definitions become chunks:

- a file that fits in one chunk stays whole (a small module, a config class);
- otherwise each top-level definition is a chunk with the comments and decorators right above it
  (a docstring, a Go or Rust doc comment); a definition too long for one chunk that holds others
  (a class, an ``impl``, a namespace) is cut into its header and one chunk per member, and a long
  function is cut at the boundaries of its body's statements, never inside one;
- what lies between definitions (imports, constants, a script's statements) is a module chunk.

Each chunk carries its qualified name (``UsernameReplacementView.post``) and its lines, and whether
it exists only for tests: a Rust item under ``#[cfg(test)]`` (the in-file ``mod tests``) or marked
``#[test]``, which the compiler leaves out of the program. Such a chunk is written with ``kind: test``
(indexer/rows.py), as a whole test file is (``code_role``), so it ranks below the code it exercises
(engine/ranking.py ``supporting_later``) and ``kind: code`` leaves it out. Python's ``def test_*`` and
``class Test*`` in a module that is not a test file are not marked: pytest collects them only from
test files, and elsewhere such names are the program's own (``TestClient``, ``test_connection``). The name
goes into the chunk's heading with its words split out (``username replacement view post``): the
full-text index keeps ``UsernameReplacementView`` as one term, so "username replacement view" finds
the definition, and a query naming a symbol matches the chunk that defines it in the boosted
heading, not only the files that import or call it. The chunk's text ends with a line of the words
of the compound names it uses (``inflationRate``: lancelot_cli/codewords.py), which hits leave out.

A language whose grammar is missing (or a file that does not parse into definitions) falls back to
windows of lines (``chunking.line_windows``), as every code file was read before.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from lancelot_cli.codewords import camel_words, with_name_words

# suffix -> (grammar module, the function in it that gives the language)
GRAMMARS: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"),
    ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".cts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
    ".c": ("tree_sitter_c", "language"),
    ".h": ("tree_sitter_c", "language"),
    ".cc": ("tree_sitter_cpp", "language"),
    ".cpp": ("tree_sitter_cpp", "language"),
    ".cxx": ("tree_sitter_cpp", "language"),
    ".hpp": ("tree_sitter_cpp", "language"),
    ".hh": ("tree_sitter_cpp", "language"),
    ".rb": ("tree_sitter_ruby", "language"),
    ".sh": ("tree_sitter_bash", "language"),
    ".bash": ("tree_sitter_bash", "language"),
}
CODE_SUFFIXES = frozenset(GRAMMARS)

# Nodes that define something with a name, in every grammar above.
DEFINITIONS = frozenset(
    {
        # Python
        "function_definition",
        "class_definition",
        # JavaScript, TypeScript
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "method_definition",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        # Go
        "method_declaration",
        "type_declaration",
        # Rust
        "function_item",
        "struct_item",
        "enum_item",
        "trait_item",
        "impl_item",
        "mod_item",
        "macro_definition",
        # Java
        "constructor_declaration",
        "record_declaration",
        # C, C++
        "struct_specifier",
        "class_specifier",
        "namespace_definition",
        # Ruby
        "method",
        "singleton_method",
        "class",
        "module",
    }
)
# Nodes that wrap a definition and belong to it: decorators, `export`, templates.
WRAPPERS = frozenset({"decorated_definition", "export_statement", "template_declaration"})
# JavaScript's `const handler = () => {...}`: a declaration whose value is a function or class.
BOUND_VALUES = frozenset({"arrow_function", "function_expression", "function", "class", "generator_function"})
# Definitions whose members are definitions too (a class's methods): walked for them.
CONTAINERS = frozenset(
    {
        "class_definition",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "impl_item",
        "trait_item",
        "mod_item",
        "class_specifier",
        "struct_specifier",
        "namespace_definition",
        "record_declaration",
        "enum_declaration",
        "class",
        "module",
    }
)
# What sits right above a definition and belongs to it: comments, decorators, Rust's `#[...]` attributes.
COMMENTS = frozenset({"comment", "line_comment", "block_comment", "decorator", "attribute_item"})
# Nodes that hold no definition in any grammar above: not looked inside (a third of the walk's nodes
# on the benchmark's Go, Rust and Python: imports, strings, Go's literal tables, Rust's macro tokens).
LEAVES = frozenset(
    {
        "import_statement",
        "import_from_statement",
        "future_import_statement",
        "import_declaration",
        "import_spec_list",
        "use_declaration",
        "package_clause",
        "string",
        "string_literal",
        "raw_string_literal",
        "interpreted_string_literal",
        "template_string",
        "token_tree",
        "literal_value",
        "preproc_include",
    }
)
_NAME_NODES = frozenset(
    {"identifier", "field_identifier", "type_identifier", "property_identifier", "qualified_identifier", "constant"}
)


@dataclass(frozen=True)
class Definition:
    """A definition's name and lines (from 1, inclusive), with the definitions inside it."""

    name: str  # qualified: Class.method
    first: int
    last: int
    members: tuple[Definition, ...] = ()
    body: tuple[int, ...] = ()  # the lines its body's statements start on: where a long one may be cut
    test: bool = False  # compiled only for tests (``#[cfg(test)] mod tests``, ``#[test] fn``), or inside such


@dataclass(frozen=True)
class CodeChunk:
    """One chunk of a source file: its qualified name (None for module-level lines) and lines."""

    name: str | None
    first: int
    last: int
    text: str
    defines: tuple[str, ...] = ()  # a whole small file: the names of its definitions
    test: bool = False  # lines that exist only for tests (``Definition.test``): written as ``kind: test``


def has_grammar(suffix: str) -> bool:
    """Whether files with ``suffix`` are parsed into definitions here (the grammar is installed)."""
    return suffix in GRAMMARS and _parser(suffix) is not None


@cache
def _parser(suffix: str) -> Any:
    """The tree-sitter parser for ``suffix``; None when tree-sitter or the grammar is not installed."""
    module, function = GRAMMARS[suffix]
    try:
        import tree_sitter

        language = tree_sitter.Language(getattr(importlib.import_module(module), function)())
        return tree_sitter.Parser(language)
    except (ImportError, AttributeError, ValueError, TypeError, OSError):
        return None


def definitions(text: str, suffix: str) -> list[Definition] | None:
    """The top-level definitions of a source file, members nested; None when it cannot be parsed here."""
    parser = _parser(suffix) if suffix in GRAMMARS else None
    if parser is None:
        return None
    source = text.encode("utf-8", "surrogatepass")
    tree = parser.parse(source)
    return list(_definitions(tree.root_node, (), False, 0))


# How deep the walk looks for definitions: no real one sits deeper, and a C table of a few hundred
# numbers under an `#if` parses as a chain of comma expressions as deep as it is long (mypyc's
# base64 tables: a RecursionError ended the whole `lancelot index` run).
MAX_DEPTH = 100


def _definitions(node: Any, scope: tuple[str, ...], test: bool, depth: int) -> Iterator[Definition]:
    """The definitions among ``node``'s descendants, not looking inside a function's body; ``test``:
    ``node`` exists only for tests, and so does everything in it."""
    if depth > MAX_DEPTH:
        return
    for child in node.named_children:
        found = _definition(child)
        if found is None:
            if child.named_child_count and child.type not in COMMENTS and child.type not in LEAVES:
                yield from _definitions(child, scope, test, depth + 1)  # a block, an `if`, a list: look inside
            continue
        outer, inner, name = found
        qualified = (*scope, name) if name else scope
        only_for_tests = test or _only_for_tests(outer)
        members: tuple[Definition, ...] = ()
        if inner.type in CONTAINERS:
            members = tuple(_definitions(inner, qualified, only_for_tests, depth + 1))
        yield Definition(
            ".".join(qualified) or "(anonymous)",
            _first_line(outer),
            outer.end_point[0] + 1,
            members,
            tuple(_statement_lines(inner)),
            only_for_tests,
        )


def _definition(node: Any) -> tuple[Any, Any, str] | None:
    """(the node the definition spans, the definition node, its name) when ``node`` defines something."""
    if node.type in WRAPPERS:
        for child in node.named_children:
            found = _definition(child)
            if found is not None:
                return node, found[1], found[2]
        return None
    if node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            value = declarator.child_by_field_name("value")
            if value is not None and value.type in BOUND_VALUES:
                return node, value, _text(declarator.child_by_field_name("name"))
        return None
    if node.type not in DEFINITIONS:
        return None
    if node.type in ("struct_specifier", "class_specifier") and node.child_by_field_name("body") is None:
        return None  # `struct point p;` uses a type, it does not define one
    return node, node, _name(node)


def _name(node: Any) -> str:
    """A definition's name: its ``name`` field, or what its declarator or type names (C, Go, Rust)."""
    if node.type == "impl_item":
        trait, kind = node.child_by_field_name("trait"), node.child_by_field_name("type")
        return f"{_text(trait)} for {_text(kind)}" if trait is not None else _text(kind)
    if node.type == "type_declaration":  # Go: `type Server struct {...}`
        spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        return _text(spec.child_by_field_name("name")) if spec is not None else ""
    name = node.child_by_field_name("name")
    if name is not None:
        if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:
            receiver = _receiver_type(node.child_by_field_name("receiver"))
            return f"{receiver}.{_text(name)}" if receiver else _text(name)
        return _text(name)
    declarator = node.child_by_field_name("declarator")  # C and C++ functions
    while declarator is not None and declarator.type not in _NAME_NODES:
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type in _NAME_NODES), None
        )
    return _text(declarator)


def _receiver_type(receiver: Any) -> str:
    """Go: the type a method's receiver has (``(s *Server)`` -> ``Server``)."""
    stack = [receiver]
    while stack:
        node = stack.pop(0)
        if node.type == "type_identifier":
            return _text(node)
        stack.extend(node.named_children)
    return ""


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


# Rust attributes that make a function a test (`#[test]`, `#[tokio::test]`, `#[rstest]`...): the last
# part of the attribute's path.
TEST_ATTRIBUTES = frozenset({"test", "rstest", "test_case", "wasm_bindgen_test"})


def _only_for_tests(node: Any) -> bool:
    """Whether a definition's attributes (Rust's ``#[...]`` right above it) make it exist only for
    tests: ``#[cfg(test)]`` (or ``cfg(all(test, ...))``) or a test attribute (``TEST_ATTRIBUTES``).
    ``cfg(any(feature = "std", test))`` and ``cfg(not(test))`` are compiled into the program too."""
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in COMMENTS:
        attribute = next((c for c in sibling.named_children if c.type == "attribute"), None)
        if sibling.type == "attribute_item" and attribute is not None and attribute.named_child_count:
            path = _text(attribute.named_children[0]).rsplit("::", 1)[-1]
            arguments = attribute.child_by_field_name("arguments")
            if path in TEST_ATTRIBUTES:
                return True
            if path == "cfg" and arguments is not None and any(_cfg_test_only(p) for p in _cfg_predicates(arguments)):
                return True
        sibling = sibling.prev_named_sibling
    return False


# A cfg predicate: its name and, for all(...) / any(...) / not(...), the predicates inside
# (None for an option: `test`, `unix`, `feature = "std"`).
_Predicate = tuple[str, list[Any] | None]


def _cfg_predicates(tree: Any) -> list[_Predicate]:
    """The comma-separated predicates of a cfg attribute's token tree: ``(all(test, unix), windows)``."""
    predicates: list[_Predicate] = []
    name, inner, valued = "", None, False
    for child in tree.children[1:-1]:  # between the brackets
        if child.type == ",":
            predicates.append(("=" if valued else name, inner))
            name, inner, valued = "", None, False
        elif child.type == "identifier" and not name:
            name = _text(child)
        elif child.type == "token_tree":
            inner = _cfg_predicates(child)
        elif child.type == "=":
            valued = True  # `feature = "std"`: an option with a value, never `test`
    if name or valued:
        predicates.append(("=" if valued else name, inner))
    return predicates


def _cfg_test_only(predicate: _Predicate) -> bool:
    """Whether a cfg predicate holds only when compiling tests."""
    name, inner = predicate
    if inner is None:
        return name == "test"
    if name == "all":
        return any(_cfg_test_only(p) for p in inner)
    if name == "any":
        return bool(inner) and all(_cfg_test_only(p) for p in inner)
    return False  # not(...), or a predicate this does not know


def _first_line(node: Any) -> int:
    """The line a definition starts on, with the comments and decorators right above it."""
    first = node.start_point[0]
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in COMMENTS and sibling.end_point[0] >= first - 1:
        first = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    return first + 1


def _statement_lines(node: Any) -> Iterator[int]:
    """The lines the statements of a definition's body start on."""
    body = node.child_by_field_name("body")
    if body is None:
        return
    for statement in body.named_children:
        yield statement.start_point[0] + 1


def code_chunks(text: str, suffix: str, max_chars: int) -> list[CodeChunk] | None:
    """The chunks of a source file (see the module's docstring); None when it cannot be parsed here."""
    found = definitions(text, suffix)
    if found is None:
        return None
    if len(text) <= max_chars:
        names = tuple(_all_names(found))
        name = found[0].name if len(found) == 1 else None
        test = bool(found) and all(definition.test for definition in found)  # a file of tests alone
        return [_with_name_words(CodeChunk(name, 1, len(_lines(text)), text, names, test))] if text.strip() else []
    if not found:
        return None
    cutter = _Cutter(_lines(text), max_chars)
    return [_with_name_words(chunk) for chunk in cutter.merge_small(list(cutter.file(found)))]


def _with_name_words(chunk: CodeChunk) -> CodeChunk:
    """``chunk`` with its text followed by the words of its compound names (lancelot_cli/codewords.py)."""
    return CodeChunk(chunk.name, chunk.first, chunk.last, with_name_words(chunk.text), chunk.defines, chunk.test)


# Module-level lines shorter than this (a `T = TypeVar("T")`, a constant, an `__all__`) join the chunk
# after them (before them at the end of a file) instead of being a chunk of their own.
SMALL = 300


def _all_names(found: list[Definition] | tuple[Definition, ...]) -> Iterator[str]:
    for definition in found:
        yield definition.name
        yield from _all_names(definition.members)


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class _Cutter:
    """Cuts one file's lines into chunks along its definitions."""

    def __init__(self, lines: list[str], max_chars: int) -> None:
        self.lines, self.max_chars = lines, max_chars

    def text(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first - 1 : last])

    def file(self, found: list[Definition]) -> Iterator[CodeChunk]:
        yield from self.between(None, 1, len(self.lines), found, False)

    def between(
        self,
        name: str | None,
        first: int,
        last: int,
        inside: list[Definition] | tuple[Definition, ...],
        test: bool,
    ) -> Iterator[CodeChunk]:
        """The lines ``first``-``last``: each definition in ``inside`` its own chunks, the lines
        between them chunks named ``name`` (the enclosing definition, or None: the module), for
        tests only when ``test`` (the enclosing definition is)."""
        cursor = first
        for definition in inside:
            if definition.first > cursor:
                yield from self.plain(name, cursor, definition.first - 1, test)
            yield from self.definition(definition)
            cursor = max(cursor, definition.last + 1)
        if cursor <= last:
            yield from self.plain(name, cursor, last, test)

    def definition(self, definition: Definition) -> Iterator[CodeChunk]:
        text = self.text(definition.first, definition.last)
        if len(text) <= self.max_chars:
            yield CodeChunk(definition.name, definition.first, definition.last, text, test=definition.test)
        elif definition.members:
            yield from self.between(
                definition.name, definition.first, definition.last, definition.members, definition.test
            )
        else:
            yield from self.statements(definition)

    def statements(self, definition: Definition) -> Iterator[CodeChunk]:
        """A long definition cut where its body's statements start, each piece at most ``max_chars``
        (a single statement longer than that is cut into windows of lines)."""
        cuts = sorted({line for line in definition.body if definition.first < line <= definition.last})
        starts = [definition.first, *cuts]
        piece_first = definition.first
        size = 0
        for start, end in zip(starts, [*(c - 1 for c in cuts), definition.last], strict=True):
            part = len(self.text(start, end)) + 1
            if size and size + part > self.max_chars:
                yield from self.plain(definition.name, piece_first, start - 1, definition.test)
                piece_first, size = start, 0
            size += part
        yield from self.plain(definition.name, piece_first, definition.last, definition.test)

    def merge_small(self, chunks: list[CodeChunk]) -> list[CodeChunk]:
        """``chunks`` with each module-level one under ``SMALL`` characters joined to the next chunk
        (the last one to the chunk before it), the blank lines between them included; never a chunk
        of the program to one for tests (the joined chunk would be all one kind)."""
        merged: list[CodeChunk] = []
        carry: CodeChunk | None = None
        for chunk in chunks:
            if carry is not None:
                joined = self.joined(carry, chunk, chunk.name)
                if joined is None:
                    merged.append(carry)
                else:
                    chunk = joined
                carry = None
            if chunk.name is None and len(chunk.text) < SMALL:
                carry = chunk
                continue
            merged.append(chunk)
        if carry is not None:
            joined = self.joined(merged[-1], carry, merged[-1].name) if merged else None
            if joined is None:
                merged.append(carry)
            else:
                merged[-1] = joined
        return merged

    def joined(self, before: CodeChunk, after: CodeChunk, name: str | None) -> CodeChunk | None:
        """One chunk of ``before`` through ``after`` when only blank lines lie between and it fits."""
        if before.test != after.test:
            return None
        between = self.lines[before.last : after.first - 1]
        text = self.text(before.first, after.last)
        if any(line.strip() for line in between) or len(text) >= self.max_chars:
            return None
        return CodeChunk(name, before.first, after.last, text, test=before.test)

    def plain(self, name: str | None, first: int, last: int, test: bool) -> Iterator[CodeChunk]:
        """Lines with no definition to cut at: one chunk, or windows of at most ``max_chars``."""
        from lancelot_cli.indexer.chunking import line_windows

        while first < last and not self.lines[first - 1].strip():  # blank lines around it are no part of it
            first += 1
        while last > first and not self.lines[last - 1].strip():
            last -= 1
        text = self.text(first, last)
        if not text.strip():
            return
        if len(text) <= self.max_chars:
            yield CodeChunk(name, first, last, text, test=test)
            return
        for start, end, window in line_windows(text, max_chars=self.max_chars):
            yield CodeChunk(name, first + start - 1, first + end - 1, window, test=test)


def name_words(name: str) -> str:
    """The words of a qualified name, as a person types them: ``UsernameReplacementView.post`` ->
    ``username replacement view post``, ``parse_HTTPResponse`` -> ``parse http response``."""
    words: list[str] = []
    for part in name.replace(".", " ").replace("_", " ").replace("::", " ").split():
        words.extend(camel_words(part))
    return " ".join(word.lower() for word in words if word)


def chunk_kind(file_kind: str, chunk: CodeChunk) -> str:
    """A chunk's ``kind`` column: "test" for lines that exist only for tests, else its file's
    (``code_role``): the in-file ``#[cfg(test)] mod tests`` of a Rust module is a test."""
    return "test" if chunk.test else file_kind


TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "spec", "specs", "testing", "e2e"})
MIGRATION_FOLDERS = frozenset({"migrations", "migrate", "alembic"})


def code_role(rel: str) -> str:
    """What a source file is to its project, for the ``kind`` column an agent can filter on: "test",
    "migration" or "code" (by its folders and name: ``tests/``, ``test_x.py``, ``x_test.go``,
    ``x.spec.ts``, ``XTest.java``, ``migrations/``)."""
    *folders, name = rel.lower().split("/")
    stem = name.split(".", 1)[0]
    if set(folders) & MIGRATION_FOLDERS:
        return "migration"
    if (
        set(folders) & TEST_FOLDERS
        or stem.startswith("test_")
        or stem.endswith(("_test", "_spec"))
        or ".test." in name
        or ".spec." in name
        or rel.rsplit("/", 1)[-1].split(".", 1)[0].endswith(("Test", "Tests"))
        or stem == "conftest"
    ):
        return "test"
    return "code"
