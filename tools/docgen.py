"""The parts of README.md and docs/*.md that are made from the program, so that they cannot drift.

A generated region is written as

    <!-- generated: KIND [ARGS] -->
    ...
    <!-- /generated -->

and `python -m tools.generate` rewrites what lies between the two marks (with ``--check``
it names the files where that differs, and exits 1). The kinds:

* ``help [COMMAND]``: what ``lancelot [COMMAND] --help`` prints at 100 columns, without colour.
* ``example NAME ...``: the `docsample.EXAMPLES` named, as one console session: commands run on the
  bundled sample (see `docsample` for how, and why every run prints the same text).
* ``settings``: the table of settings, from `settings.FIELDS`.
* ``tools`` and ``tool NAME``: the tool list and one tool's description and parameters, from
  ``tools/list`` of a real ``lancelot serve`` spoken to over stdio (raw JSON-RPC, as a client sends).
* ``reply NAME``: a `docsample.REPLIES` call to that server, and what it answered.
* ``readable``: the kinds of files `lancelot index` reads, every suffix, from the indexer's sets
  (`tools.readable.sentence`).
* ``modules [FOLDER]``: every module of the package (or of FOLDER of the checkout, ``tools``) with the
  first paragraph of its docstring.

Nothing in a region is typed by hand: change the program (or `EXAMPLES`, `REPLIES`) and regenerate.
The sample is made only when a region needs it, once per run.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path
from typing import Any

from tools.docsample import EXAMPLES, PACKAGE, REPLIES, REPO, WIDTH, Sample, clean, environment

REGION = re.compile(
    r"(?P<open><!-- generated: (?P<spec>[^>]*?) -->\n)(?P<body>.*?)(?P<close><!-- /generated -->)", re.S
)

# The settings' kinds (see settings._setting) as a person reads them.
_KINDS = {"str": "text", "int": "whole number, at least 1", "list": "comma-separated", "json": "JSON object"}


# -- rendering helpers ------------------------------------------------------------------------------------


def _fence(text: str, language: str = "") -> str:
    """``text`` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _cell(text: str) -> str:
    """Text for one cell of a Markdown table: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


# -- help, settings, modules: read from the code ------------------------------------------------------------


def help_block(args: list[str]) -> str:
    """``lancelot [COMMAND] --help`` as printed at 100 columns, piped."""
    from typer.testing import CliRunner

    from lancelot_cli.cli.app import app

    env = environment((), COLUMNS=str(WIDTH), TERMINAL_WIDTH=str(WIDTH))
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="lancelot", env=env)
    if result.exit_code != 0:
        raise RuntimeError(f"lancelot {' '.join(args)} --help exited {result.exit_code}: {result.output}")
    return _fence(f"$ {shlex.join(['lancelot', *args, '--help'])}\n{clean(result.output)}", "console")


def settings_table() -> str:
    """Every setting of `settings.FIELDS`: variable, default, kind and description."""
    from lancelot_cli import settings

    spans = getattr(settings, "_SPANS", {})
    kinds = {**_KINDS, **{kind: f"{kind}, 0 to {most}" for kind, most in spans.items()}}
    rows = ["| variable | default | kind | meaning |", "|---|---|---|---|"]
    for f in settings.FIELDS:
        shown = settings.display(f.default, f)
        default = shown if f.default in (None, ()) else f"`{shown}`"
        rows.append(f"| `{f.name}` | {_cell(default)} | {kinds.get(f.kind, f.kind)} | {_cell(f.description)} |")
    return "\n".join(rows)


def module_map(package: Path = PACKAGE) -> str:
    """Every module of ``package`` and the first paragraph of its docstring."""
    rows = ["| module | what it is for |", "|---|---|"]
    for path in sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).as_posix()):
        rel = path.relative_to(package).as_posix()
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        name = rel.removesuffix("__init__.py") if rel != "__init__.py" else rel
        rows.append(f"| `{name}` | {_cell(doc.split(chr(10) * 2)[0])} |")
    return "\n".join(rows)


# -- the tools ------------------------------------------------------------------------------------------


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type(schema['additionalProperties'])}"
    return str(kind)


def _range(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"{low}\N{EN DASH}{high}"
    if low is not None:
        return f"at least {low}"
    if high is not None:
        return f"at most {high}"
    return f"at most {schema['maxLength']} characters" if "maxLength" in schema else ""


def _annotations(tool: dict[str, Any]) -> str:
    return ", ".join(f"`{k}: {json.dumps(v)}`" for k, v in sorted(tool.get("annotations", {}).items()))


def tools_table(sample: Sample) -> str:
    rows = ["| tool | title | parameters (required in bold) | annotations |", "|---|---|---|---|"]
    for tool in sample.tools:
        schema = tool.get("inputSchema", {})
        required = set(schema.get("required", []))
        params = ", ".join(f"**`{p}`**" if p in required else f"`{p}`" for p in schema.get("properties", {})) or "none"
        rows.append(f"| `{tool['name']}` | {_cell(tool.get('title', ''))} | {params} | {_annotations(tool)} |")
    rows += [
        "",
        (
            f"The `tools/list` reply, as `lancelot serve` sends it over stdio (one JSON-RPC line): "
            f"{sample.tools_list_size:,} characters."
        ),
    ]
    return "\n".join(rows)


def tool_block(sample: Sample, name: str) -> str:
    found = [t for t in sample.tools if t["name"] == name]
    if not found:
        raise KeyError(f"no tool {name!r} in tools/list (tools: {', '.join(t['name'] for t in sample.tools)})")
    tool = found[0]
    out = [f"**{_cell(tool.get('title', name))}.** Annotations: {_annotations(tool)}.", ""]
    out += [f"> {line}" if line else ">" for line in tool.get("description", "").splitlines()]
    schema = tool.get("inputSchema", {})
    properties, required = schema.get("properties", {}), set(schema.get("required", []))
    if properties:
        out += ["", "| parameter | type | required | default | range | meaning |", "|---|---|---|---|---|---|"]
        for param, spec in properties.items():
            default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
            out.append(
                f"| `{param}` | {_type(spec)} | {'yes' if param in required else 'no'} | {default} | "
                f"{_range(spec)} | {_cell(spec.get('description', ''))} |"
            )
    else:
        out += ["", "No parameters."]
    output = tool.get("outputSchema")
    if output:
        needed = set(output.get("required", []))
        fields = ", ".join(f"`{k}`" + ("" if k in needed else " (optional)") for k in output.get("properties", {}))
        out += ["", f"Structured content follows its output schema: {fields}."]
    return "\n".join(out)


def reply_block(sample: Sample, name: str) -> str:
    call = next((r for r in REPLIES if r.name == name), None)
    if call is None:
        raise KeyError(f"no reply {name!r} (replies: {', '.join(r.name for r in REPLIES)})")
    message = sample.replies[name]
    asked = f"`{call.tool}` with `{json.dumps(call.arguments, ensure_ascii=False)}`"
    if "error" in message:
        return f"{asked} is refused as a request:\n\n{_fence(json.dumps(message['error'], indent=2), 'json')}"
    result = message["result"]
    text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text").rstrip("\n")
    if result.get("isError"):
        return f"{asked} answers an error (`isError: true`):\n\n{_fence(text, 'text')}"
    try:
        shown = _fence(json.dumps(json.loads(text), indent=2, ensure_ascii=False), "json")
        note = " (indented here; the server sends it compact)"
    except ValueError:
        shown, note = _fence(text, "markdown"), ""
    return f"{asked} answers{note}:\n\n{shown}"


# -- the regions ----------------------------------------------------------------------------------------


class Generator:
    """Makes the text of each region; the sample is made on first need, once."""

    def __init__(self) -> None:
        self._sample: Sample | None = None

    @property
    def sample(self) -> Sample:
        if self._sample is None:
            self._sample = Sample()
        return self._sample

    def make(self, spec: str) -> str:
        kind, *args = spec.split()
        if kind == "help":
            return help_block(args)
        if kind == "settings" and not args:
            return settings_table()
        if kind == "modules" and len(args) <= 1:
            return module_map(REPO / args[0] if args else PACKAGE)
        if kind == "readable" and not args:
            from tools.readable import sentence

            return f"{sentence()}."
        if kind == "example" and args:
            unknown = [a for a in args if a not in {e.name for e in EXAMPLES}]
            if unknown:
                raise KeyError(f"no example {unknown[0]!r} (examples: {', '.join(e.name for e in EXAMPLES)})")
            return _fence("\n".join(self.sample.examples[a] for a in args), "console")
        if kind == "tools" and not args:
            return tools_table(self.sample)
        if kind == "tool" and len(args) == 1:
            return tool_block(self.sample, args[0])
        if kind == "reply" and len(args) == 1:
            return reply_block(self.sample, args[0])
        raise ValueError(f"unknown generated region {spec!r}")

    def rewrite(self, text: str) -> str:
        return REGION.sub(lambda m: f"{m['open']}\n{self.make(m['spec'].strip())}\n\n{m['close']}", text)


def doc_files(root: Path) -> list[Path]:
    """README.md and docs/*.md under ``root`` (those that exist)."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [path for path in files if path.is_file()]


def rendered(root: Path, generator: Generator | None = None) -> dict[str, tuple[str, str]]:
    """Path relative to ``root`` -> (text now, text with its regions made again), for files with regions."""
    generator = generator or Generator()
    out = {}
    for path in doc_files(root):
        text = path.read_text(encoding="utf-8")
        if REGION.search(text):
            out[path.relative_to(root).as_posix()] = (text, generator.rewrite(text))
    return out


def stale(root: Path) -> list[str]:
    """Files whose generated regions differ from what the program makes now."""
    return [path for path, (now, wanted) in rendered(root).items() if now != wanted]


def write(root: Path) -> list[str]:
    """Make every region again; return the files that changed."""
    changed = []
    for path, (now, wanted) in rendered(root).items():
        if now != wanted:
            (root / path).write_text(wanted, encoding="utf-8")
            changed.append(path)
    return changed
