"""Find the documents under a folder and turn each into a title and plain text.

Markdown and text are read as they are (Markdown's YAML front matter split off into ``meta``, a
site generator's markup dropped: ``site_markdown``);
HTML pages with a named content container are walked into Markdown (``html_markdown``), others
go through trafilatura (main content, as Markdown), with lxml as the fallback for pages
trafilatura finds nothing in; other extensions asked for with ``--ext`` are source code, read as
lines. In a git work tree, files that ``.gitignore`` excludes are left out, and so are those that
``--exclude`` patterns or ``.lancelotignore`` name (``ignore``); a generated documentation site
keeps its rendered pages only (``sites``). Nothing outside the
folder is read: links to folders are not followed, links to files only when they point inside.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lancelot_cli.errors import IndexingError
from lancelot_cli.indexer import frontmatter, site_markdown
from lancelot_cli.indexer.gitignore import git_ignored
from lancelot_cli.indexer.titles import clean_title, markdown_title

MARKDOWN = {".md", ".markdown", ".mdown", ".mdx"}  # .mdx: Docusaurus pages (their JSX is dropped)
TEXT = {".txt", ".text"}
HTML = {".html", ".htm", ".xhtml"}
EXTENSIONS = MARKDOWN | TEXT | HTML


MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped (a log, a dump): --max-file-size to change


@dataclass(frozen=True)
class Document:
    path: str  # relative, forward slashes
    title: str
    text: str
    digest: str = ""  # sha256 of the file's bytes (first 16 hex digits)
    kind: str = "text"  # "markdown", "text", "html" or "code"
    meta: dict[str, Any] = field(default_factory=dict)  # front matter, as table columns
    notes: tuple[str, ...] = ()  # what the reader should know: e.g. a page indexed only in part


class SourceError(Exception):
    """A file that cannot be read or parsed; the message says why."""


class NothingToIndex(IndexingError):
    """A first run found no document it could index (the message says what it found instead);
    `lancelot index --watch` reports it and keeps watching."""


@dataclass
class Scan:
    """What a walk of the folder found: the documents, what it left out and why."""

    paths: list[str] = field(default_factory=list)  # relative, forward slashes, sorted
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relative path, reason)
    other: Counter[str] = field(default_factory=Counter)  # suffix -> files of a kind not indexed
    ignored: int = 0  # documents that .gitignore excludes
    excluded: int = 0  # documents that --exclude or .lancelotignore leave out
    site_counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (site kind, reason) -> files left out
    stats: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)  # path -> (size, mtime_ns)

    def site_note(self) -> str | None:
        """"Sphinx site found: left out ..." when a documentation site was recognised."""
        from lancelot_cli.indexer.sites import describe

        return describe(self.site_counts) or None


OUTSIDE_LINK = "a link to a file outside the folder: not indexed (copy the file in to index it)"
FOLDER_LINK = "a link to a folder: links to folders are not followed"


def inside(root: Path, path: Path) -> bool:
    """True when ``path``, links resolved (chains, ``../``), is inside ``root`` (links resolved too)."""
    return os.path.realpath(path).startswith(os.path.join(os.path.realpath(root), ""))


def scan(root: Path, extra: frozenset[str] = frozenset(), exclude: tuple[str, ...] = (),
         site_detection: bool = True) -> Scan:
    """Walk ``root``: the documents to index, and what was left out and why.

    Names starting with a dot are skipped, folders and files alike; ``extra`` adds extensions
    (".py", ...). In a git work tree, what ``.gitignore`` excludes is left out too. Links to
    folders are not followed; a link to a file is indexed only when its target is inside
    ``root`` (else anything readable, /etc/passwd or a key, would be served). Folders that
    cannot be read are listed, not silently passed over. ``exclude`` patterns (and the folder's
    ``.lancelotignore``) leave out what they match; with ``site_detection``, a documentation
    site's source copies and generated pages are left out (``sites``). ``stats`` holds each
    document's (size, mtime_ns), taken during the walk.
    """
    from lancelot_cli.indexer import ignore, sites

    wanted = EXTENSIONS | extra
    result = Scan()
    found: list[str] = []
    excluder = ignore.Excluder(ignore.patterns_for(root, exclude))
    found_sites: list[sites.Site] = []
    # os.scandir, not os.walk + pathlib: a DirEntry knows whether it is a folder or a link without
    # a system call, and relative paths are plain strings (pathlib was most of a no-change run).
    # Same order as os.walk top-down with sorted folders, so a site's root is seen before its files.
    pending = [(os.fspath(root), "", False)]  # (folder, relative, below a folder of pages with their sources)
    while pending:
        folder, here, below_pairs = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            result.skipped.append((f"{here or '.'}/", f"cannot read folder: {exc.strerror or exc}"))
            continue
        dirs, links, files = [], set(), []
        for entry in entries:
            if _is_dir(entry):
                dirs.append(entry.name)
                if _is_link(entry):
                    links.add(entry.name)
                    if not entry.name.startswith("."):
                        result.skipped.append((f"{here}/{entry.name}/" if here else f"{entry.name}/", FOLDER_LINK))
            else:
                files.append(entry)
        dirs = sorted(d for d in dirs if not d.startswith("."))
        for bad in [d for d in dirs if not _utf8(d)]:
            result.skipped.append((printable(f"{here}/{bad}/" if here else f"{bad}/"), BAD_NAME))
            dirs.remove(bad)
        if excluder:  # an excluded folder is not entered at all
            dirs = [d for d in dirs if not excluder.excluded(f"{here}/{d}" if here else d, folder=True)]
        site_here = None
        beside: dict[str, str] = {}
        if site_detection:
            names = [entry.name for entry in files]
            site = sites.detect(folder, here, dirs, names)
            if site:
                found_sites.append(site)
            site_here = sites.site_of(found_sites, here) if found_sites else None  # for all its files
            beside = sites.sources_beside_pages(names, below_pairs)
        for entry in files:
            name = entry.name
            if name.startswith("."):
                continue
            if not _utf8(name):  # a name from an old archive or a Samba share: a table holds UTF-8 only
                result.skipped.append((printable(f"{here}/{name}" if here else name), BAD_NAME))
                continue
            dot = name.rfind(".")  # Path.suffix: "notes." and ".rc" have none
            suffix = name[dot:].lower() if 0 < dot < len(name) - 1 else ""
            if suffix not in wanted:
                result.other[suffix or "(no extension)"] += 1
                continue
            rel = f"{here}/{name}" if here else name
            if _is_link(entry) and not inside(root, Path(entry.path)):
                result.skipped.append((rel, OUTSIDE_LINK))
                continue
            if excluder and excluder.excluded(rel):
                result.excluded += 1
                continue
            if site_here or beside:
                kind, reason = (site_here.kind, site_here.leave_out(rel)) if site_here else ("", None)
                if reason is None and name in beside:
                    kind, reason = sites.BESIDE, beside[name]
                if reason:
                    key = (kind, reason)
                    result.site_counts[key] = result.site_counts.get(key, 0) + 1
                    continue
            found.append(rel)
            try:
                info = entry.stat()  # follows a link (checked inside above), as reading it will
                result.stats[rel] = (info.st_size, info.st_mtime_ns)
            except OSError:  # a broken link or a file gone meanwhile: read_document will say why
                result.stats[rel] = (None, None)
        pairs = below_pairs or sites.SOURCE_COPY in beside.values()
        pending.extend((os.path.join(folder, d), f"{here}/{d}" if here else d, pairs)
                       for d in reversed(dirs) if d not in links)
    ignored = git_ignored(root, found)
    result.paths = sorted(p for p in found if p not in ignored)
    result.ignored = len(found) - len(result.paths)
    if ignored:
        result.stats = {p: result.stats[p] for p in result.paths}
    result.skipped.sort()
    return result


BAD_NAME = "its name is not valid UTF-8 (shown with \\x escapes); rename it to index it"


def _utf8(name: str) -> bool:
    """Whether a name the file system gave (undecodable bytes become surrogates) is valid UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(name: str) -> str:
    """A file name with its undecodable bytes as ``\\xff`` escapes (what the skipped list shows)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a folder counts, as in os.walk
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def walk(root: Path, extra: frozenset[str] = frozenset()) -> list[str]:
    """Relative paths (forward slashes, sorted) of the documents under ``root`` (see ``scan``)."""
    return scan(root, extra).paths


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))  # UTF-32 LE starts with UTF-16 LE's mark: tested first


def _decode(raw: bytes, rel: str) -> str:
    for bom, codec in _BOMS:  # UTF-16/32 text (Windows editors) is text, NUL bytes and all
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                break
    if b"\x00" in raw[:8192]:
        raise SourceError("looks like a binary file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


# libxml2 stops building the tree at this depth (its default limit) and drops what lies deeper.
HTML_MAX_DEPTH = 256
TOO_DEEP = f"the page nests elements more than {HTML_MAX_DEPTH} deep and the HTML parser drops the text below that"


def html_to_text(html: str) -> tuple[str | None, str]:
    """(title, main text) of an HTML page."""
    title, text, _ = _html_to_text(html)
    return title, text


def _html_to_text(html: str) -> tuple[str | None, str, bool]:
    """(title, main text, True when the page was nested too deeply to be read whole)."""
    from lxml import html as lxml_html

    from lancelot_cli.indexer.html import clean_markdown, heading_texts, parse, prepare, release_memory
    from lancelot_cli.indexer.html_markdown import to_markdown

    html, tree, truncated = parse(html)
    title = None
    headings = None
    if tree is not None:
        prepare(tree)  # permalink anchors out, code blocks marked as code
        headings = heading_texts(tree)
        for xpath in ("//title", "//h1"):
            nodes = tree.xpath(xpath)
            if nodes:
                candidate = clean_title(nodes[0].text_content())
                if candidate:
                    title = candidate
                    break
    # A page whose content sits in a known container is walked (fast, keeps every heading); others
    # go to trafilatura, handed the parsed tree as it is (one parse per page, not two).
    text = to_markdown(tree) if tree is not None else None
    if not text or not text.strip():
        import trafilatura

        text = trafilatura.extract(tree if tree is not None else html, output_format="markdown",
                                   include_tables=True, favor_recall=True) or ""
    text = clean_markdown(text, headings)
    release_memory()
    # Permalink marks left on the heading lines of the extracted Markdown ("# Glossary#"): drop them.
    text = "\n".join(clean_title(line, markdown=True) if line.startswith("#") else line
                     for line in text.split("\n"))
    if not text.strip() and tree is not None:
        tree = lxml_html.fromstring(html)  # trafilatura may have pruned the tree it was given
        for bad in tree.xpath("//script|//style|//noscript|//template"):
            bad.drop_tree()
        text = "\n\n".join(" ".join(p.split()) for p in tree.text_content().split("\n\n") if p.strip())
    return title, text, truncated


def read_document(root: Path, rel: str, max_bytes: int = MAX_FILE_BYTES) -> Document:
    """Read one file into a ``Document``. Raises ``SourceError`` with a reason."""
    path = root / rel
    real = Path(os.path.realpath(path))  # read the target checked, not a link swapped in meanwhile
    if not inside(root, real):  # checked again here: the link may have changed since the walk
        raise SourceError(OUTSIDE_LINK)
    try:
        info = real.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block the run
            raise SourceError("not a regular file")
        if info.st_size > max_bytes:
            raise SourceError(f"larger than {max_bytes:,} bytes (--max-file-size to change)")
        raw = real.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    text = _decode(raw, rel)
    digest = hashlib.sha256(raw).hexdigest()[:16]
    suffix = path.suffix.lower()
    meta: dict[str, Any] = {}
    notes: list[str] = []
    title: str | None
    if suffix in HTML:
        kind = "html"
        try:
            title, text, truncated = _html_to_text(text)
        except Exception as exc:  # a page that breaks the parser is skipped, the run goes on
            raise SourceError(f"cannot parse HTML: {type(exc).__name__}: {exc}") from None
        if truncated:  # never index a page as its title alone without saying so
            if text.strip() in ("", title):
                raise SourceError(f"no text found: {TOO_DEEP}; flatten the page or convert it to Markdown")
            notes.append(f"indexed in part: {TOO_DEEP}")
    elif suffix in MARKDOWN or suffix in TEXT:  # text files may use Markdown headings too
        kind = "markdown" if suffix in MARKDOWN else "text"
        if kind == "markdown":
            try:
                meta, text = frontmatter.split(text)
            except frontmatter.FrontMatterError as exc:
                raise SourceError(f"{exc}; fix it or remove the block") from None
            text = site_markdown.clean(text)
        given = next((v for k, v in meta.items() if str(k).strip().lower() == "title"), None)
        title = clean_title(str(given)) if isinstance(given, (str, int, float)) and str(given).strip() else None
        title = title or markdown_title(text)
    else:
        kind, title = "code", rel
    if not text.strip():
        raise SourceError("no text found")
    return Document(rel, title or path.name, text, digest, kind, frontmatter.columns(meta), tuple(notes))


def nothing_to_index(root: Path, found: Scan) -> str:
    """Why a first run found no document to index, and what to do: one line."""
    kinds = " ".join(sorted(EXTENSIONS))
    total = sum(found.other.values())
    folders = [rel for rel, reason in found.skipped if reason.startswith("cannot read folder")]
    unread = f"; could not read {len(folders)} folder(s): {', '.join(folders[:5])}" if folders else ""
    links = sum(1 for _, reason in found.skipped if reason in (OUTSIDE_LINK, FOLDER_LINK))
    linked = f"; {links} link(s) not followed" if links else ""
    if found.ignored:
        linked += f"; {found.ignored} document(s) excluded by .gitignore"
    if found.excluded:
        linked += f"; {found.excluded} document(s) left out by --exclude or .lancelotignore"
    if not total and found.ignored and not found.excluded:
        return f"nothing to index in {root}: every document is excluded by .gitignore ({found.ignored}){unread}"
    if not total and (found.ignored or found.excluded):
        return (f"nothing to index in {root}: every document is left out{linked}{unread}; "
                f"check the --exclude patterns (saved with the table) and .lancelotignore")
    if not total:
        return (f"nothing to index in {root}: it holds no files (names starting with a dot are skipped){unread}"
                f"{linked}; give the folder of your documents")
    counts = ", ".join(f"{n} {suffix}" for suffix, n in found.other.most_common(6))
    more = ", ..." if len(found.other) > 6 else ""
    return (f"nothing to index in {root}: found {total} file(s), none of a supported kind ({kinds}): "
            f"{counts}{more}{unread}{linked}; convert them, or use --ext to add source-code extensions")


def nothing_readable(root: Path, skipped: list[tuple[str, str]]) -> str:
    """Why a first run whose documents were all skipped wrote nothing: one line."""
    shown = "; ".join(f"{rel}: {reason}" for rel, reason in skipped[:3]) + ("; ..." if len(skipped) > 3 else "")
    return f"nothing indexed from {root}: none of its {len(skipped)} document(s) could be read ({shown})"
