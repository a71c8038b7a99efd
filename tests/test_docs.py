"""README.md, docs/*.md and tests/benchmarks/README.md against the program: every `lancelot <command>`
they show exists, every option shown for a command is one of that command's options, every command, setting and tool is
documented, the generated regions are what the program makes now (`tools.docgen`), and
the README stays short and starts with the two commands CI and a newcomer run.

Where commands are read from:
* shell code blocks (```bash, ```sh, ```shell, or no language): every line; a `lancelot` token
  counts when it starts a command (first word after any VAR=value, or after `|`, `&&`, `;`...), or
  follows a launcher word (`--`, `exec`, `env`, `time`, `sudo`) as in `claude mcp add ... -- lancelot serve`;
* ```console blocks: only the lines that start with `$ ` (the rest is output);
* inline code in prose that starts with `lancelot` (`lancelot init --show`).
Other blocks (JSON, TOML) hold configuration, not command lines, and are skipped.

Options are read from the app itself (`tools.generate.walk`): no list here to keep up to date.

The generated regions (`<!-- generated: ... -->`) are checked by making them again: about ten
seconds, since it indexes the sample and asks a real `lancelot serve`. When that test fails, run
`python -m tools.generate` and commit the result.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from lancelot_cli.cli.reference import CommandDoc
from tests.conftest import REPO
from tools import docgen, docsample
from tools.generate import app_reference

README = REPO / "README.md"
DOCS = REPO / "docs"
BENCHMARKS = REPO / "tests" / "benchmarks" / "README.md"
REFERENCE_LIMIT = 30_000  # bytes: what a newcomer reads through; older figures and decisions live in git history
README_LIMIT = 12_000  # bytes: the manual is docs/; the README says what Lancelot is and how to start
FIRST_COMMANDS = [
    (
        "pip install . && lancelot index examples/sample-docs ./sample-db"
        ' && lancelot search "refund policy" --db ./sample-db'
    ),
    'pip install ".[test]" && python -m pytest',  # .ci/run runs this test command
]
SHELL_BLOCKS = {"", "bash", "sh", "shell", "zsh"}
LAUNCHERS = {"--", "exec", "env", "time", "sudo", "nohup", "command"}
SEPARATOR = re.compile(r"^[|&;()<>]+$")  # shlex punctuation tokens: |, &&, ;, <, >, 2>&1's >&
PLACEHOLDER = re.compile(r"^(<.*>|[A-Z][A-Z_]*)$")  # COMMAND, <command>: any command


@dataclass(frozen=True)
class Invocation:
    line: int  # 1-based line in the README
    text: str  # the command line as written
    words: tuple[str, ...]  # what follows `lancelot`


def command_lines(markdown: str) -> list[tuple[int, str]]:
    """(line number, command line) for every command line in ``markdown`` (see the module doc)."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    language = ""
    pending, start = "", 0
    for number, raw in enumerate(markdown.splitlines(), start=1):
        stripped = raw.strip()
        if fence is None:
            match = re.match(r"^(`{3,}|~{3,})\s*([\w+-]*)", stripped)
            if match:
                fence, language = match.group(1), match.group(2).lower()
                continue
            for span in re.findall(r"(?<!`)`([^`\n]+)`(?!`)", raw):
                if span == "lancelot" or span.startswith("lancelot "):
                    out.append((number, span))
            continue
        if stripped.startswith(fence):
            fence = None
            continue
        if language == "console":
            if not (stripped.startswith("$ ") or pending):
                continue
            stripped = stripped[2:] if not pending else stripped
        elif language not in SHELL_BLOCKS:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append((start, pending + stripped))
        pending = ""
    return out


def invocations(markdown: str) -> list[Invocation]:
    """Every `lancelot ...` run shown in ``markdown``."""
    found: list[Invocation] = []
    for number, line in command_lines(markdown):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes: not a command line
            continue
        segment: list[str] = []
        for token in [*tokens, ";"]:
            if not SEPARATOR.match(token):
                segment.append(token)
                continue
            found.extend(_in_segment(number, line, segment))
            segment = []
    return found


def _in_segment(number: int, line: str, tokens: list[str]) -> list[Invocation]:
    out = []
    for i, token in enumerate(tokens):
        if token != "lancelot":
            continue
        before = [t for t in tokens[:i] if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t)]
        if not before or before[-1] in LAUNCHERS:
            out.append(Invocation(number, line, tuple(tokens[i + 1 :])))
    return out


def problems(markdown: str, commands: list[CommandDoc], source: str = "README") -> list[str]:
    """What is wrong with the command lines of ``markdown``; empty when every one is real."""
    root, subs = commands[0], {doc.name: doc for doc in commands[1:]}
    takes_value = {name for doc in commands for p in doc.params if p.kind == "option" and p.metavar for name in p.names}
    everything = set().union(*(doc.option_names() for doc in commands))
    out = []
    for inv in invocations(markdown):
        where = f"{source} line {inv.line}: {inv.text!r}"
        words = list(inv.words)
        i, readable = 0, True
        while i < len(words) and words[i].startswith("-") and words[i] != "--":  # root options
            name = words[i].split("=", 1)[0]
            if name not in root.option_names():
                out.append(f"{where}: {name} is not an option of `lancelot`")
                readable = False  # whether it takes a value is unknown: the rest cannot be read
                break
            i += 2 if name in takes_value and "=" not in words[i] else 1
        if not readable or i >= len(words):
            continue  # or `lancelot`, `lancelot --help`
        word = words[i]
        if PLACEHOLDER.match(word):
            doc, allowed = None, everything
        elif word in subs:
            doc = subs[word]
            allowed = doc.option_names()
        else:
            out.append(f"{where}: `lancelot {word}` is not a command (commands: {', '.join(subs)})")
            continue
        for arg in words[i + 1 :]:
            if arg == "--":
                break  # the rest is positional
            if re.match(r"^--[A-Za-z]", arg) or re.match(r"^-[A-Za-z]$", arg):
                name = arg.split("=", 1)[0]
                if name not in allowed:
                    target = f"`lancelot {doc.name}`" if doc else "any command"
                    out.append(f"{where}: {name} is not an option of {target}")
    return out


# -- the README and docs/ --------------------------------------------------------------------------------


def doc_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), BENCHMARKS]


@pytest.fixture(scope="module")
def reference() -> list[CommandDoc]:
    return app_reference()


def test_readme_is_short() -> None:
    size = len(README.read_bytes())
    assert size < README_LIMIT, f"README.md is {size:,} bytes; move detail to docs/ (limit {README_LIMIT:,})"


def test_readme_starts_with_the_two_commands() -> None:
    """After the title and one paragraph, the first thing is the block a newcomer and CI run."""
    blocks = re.split(r"\n\s*\n", README.read_text(encoding="utf-8").strip())
    assert blocks[0] == "# Lancelot"
    assert not blocks[1].startswith(("#", "`", "<", "-", "|")), "a short paragraph comes second"
    assert blocks[2].splitlines() == ["```bash", *FIRST_COMMANDS, "```"]


def test_commands_and_options_shown_exist(reference: list[CommandDoc]) -> None:
    found = []
    for page in doc_pages():
        text = page.read_text(encoding="utf-8")
        found += problems(text, reference, page.relative_to(REPO).as_posix())
    assert found == []
    assert len(invocations(README.read_text(encoding="utf-8"))) >= 10  # the parser did find the README's commands


def test_every_command_is_shown_in_the_readme(reference: list[CommandDoc]) -> None:
    shown = set()
    for inv in invocations(README.read_text(encoding="utf-8")):
        words = [w for w in inv.words if not w.startswith("-")]
        shown.update(words[:1])
    missing = [doc.name for doc in reference[1:] if doc.name not in shown]
    assert missing == [], f"commands never shown in README.md: {missing}"


def test_every_command_has_its_section_and_help_in_docs_commands(reference: list[CommandDoc]) -> None:
    text = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert "<!-- generated: help -->" in text
    for doc in reference[1:]:
        assert re.search(rf"^## `lancelot {doc.name}\b", text, flags=re.MULTILINE), f"no section for {doc.name}"
        assert f"<!-- generated: help {doc.name} -->" in text, f"no generated --help for {doc.name}"


def test_every_setting_is_in_the_settings_page() -> None:
    """docs/settings.md lists every variable Lancelot reads (settings.ENVIRONMENT: the generated table of
    settings plus the key, its passphrase, the config folder and the import switch), so a new setting
    cannot go undocumented."""
    from lancelot_cli.settings import FIELDS, OTHER_ENVIRONMENT

    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    assert "<!-- generated: settings -->" in text
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", text, flags=re.MULTILINE))
    openai_client_only = {"OPENAI_ORG_ID", "OPENAI_PROJECT_ID"}  # read by the openai client, not by Lancelot
    wanted = {f.name for f in FIELDS} | (set(OTHER_ENVIRONMENT) - openai_client_only)
    assert wanted - rows == set()


def test_every_tool_has_its_section_in_docs_tools() -> None:
    """The tools are the ones the generated table lists (from a real `tools/list`): each has its own
    generated description and parameters."""
    text = (DOCS / "tools.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(lancedb_\w+)` \|", text, flags=re.MULTILINE)
    assert len(listed) >= 5, "the generated tools table is missing"
    for name in listed:
        assert f"<!-- generated: tool {name} -->" in text, f"no generated section for {name}"


def test_every_command_has_help(reference: list[CommandDoc]) -> None:
    for doc in reference:
        assert doc.summary, f"`{doc.path}` has no help text"
        for param in doc.params:
            assert param.help, f"`{doc.path}` {param.names[0]} has no help text"


@pytest.mark.slow  # the examples run the CLI and a real `lancelot serve`
def test_generated_regions_are_up_to_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `python -m tools.generate --check` checks for the docs (CI runs this test). The examples run
    in a `tools.docrun` process started in the sample's folder: this process never changes its own
    working folder to make them (issue 40), so a chdir fails the test."""

    def no_chdir(path: object) -> None:
        raise AssertionError(f"os.chdir({path!r}) while generating the docs")

    monkeypatch.setattr(os, "chdir", no_chdir)
    found = docgen.rendered(REPO)
    assert {"README.md", "docs/commands.md", "docs/settings.md", "docs/tools.md", "docs/modules.md"} <= set(found)
    stale = {path: pair for path, pair in found.items() if pair[0] != pair[1]}
    if stale:
        path, (now, wanted) = next(iter(stale.items()))
        lines = difflib.unified_diff(now.splitlines(True), wanted.splitlines(True), path, "generated")
        diff = "".join(list(lines)[:60])
        pytest.fail(f"out of date: {', '.join(stale)}; run: python -m tools.generate\n{diff}")


# -- design.md anchors and links between the pages ------------------------------------------------------

CITATION = re.compile(r"\b(?:SPEC ?§ ?(?P<spec>\d+)|[Ii]ssue (?P<issue>\d+))\b")


def anchors(markdown: str) -> set[str]:
    """The fragment names a page offers: GitHub's heading slugs and explicit ``<a id>``s."""
    out = set(re.findall(r'<a id="([^"]+)"', markdown))
    seen: dict[str, int] = {}
    fence = None
    for line in markdown.splitlines():
        if line.startswith(("```", "~~~")):
            fence = None if fence and line.startswith(fence) else (fence or line[:3])
            continue
        heading = re.match(r"^#{1,6} (.+?)\s*#*$", line)
        if fence or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def test_every_spec_section_and_issue_cited_in_the_code_has_an_anchor_in_design() -> None:
    """Comments cite "SPEC §7" and "issue 13"; docs/design.md#spec-7 and #issue-13 say what they decided."""
    design = anchors((DOCS / "design.md").read_text(encoding="utf-8"))
    cited = set()
    for root in ("lancelot_cli", "tests"):
        for path in (REPO / root).rglob("*.py"):
            for match in CITATION.finditer(path.read_text(encoding="utf-8")):
                cited.add(f"spec-{match['spec']}" if match["spec"] else f"issue-{match['issue']}")
    assert cited, "the scan found no citation at all"
    assert sorted(cited - design) == []


def test_design_decisions_and_benchmarks_are_reference_pages_not_diaries() -> None:
    """Issue 40: the benchmark page holds the current figures and the decisions one record each."""
    sizes = {
        path.relative_to(REPO).as_posix(): len(path.read_bytes())
        for path in (DOCS / "design.md", DOCS / "decisions.md", BENCHMARKS)
    }
    assert {page: size for page, size in sizes.items() if size > REFERENCE_LIMIT} == {}


def test_links_between_the_pages_lead_somewhere() -> None:
    pages = {page: page.read_text(encoding="utf-8") for page in doc_pages()}
    broken = []
    for page, text in pages.items():
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            file, _, fragment = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif fragment and path.suffix == ".md" and fragment not in anchors(path.read_text(encoding="utf-8")):
                broken.append(f"{page.name}: {target} (no such anchor)")
    assert broken == []


# -- the generator, on made-up pages -------------------------------------------------------------------


def test_generate_names_a_page_whose_region_was_edited_and_rewrites_it(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "Intro.\n\n<!-- generated: help version -->\nedited by hand\n<!-- /generated -->\n\nEnd.\n", encoding="utf-8"
    )
    (tmp_path / "README.md").write_text("# No regions here\n", encoding="utf-8")
    assert docgen.stale(tmp_path) == ["docs/page.md"]
    assert docgen.write(tmp_path) == ["docs/page.md"]
    assert docgen.stale(tmp_path) == []
    text = page.read_text(encoding="utf-8")
    assert text.startswith("Intro.\n\n<!-- generated: help version -->\n\n```console\n$ lancelot version --help\n")
    assert "Usage: lancelot version" in text and "edited by hand" not in text
    assert text.endswith("```\n\n<!-- /generated -->\n\nEnd.\n")


def test_an_unknown_region_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("<!-- generated: weather today -->\n<!-- /generated -->\n", encoding="utf-8")
    with pytest.raises(ValueError, match="weather today"):
        docgen.stale(tmp_path)


def test_the_settings_table_has_a_row_per_declared_setting() -> None:
    from lancelot_cli.settings import FIELDS

    rows = docgen.settings_table().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == [f.name for f in FIELDS]


def test_a_table_whose_path_was_shortened_is_laid_out_again() -> None:
    before = [
        "Config folder:  /tmp/lancelot-docs-abc123/cfg  (LANCELOT_CONFIG_DIR)",
        "",
        "setting        value                         from",
        "LANCEDB_PATH   /tmp/lancelot-docs-abc123/db  file",
        "LANCEDB_TABLE  documents                     default",
        "NOTE           (none)                        vector search is off; text works",
    ]
    after = [line.replace("/tmp/lancelot-docs-abc123", "/home/you") for line in before]
    assert docsample._realign(before, after) == [
        "Config folder:  /home/you/cfg  (LANCELOT_CONFIG_DIR)",  # not a table: a gap of two, as printed
        "",
        "setting        value         from",
        "LANCEDB_PATH   /home/you/db  file",
        "LANCEDB_TABLE  documents     default",
        "NOTE           (none)        vector search is off; text works",
    ]
    assert docsample._realign(before, before) == before  # nothing replaced, nothing moved


def test_the_jq_stand_in_prints_what_jq_prints() -> None:
    lines = '{"score":2.5,"matched":1.0,"title":"Été","id":"x"}\n{"score":3,"matched":0.5,"title":"b"}\n'
    assert docsample._jq_fields("score", "matched", "title")(lines) == (
        '{"score":2.5,"matched":1,"title":"Été"}\n{"score":3,"matched":0.5,"title":"b"}'
    )


# -- the checker itself, on made-up snippets -----------------------------------------------------------

SNIPPET = """
Run `lancelot init --show` or `lancelot serach x`. Not a command: `which lancelot`.

```bash
pip install . && lancelot index ./docs ./db --table notes   # a comment --nope
printenv OPENAI_API_KEY | lancelot init --db /abs/db --api-key-stdin
claude mcp add --env LANCEDB_PATH=/abs/db --transport stdio lancelot -- lancelot serve --http 8080
lancelot --db ./db search "refund --policy" -n 3 --jsonl
lancelot search x --bogus
LANCEDB_PATH=./db lancelot status --verbos
lancelot query "q" \\
    --budget 900 --warm-up
lancelot COMMAND --help
```

```console
$ lancelot version --json
lancelot 0.1.0 (MCP protocol x) --not-checked
$ lancelot --dbb x status
```

```json
{"command": "lancelot", "args": ["serve", "--nonsense"]}
```
"""


def test_checker_finds_commands_in_blocks_prose_and_pipelines(reference: list[CommandDoc]) -> None:
    seen = [inv.words[:1] for inv in invocations(SNIPPET)]
    assert seen == [
        ("init",),
        ("serach",),
        ("index",),
        ("init",),
        ("serve",),
        ("--db",),
        ("search",),
        ("status",),
        ("query",),
        ("COMMAND",),
        ("version",),
        ("--dbb",),
    ]


def test_checker_reports_unknown_commands_and_options(reference: list[CommandDoc]) -> None:
    found = problems(SNIPPET, reference)
    assert len(found) == 5, found
    for needle in (
        "`lancelot serach` is not a command",
        "--bogus is not an option of `lancelot search`",
        "--verbos is not an option of `lancelot status`",
        "--warm-up is not an option of `lancelot query`",
        "--dbb is not an option of `lancelot`",
    ):
        assert any(needle in problem for problem in found), (needle, found)


def test_checker_passes_a_readme_section_file(tmp_path: Path, reference: list[CommandDoc]) -> None:
    page = tmp_path / "page.md"
    page.write_text('```console\n$ lancelot search "x" --db ./db --limit 2 --json\n```\n', encoding="utf-8")
    assert problems(page.read_text(encoding="utf-8"), reference) == []
