"""Architecture decision records (ADRs): which documents are one, and their status and date (issue 47).

A decision record answers "what did we decide about X, and does it still hold?": its status
("accepted", "superseded") and date become columns (``kind``, ``status``, ``date``) that filters
and ``lancelot ls`` use. A record is known by where it sits (a folder named ``adr``, ``decisions``,
``decision-records``...), by its file name (``0001-use-postgres.md``, ``ADR-012-...``) and by its
sections (Status, Context, Decision, Consequences; MADR's "Decision Outcome"; a ``Status:`` field,
front matter ``status:``, an AsciiDoc ``:status:`` attribute). Either alone is too weak: Sphinx
projects number their chapters (``01-intro.rst``), and a how-to may have a "Context" section. So a
file counts when it sits in a decisions folder (numbered, or with a record's sections), or when
its name is numbered and its sections say so, or when it has Status, Context and Decision all three.

The text is read line by line with string tests (hostile lines cost linear time, issue 37); it may
be the file as written (Markdown, reST, AsciiDoc, front matter included) or the Markdown that
``markup`` made of it.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import PurePosixPath

from lancelot_cli.storage.schema import KIND

_FOLDERS = frozenset(
    {
        "adr",
        "adrs",
        "decisions",
        "decision-records",
        "decision_records",
        "architecture-decisions",
        "architecture-decision-records",
        "architecture_decisions",
        "design-decisions",
    }
)
_NUMBERED = re.compile(r"(?:adr[-_ ]?)?\d{1,5}(?:[-_. ]|$)", re.I)
_ADR_NAMED = re.compile(r"adr[-_ ]?\d", re.I)
_NOT_RECORDS = frozenset({"readme", "index", "toc", "changelog"})
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_CONTEXT = frozenset({"context", "context and problem statement", "problem statement", "background"})
_DECISION = frozenset({"decision", "decision outcome", "considered options", "decision drivers"})
_CONSEQUENCES = frozenset({"consequences", "positive consequences", "negative consequences"})
_STATUSES = frozenset(
    "proposed accepted rejected deprecated superseded draft approved amended withdrawn obsolete".split()
)
_ADORNMENT = frozenset("=-~^\"'`#*+:._")
_MARKS = " \t-*+>|_`"  # list marks, quotes, bold and code around a field's name
TOP_LINES = 40  # a record's date sits near its top


def decision_meta(rel_path: str, title: str | None, text: str) -> dict[str, str]:
    """{"kind": "adr", "status": ..., "date": "YYYY-MM-DD"} for a decision record (status and date
    when found; status is its first word, lower-cased: "accepted", "superseded"), {} for any other
    document. ``rel_path`` is the file's path in the folder (forward slashes), ``title`` its title."""
    path = PurePosixPath(rel_path.lower())
    stem = path.name.split(".", 1)[0]
    if "template" in stem or stem in _NOT_RECORDS or "template" in (title or "").lower():
        return {}
    found = _Sections.read(text)
    in_folder = any(part in _FOLDERS for part in path.parts[:-1])
    numbered = _NUMBERED.match(stem) is not None
    sections = bool(found.headings & (_CONTEXT | _DECISION | _CONSEQUENCES))
    has_status = found.status is not None
    if in_folder:
        record = numbered or (has_status and sections) or len(found.headings & (_CONTEXT | _DECISION)) == 2
    elif _ADR_NAMED.match(stem) or _ADR_NAMED.match(title or ""):
        record = has_status or sections
    elif numbered:
        record = has_status and sections
    else:
        record = has_status and bool(found.headings & _CONTEXT) and bool(found.headings & _DECISION)
    if not record:
        return {}
    meta = {KIND: "adr"}
    status = _status_word(found.status or "")
    if status:
        meta["status"] = status
    date = found.date or _first_date(text)
    if date:
        meta["date"] = date
    return meta


class _Sections:
    """What a record's text says: its section names, its status line and its date field."""

    def __init__(self) -> None:
        self.headings: set[str] = set()
        self.status: str | None = None
        self.date: str | None = None

    @classmethod
    def read(cls, text: str) -> _Sections:
        found = cls()
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        after: str | None = None  # the section whose first line of text is wanted ("status", "date")
        fence = ""
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")) and (not fence or stripped.startswith(fence)):
                fence = "" if fence else stripped[:3]
                continue
            if fence or not stripped or _is_adornment(stripped):
                continue
            name = _heading(stripped, lines[i + 1] if i + 1 < len(lines) else "", bold=after is None)
            field = _field(name) if name is not None and ":" in name else None
            if field is not None:  # "## Status: Accepted"
                found._take(*field)
            elif name is not None:
                found.headings.add(name)
                after = name if name in ("status", "date") else None
                continue
            if after is not None:
                found._take(after, stripped)
                after = None
                continue
            field = _field(stripped)
            if field is not None:
                found._take(*field)
        return found

    def _take(self, key: str, value: str) -> None:
        value = value.strip().strip("*_`[]").strip()
        if key == "status" and self.status is None and value:
            self.status = value
        elif key in ("date", "decision date", "last updated") and self.date is None:
            self.date = _first_date(value)


def _heading(line: str, following: str, bold: bool = True) -> str | None:
    """The lower-cased name of a heading line (Markdown ``#``, AsciiDoc ``=``, a line over an
    underline, with ``bold`` a line in bold alone), or None."""
    if line[0] in "#=":
        bare = line.lstrip(line[0])
        if bare[:1] in (" ", "\t"):
            return _name(bare.rstrip("#= \t"))
        return None
    under = following.strip()
    if len(under) >= 3 and _is_adornment(under) and not following[:1].isspace():
        return _name(line)
    if bold and line.startswith(("**", "__")) and line.endswith(("**", "__")) and len(line) > 4:
        return _name(line[2:-2].rstrip(":"))
    return None


def _name(text: str) -> str:
    """A heading's name as compared: lower case, no numbering ("2. Context"), no trailing colon."""
    text = text.strip().rstrip(":").strip().lower()
    return text.lstrip("0123456789.) ").strip() or text


def _is_adornment(line: str) -> bool:
    return len(line) >= 2 and line[0] in _ADORNMENT and line.count(line[0]) == len(line)


def _field(line: str) -> tuple[str, str] | None:
    """(key, value) of a field line: ``Status: Accepted``, ``:Status: Accepted``, ``* **Status**:
    Accepted``, ``status: accepted`` (front matter); None for other lines."""
    bare = line.lstrip(_MARKS).lstrip(":")
    lower = bare[:16].lower()
    for key in ("status", "date", "decision date", "last updated"):
        if lower.startswith(key):
            rest = bare[len(key) :].lstrip("*_` \t")
            if rest[:1] == ":" and not rest.startswith("::"):
                return key, rest[1:].strip().strip("*_").strip()
    return None


def _status_word(line: str) -> str:
    """The status's first word, lower-cased ("Superseded by ADR-7" -> "superseded"); "" for a
    template's list of choices ("Proposed | Accepted | Deprecated")."""
    words: list[str] = re.findall(r"[a-z]+", line.lower()[:200])
    if not words:
        return ""
    known = {word for word in words if word in _STATUSES}
    if len(known) >= 2 and words[0] in _STATUSES and any(sep in line for sep in "|/,") and words[1] != "by":
        return ""
    return words[0]


def _first_date(text: str) -> str | None:
    """The first real ISO date (``YYYY-MM-DD``) in the first lines of ``text``."""
    for line in text[:20_000].split("\n", TOP_LINES)[:TOP_LINES]:
        for match in _ISO_DATE.finditer(line):
            try:
                return dt.date(*(int(part) for part in match.groups())).isoformat()
            except ValueError:
                continue
    return None
