"""Which files `lancelot index` reads, in words: one list, made from the indexer's own sets.

The truth is the indexer's: ``scanning.MARKDOWN``, ``TEXT``, ``HTML`` and ``formats.PACKAGED``
(``scanning.EXTENSIONS`` is their union). `sentence` turns them into "Markdown (.md, ...), text
(...), ... and EPUB (.epub)"; `index --help`, the `init` wizard and docs/indexing.md all say exactly
that (tests/test_readable.py compares the three with the sets).

`index --help` is built on every start of the CLI, and importing the indexer package costs about
80 ms (pipeline, ledger, readers), more than the rest of a help screen. So the help and the wizard
read `readable_list.READ`, a one-line module that `python -m tools.generate` writes from
the sets (``--check`` and the test fail when a reader is added and it was not regenerated).
A suffix with no name below is shown by its letters (".rst" as "RST"), so a new reader is listed
even before someone names it.
"""

from __future__ import annotations

GENERATED = "lancelot_cli/cli/readable_list.py"

# A kind's name as a person says it, by the suffix that stands for the group.
_NAMES = {".md": "Markdown", ".txt": "text", ".html": "HTML", ".pdf": "PDF", ".docx": "Word"}
_NAMES.update({".rst": "reStructuredText", ".adoc": "AsciiDoc", ".pptx": "PowerPoint", ".epub": "EPUB"})


def groups() -> list[tuple[str, tuple[str, ...]]]:
    """(name, suffixes) for each kind the indexer reads, in the order people know them."""
    from lancelot_cli.indexer.formats import PACKAGED
    from lancelot_cli.indexer.scanning import ASCIIDOC, EXTENSIONS, HTML, MARKDOWN, RST, TEXT

    out = [(_name(group), _ordered(group)) for group in (MARKDOWN, TEXT, RST, ASCIIDOC, HTML)]
    out += [(_name({suffix}), (suffix,)) for suffix in _ordered(PACKAGED)]
    listed = {suffix for _, suffixes in out for suffix in suffixes}
    out += [(_name({suffix}), (suffix,)) for suffix in sorted(EXTENSIONS - listed)]  # a set not known here
    return out


def _ordered(group: set[str] | frozenset[str]) -> tuple[str, ...]:
    """Named suffixes in the order of ``_NAMES``, then the rest by length and name (.md, .mdx, .mdown)."""
    order = list(_NAMES)
    return tuple(sorted(group, key=lambda s: (order.index(s) if s in _NAMES else len(order), len(s), s)))


def _name(group: set[str] | frozenset[str]) -> str:
    named = [_NAMES[s] for s in sorted(group) if s in _NAMES]
    return named[0] if named else min(group).lstrip(".").upper()


def sentence(found: list[tuple[str, tuple[str, ...]]] | None = None) -> str:
    """ "Markdown (.md, .mdx, ...), text (.txt, .text), ... and EPUB (.epub)": every suffix, by kind."""
    parts = [f"{name} ({', '.join(suffixes)})" for name, suffixes in (groups() if found is None else found)]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def module_text() -> str:
    """The generated module `GENERATED`: the sentence as a constant, for the help and the wizard."""
    import json
    import textwrap

    # Lines of at most 100 characters, as ruff formats them (json: the text holds no quote or backslash).
    lines = textwrap.wrap(sentence(), 90, drop_whitespace=False)
    body = "".join(f"    {json.dumps(line)}\n" for line in lines)
    doc = '"""Written by `python -m tools.generate` from the indexer\'s sets (tools/readable.py)."""'
    return f"{doc}\n\nREAD = (\n{body})\n"
