"""`search` piped, without rich: the plain blocks (and --jsonl lines) and the stderr notes, written
with the standard library when rich would write exactly the same bytes (issue 49: rich only when a
terminal needs it).

Piped, rich draws nothing: the hits are plain text (``search_blocks``, also what cli/hits.py writes)
and the note and hit count on stderr are printed through a console 1,000 columns wide with no
colour. Rich would still change a line that is long enough to wrap, holds an emoji code
(``:smile:``), tabs, controls or spaces at an end, or when an environment variable makes it draw
for a terminal; ``search_reply`` and ``search_lines`` then return False and cli/hits.py draws.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from lancelot_cli.cli.visible import shown
from lancelot_cli.models import Hit, SearchResult, cited
from lancelot_cli.storage.schema import HEADING, LINE_START

# Variables with which rich draws for a terminal on a pipe (or measures another way): rich draws then.
RICH_SWITCHES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES")
SAFE_CHARS = 450  # rich wraps piped lines at 1,000 columns (consoles.PIPED_WIDTH); a character is at most 2
_EMOJI_CODE = re.compile(r":\S*?:")  # what rich may read as an emoji code (a superset of rich's own pattern)


def piped() -> bool:
    """True when neither stdout nor stderr is a terminal and nothing asks rich to draw as if."""
    return not sys.stdout.isatty() and not sys.stderr.isatty() and not any(n in os.environ for n in RICH_SWITCHES)


def _as_rich_prints(line: str) -> bool:
    """True when rich prints ``line`` (escaped, no style shown) piped as it is, with a newline."""
    return len(line) <= SAFE_CHARS and line == line.strip() and line.isprintable() and not _EMOJI_CODE.search(line)


def one_line(text: str) -> str:
    """One line of text from a document, white space folded, control characters shown (as
    consoles.one_line)."""
    return shown(" ".join(str(text).split()))


def score(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else str(value)


def line_of(hit: Hit) -> int | None:
    """The file line the hit's chunk starts on (``line_start``), when the table has it."""
    value = hit.metadata.get(LINE_START)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def place(hit: Hit) -> str:
    """``path:line`` (or the path alone), as ripgrep and compilers print a place."""
    line = line_of(hit)
    return shown(cited(hit.source, hit.metadata)) + (f":{line}" if line else "")


def section(hit: Hit) -> str:
    """The headings the chunk sits under ("Doc > Section"), else its title."""
    heading = hit.metadata.get(HEADING)
    return one_line(heading if isinstance(heading, str) and heading.strip() else hit.title)


def finders(found_by: Sequence[int]) -> str:
    """``query, --also 2``: the phrasings that found a hit, as the command line named them."""
    return ", ".join("query" if n == 0 else f"--also {n}" for n in found_by)


def search_blocks(hits: Sequence[Hit]) -> str:
    """One block per hit: ``N. section  (score S)``, ``path:line  id ID``, the snippet."""
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        if rank > 1:
            lines.append("")
        lines.append(f"{rank}. {section(hit)}  (score {score(hit.score)})")
        found = f"  found by {finders(hit.found_by)}" if hit.found_by is not None else ""
        lines.append(f"   {place(hit)}  id {shown(hit.id)}{found}")
        lines.append(f"   {one_line(hit.snippet)}")
    return "\n".join(lines) + "\n"


def how(reply: SearchResult) -> str:
    return f"{reply.search_type} search, ranked by {reply.ranking}"


def count_line(reply: SearchResult) -> str:
    count = reply.count
    return f"{count} hit{'s' if count != 1 else ''} in table {reply.table!r} ({how(reply)})."


def no_match_line(reply: SearchResult) -> str:
    return f"No matches for {reply.query!r} in table {reply.table!r} ({how(reply)})."


def search_reply(reply: SearchResult) -> bool:
    """Piped `search` output as cli/hits.py ``search_reply`` writes it; False (nothing written) when
    rich must write it."""
    note = [f"note: {reply.note}"] if reply.note else []
    said = [*note, no_match_line(reply) if not reply.hits else count_line(reply)]
    if not piped() or not all(_as_rich_prints(line) for line in said):
        return False
    _write(sys.stderr, "".join(f"{line}\n" for line in note))
    if reply.hits:
        _write(sys.stdout, search_blocks(reply.hits))
    _write(sys.stderr, said[-1] + "\n")
    return True


def search_lines(reply: SearchResult) -> bool:
    """`search --jsonl` as cli/hits.py ``search_lines`` writes it; False (nothing written) when rich
    must write its note."""
    note = f"note: {reply.note}" if reply.note else None
    if not piped() or (note is not None and not _as_rich_prints(note)):
        return False
    from lancelot_cli.wire import to_json

    _write(sys.stdout, "".join(to_json(hit) + "\n" for hit in reply.hits))
    if note is not None:
        _write(sys.stderr, note + "\n")
    return True


def _write(stream: TextIO, text: str) -> None:
    if text:
        stream.write(text)
        stream.flush()
