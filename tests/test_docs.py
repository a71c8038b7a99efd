"""README.md against the Typer app: every `lancelot <command>` it shows exists, every option shown for
a command is one of that command's options, and every command appears at least once.

Where commands are read from:
* shell code blocks (```bash, ```sh, ```shell, or no language): every line; a `lancelot` token
  counts when it starts a command (first word after any VAR=value, or after `|`, `&&`, `;`...), or
  follows a launcher word (`--`, `exec`, `env`, `time`, `sudo`) as in `claude mcp add ... -- lancelot serve`;
* ```console blocks: only the lines that start with `$ ` (the rest is output);
* inline code in prose that starts with `lancelot` (`lancelot init --show`).
Other blocks (JSON, TOML) hold configuration, not command lines, and are skipped.

Options are read from the app itself (`reference.walk`): no list here to keep up to date.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from lancelot_cli.cli.generate import app_reference
from lancelot_cli.cli.reference import CommandDoc
from tests.conftest import REPO

README = REPO / "README.md"
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
            out.append(Invocation(number, line, tuple(tokens[i + 1:])))
    return out


def problems(markdown: str, commands: list[CommandDoc]) -> list[str]:
    """What is wrong with the command lines of ``markdown``; empty when every one is real."""
    root, subs = commands[0], {doc.name: doc for doc in commands[1:]}
    takes_value = {name for doc in commands for p in doc.params if p.kind == "option" and p.metavar
                   for name in p.names}
    everything = set().union(*(doc.option_names() for doc in commands))
    out = []
    for inv in invocations(markdown):
        where = f"README line {inv.line}: {inv.text!r}"
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
        for arg in words[i + 1:]:
            if arg == "--":
                break  # the rest is positional
            if re.match(r"^--[A-Za-z]", arg) or re.match(r"^-[A-Za-z]$", arg):
                name = arg.split("=", 1)[0]
                if name not in allowed:
                    target = f"`lancelot {doc.name}`" if doc else "any command"
                    out.append(f"{where}: {name} is not an option of {target}")
    return out


# -- the README -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference() -> list[CommandDoc]:
    return app_reference()


def test_readme_commands_and_options_exist(reference: list[CommandDoc]) -> None:
    text = README.read_text(encoding="utf-8")
    assert problems(text, reference) == []
    assert len(invocations(text)) >= 10  # the parser did find the README's commands


def test_every_command_is_shown_in_the_readme(reference: list[CommandDoc]) -> None:
    shown = set()
    for inv in invocations(README.read_text(encoding="utf-8")):
        words = [w for w in inv.words if not w.startswith("-")]
        shown.update(words[:1])
    missing = [doc.name for doc in reference[1:] if doc.name not in shown]
    assert missing == [], f"commands never shown in README.md: {missing}"


def test_every_setting_is_in_the_readme_settings_table() -> None:
    """The README's Settings table lists every variable Lancelot reads (settings.ENVIRONMENT: the table of
    settings plus the key, its passphrase and the config folder), so a new setting cannot go undocumented."""
    from lancelot_cli.settings import FIELDS, OTHER_ENVIRONMENT

    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Settings\n"):]
    section = section[: section.index("\n## ", 1)]
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE))
    openai_client_only = {"OPENAI_ORG_ID", "OPENAI_PROJECT_ID"}  # read by the openai client, not by Lancelot
    wanted = {f.name for f in FIELDS} | (set(OTHER_ENVIRONMENT) - openai_client_only)
    assert wanted - rows == set()


def test_every_command_has_help(reference: list[CommandDoc]) -> None:
    for doc in reference:
        assert doc.summary, f"`{doc.path}` has no help text"
        for param in doc.params:
            assert param.help, f"`{doc.path}` {param.names[0]} has no help text"


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
    assert seen == [("init",), ("serach",), ("index",), ("init",), ("serve",), ("--db",), ("search",),
                    ("status",), ("query",), ("COMMAND",), ("version",), ("--dbb",)]


def test_checker_reports_unknown_commands_and_options(reference: list[CommandDoc]) -> None:
    found = problems(SNIPPET, reference)
    assert len(found) == 5, found
    for needle in ("`lancelot serach` is not a command", "--bogus is not an option of `lancelot search`",
                   "--verbos is not an option of `lancelot status`", "--warm-up is not an option of `lancelot query`",
                   "--dbb is not an option of `lancelot`"):
        assert any(needle in problem for problem in found), (needle, found)


def test_checker_passes_a_readme_section_file(tmp_path: Path, reference: list[CommandDoc]) -> None:
    page = tmp_path / "page.md"
    page.write_text("```console\n$ lancelot search \"x\" --db ./db --limit 2 --json\n```\n", encoding="utf-8")
    assert problems(page.read_text(encoding="utf-8"), reference) == []
