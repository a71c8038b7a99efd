"""Find the documents under a folder and turn each into a title and plain text.

Markdown and text are read as they are (Markdown's YAML front matter split off into ``meta``);
HTML goes through trafilatura (main content, as Markdown), with lxml as the fallback for pages
trafilatura finds nothing in; other extensions asked for with ``--ext`` are source code, read as
lines. In a git work tree, files that ``.gitignore`` excludes are left out.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.indexer import frontmatter

MARKDOWN = {".md", ".markdown", ".mdown"}
TEXT = {".txt", ".text"}
HTML = {".html", ".htm", ".xhtml"}
EXTENSIONS = MARKDOWN | TEXT | HTML

# CommonMark: closing #s count only after white space ("# Learning C#" keeps its "#").
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.M)
_SETEXT = re.compile(r"^(\S.*)\n(=+|-+)\s*$", re.M)
# Permalink marks that documentation generators append to headings (Sphinx "¶", MkDocs "#", "🔗").
_PERMALINK = re.compile(r"[\s¶§#🔗\u200b]+$")
# In Markdown a trailing "#" is part of the title unless white space precedes it.
_PERMALINK_MD = re.compile(r"(?:[\s¶§🔗\u200b]|(?<=\s)#)+$")


MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped (a log, a dump): --max-file-size to change


@dataclass(frozen=True)
class Document:
    path: str  # relative, forward slashes
    title: str
    text: str
    digest: str = ""  # sha256 of the file's bytes (first 16 hex digits)
    kind: str = "text"  # "markdown", "text", "html" or "code"
    meta: dict[str, Any] = field(default_factory=dict)  # front matter, as table columns


class SourceError(Exception):
    """A file that cannot be read or parsed; the message says why."""


def walk(root: Path, extra: frozenset[str] = frozenset()) -> list[str]:
    """Relative paths (forward slashes, sorted) of the documents under ``root``.

    Names starting with a dot are skipped, folders and files alike; ``extra`` adds extensions
    (".py", ...). In a git work tree, what ``.gitignore`` excludes is left out too.
    """
    wanted = EXTENSIONS | extra
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            if name.startswith(".") or Path(name).suffix.lower() not in wanted:
                continue
            found.append(Path(folder, name).relative_to(root).as_posix())
    ignored = git_ignored(root, found)
    return sorted(p for p in found if p not in ignored)


def git_ignored(root: Path, paths: list[str]) -> set[str]:
    """The paths that git would ignore, when ``root`` is in a git work tree (else none)."""
    if not paths or shutil.which("git") is None:
        return set()
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=10)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return set()
        answer = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "-z", "--stdin"],
                                input="\0".join(paths) + "\0", capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    return {p for p in answer.stdout.split("\0") if p}


def clean_title(title: str, markdown: bool = False) -> str:
    title = " ".join(title.split())
    return (_PERMALINK_MD if markdown else _PERMALINK).sub("", title).strip()


def markdown_title(text: str) -> str | None:
    """The first Markdown heading (ATX `#` or setext underline), outside front matter."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    candidates = [m for m in (_HEADING.search(body), _SETEXT.search(body)) if m]
    if not candidates:
        return None
    first = min(candidates, key=lambda m: m.start())
    return clean_title(first.group(1), markdown=True) or None


def _decode(raw: bytes, rel: str) -> str:
    if b"\x00" in raw[:8192]:
        raise SourceError("looks like a binary file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page."""
    import trafilatura
    from lxml import html as lxml_html

    title = None
    tree = None
    try:
        tree = lxml_html.fromstring(html)
    except Exception:  # lxml rejects some broken pages outright; trafilatura may still cope
        tree = None
    if tree is not None:
        for xpath in ("//title", "//h1"):
            nodes = tree.xpath(xpath)
            if nodes:
                candidate = clean_title(nodes[0].text_content())
                if candidate:
                    title = candidate
                    break
    text = trafilatura.extract(html, output_format="markdown", include_tables=True, favor_recall=True) or ""
    # Permalink marks stay on the heading lines of the extracted Markdown ("# Glossary¶"): drop them.
    text = "\n".join(clean_title(line, markdown=True) if line.lstrip().startswith("#") else line
                     for line in text.split("\n"))
    if not text.strip() and tree is not None:
        for bad in tree.xpath("//script|//style|//noscript|//template"):
            bad.drop_tree()
        text = "\n\n".join(" ".join(p.split()) for p in tree.text_content().split("\n\n") if p.strip())
    return title, text


def read_document(root: Path, rel: str, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """Read one file into a ``Document``. Raises ``SourceError`` with a reason."""
    path = root / rel
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block the run
            raise SourceError("not a regular file")
        if info.st_size > max_bytes:
            raise SourceError(f"larger than {max_bytes:,} bytes (--max-file-size to change)")
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    text = _decode(raw, rel)
    digest = hashlib.sha256(raw).hexdigest()[:16]
    suffix = path.suffix.lower()
    meta: dict[str, Any] = {}
    title: str | None
    if suffix in HTML:
        kind = "html"
        try:
            title, text = html_to_text(text)
        except Exception as exc:  # a page that breaks the parser is skipped, the run goes on
            raise SourceError(f"cannot parse HTML: {type(exc).__name__}: {exc}") from None
    elif suffix in MARKDOWN or suffix in TEXT:  # text files may use Markdown headings too
        kind = "markdown" if suffix in MARKDOWN else "text"
        if kind == "markdown":
            try:
                meta, text = frontmatter.split(text)
            except frontmatter.FrontMatterError as exc:
                raise SourceError(f"{exc}; fix it or remove the block") from None
        given = next((v for k, v in meta.items() if str(k).strip().lower() == "title"), None)
        title = clean_title(str(given)) if isinstance(given, (str, int, float)) and str(given).strip() else None
        title = title or markdown_title(text)
    else:
        kind, title = "code", rel
    if not text.strip():
        raise SourceError("no text found")
    return Document(rel, title or path.name, text, digest, kind, frontmatter.columns(meta))
