"""Regenerate (or check) the files made from the program: shell completions, man pages and the docs.

    python -m tools.generate            # write completions/, man/ and the docs' generated parts
    python -m tools.generate --check    # exit 1 and name the files that are out of date

* ``completions/lancelot.bash``, ``completions/_lancelot`` (zsh), ``completions/lancelot.fish``: exactly
  what ``_LANCELOT_COMPLETE=source_bash|source_zsh|source_fish lancelot`` prints. They call back
  into ``lancelot`` for the words, so command names, options, enum values and table names (the
  ``*.lance`` folders of the database folder, for ``--table``) always match the installed version.
* ``man/lancelot.1`` and ``man/lancelot-<command>.1``: see `tools.manpage`.
* ``lancelot_cli/cli/readable_list.py``: the kinds of files `lancelot index` reads, for its help and
  the `init` wizard, from the indexer's sets (see `tools.readable`).
* the regions of README.md and docs/*.md marked ``<!-- generated: ... -->``: `--help` screens,
  example output on the bundled sample, the settings table, the MCP tools, the module map; see
  `tools.docgen` (about ten seconds: it indexes the sample and asks a real `lancelot serve`).

tests/test_completions.py, tests/test_manpages.py and tests/test_docs.py fail when the files differ
from what this module makes now, so a changed option, setting, tool or output means: run this,
commit the result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lancelot_cli.cli.reference import CommandDoc, describe

PROG = "lancelot"
COMPLETE_VAR = "_LANCELOT_COMPLETE"
COMPLETION_FILES = {"bash": "lancelot.bash", "zsh": "_lancelot", "fish": "lancelot.fish"}
REPO = Path(__file__).resolve().parents[1]


def completion_script(shell: str) -> str:
    """The script ``_LANCELOT_COMPLETE=source_<shell> lancelot`` prints, with a final newline."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell) + "\n"


def walk(root: Any, prog_name: str = "lancelot") -> list[CommandDoc]:
    """The root group and then each subcommand, in the order `lancelot --help` lists them."""
    ctx = root.make_context(prog_name, [], resilient_parsing=True)
    docs = [describe(root, ctx)]
    for name in root.list_commands(ctx):
        sub = root.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        sub_ctx = sub.make_context(name, [], parent=ctx, resilient_parsing=True)
        docs.append(describe(sub, sub_ctx))
    return docs


def app_reference() -> list[CommandDoc]:
    """`walk` over the real `lancelot` app (man pages, the docs test). The app is imported here, not in
    `reference`, which `app` reaches through `helpfmt`: that was a cycle (app -> helpfmt -> reference -> app)."""
    import typer

    from lancelot_cli.cli.app import app

    return walk(typer.main.get_command(app))


def man_pages() -> dict[str, str]:
    from lancelot_cli._version import __version__
    from tools.manpage import pages

    return pages(app_reference(), __version__)


def artifacts() -> dict[str, str]:
    """Path relative to the repository -> content, for every generated file."""
    files = {f"completions/{name}": completion_script(shell) for shell, name in COMPLETION_FILES.items()}
    files.update({f"man/{name}": text for name, text in man_pages().items()})
    from tools import readable

    files[readable.GENERATED] = readable.module_text()
    return files


def stale(root: Path = REPO) -> list[str]:
    """Generated files that are missing or differ under ``root``, plus pages no command has any more."""
    wanted = artifacts()
    out = [
        path
        for path, text in wanted.items()
        if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text
    ]
    man = root / "man"
    if man.is_dir():
        out += [f"man/{p.name}" for p in sorted(man.glob("*.1")) if f"man/{p.name}" not in wanted]
    return out


def write(root: Path = REPO) -> list[str]:
    """Write every generated file under ``root`` and remove pages of commands that are gone."""
    wanted = artifacts()
    changed = stale(root)
    for path, text in wanted.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    for path in changed:
        if path not in wanted:
            (root / path).unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report files that are out of date (exit 1)")
    parser.add_argument("--root", type=Path, default=REPO, help=f"the checkout (default {REPO})")
    parser.add_argument("--no-docs", action="store_true", help="completions and man pages only")
    opts = parser.parse_args(argv)
    from tools import docgen

    if opts.check:
        out = stale(opts.root) + ([] if opts.no_docs else docgen.stale(opts.root))
        for path in out:
            print(f"out of date: {path}", file=sys.stderr)
        if out:
            print("run: python -m tools.generate", file=sys.stderr)
        return 1 if out else 0
    for path in write(opts.root) + ([] if opts.no_docs else docgen.write(opts.root)):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
