"""Find the documents under a folder: which files, and what was left out and why.

Names starting with a dot are skipped; in a git work tree, files that ``.gitignore`` excludes are
left out, and so are those that ``--exclude`` patterns or ``.lancelotignore`` name (``ignore``); a
generated documentation site keeps its rendered pages only (``sites``). Links to folders are not
followed, links to files only when they point inside the folder. Reading a document is
indexer/sources.py.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lancelot_cli.indexer import ignore, sites
from lancelot_cli.indexer.code import CODE_SUFFIXES
from lancelot_cli.indexer.formats import PACKAGED
from lancelot_cli.indexer.gitignore import git_ignored, in_git_work_tree

MARKDOWN = {".md", ".markdown", ".mdown", ".mdx"}  # .mdx: Docusaurus pages (their JSX is dropped)
TEXT = {".txt", ".text"}
HTML = {".html", ".htm", ".xhtml"}
RST = {".rst", ".rest"}  # reStructuredText (Sphinx): read as documents, its markup cleaned (markup.py)
ASCIIDOC = {".adoc", ".asciidoc"}  # (not .asc: also PGP's armour)
EXTENSIONS = MARKDOWN | TEXT | HTML | RST | ASCIIDOC | PACKAGED  # PACKAGED: PDF, Word, PowerPoint, EPUB (formats.py)

# Source code is indexed with no flag when the folder is a project (issue 47): in a git work tree,
# or with one of these files at its top. A folder of documents (a manual, notes, an HTML build) gets
# its documents only, and the summary counts the source files it left out (`--code` brings them in).
PROJECT_FILES = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "package.json",
        "go.mod",
        "Cargo.toml",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "Gemfile",
        "CMakeLists.txt",
        "composer.json",
    }
)
# Folders of other people's code or of build output: their source files are not the project's.
VENDORED = frozenset(
    {
        "node_modules",
        "bower_components",
        "vendor",
        "third_party",
        "third-party",
        "external",
        "site-packages",
        "dist",
        "build",
        "target",
        "out",
        "__pycache__",
        "venv",
        "env",
        "coverage",
        "htmlcov",
    }
)
# File names of generated or minified code.
GENERATED_SUFFIXES = (
    ".min.js",
    "-min.js",
    ".bundle.js",
    ".min.mjs",
    "_pb2.py",
    "_pb2_grpc.py",
    "_pb2.pyi",
    ".pb.go",
    ".generated.ts",
    ".generated.js",
    ".d.ts",
)
LEFT_OUT_VENDORED = "vendored or build output"
LEFT_OUT_GENERATED = "generated or minified"
LEFT_OUT_SITE = "a documentation site's scripts"


def is_project(root: Path) -> bool:
    """Whether ``root`` is a project's folder (source code indexed by default): in a git work tree,
    or with a project file (``pyproject.toml``, ``package.json``, ``go.mod``...) at its top."""
    return any(os.path.isfile(os.path.join(root, name)) for name in PROJECT_FILES) or in_git_work_tree(root)


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
    code: bool = False  # source code indexed (a project, or --code)
    code_left_out: Counter[str] = field(default_factory=Counter)  # why -> source files left out
    code_files: int = 0  # source files found (indexed when ``code``)

    def code_note(self) -> str | None:
        """What the run did with source code, in one line (None when the folder has none)."""
        if not self.code:
            found = sum(n for suffix, n in self.other.items() if suffix in CODE_SUFFIXES)
            if not found:
                return None
            kinds = ", ".join(f"{n} {suffix}" for suffix, n in self.other.most_common() if suffix in CODE_SUFFIXES)
            return (
                f"Source code left out: {found} file(s) ({kinds}): the folder is not a project (no git "
                f"work tree, no pyproject.toml, package.json...); add --code to index them"
            )
        left = ", ".join(f"{n} {why}" for why, n in sorted(self.code_left_out.items()))
        if not self.code_files and not left:
            return None
        return f"Source code: {self.code_files} file(s) read as definitions" + (f"; left out: {left}" if left else "")

    def site_note(self) -> str | None:
        """ "Sphinx site found: left out ..." when a documentation site was recognised."""
        return sites.describe(self.site_counts) or None


OUTSIDE_LINK = "a link to a file outside the folder: not indexed (copy the file in to index it)"
FOLDER_LINK = "a link to a folder: links to folders are not followed"


def inside(root: Path, path: Path) -> bool:
    """True when ``path``, links resolved (chains, ``../``), is inside ``root`` (links resolved too)."""
    return within(os.path.realpath(root), os.path.realpath(path))


def within(real_root: str, real_path: str) -> bool:
    """``inside`` for paths whose links are resolved already (``os.path.realpath``)."""
    return real_path.startswith(os.path.join(real_root, ""))


def scan(
    root: Path,
    extra: frozenset[str] = frozenset(),
    exclude: tuple[str, ...] = (),
    site_detection: bool = True,
    code: bool | None = None,
) -> Scan:
    """Walk ``root``: the documents to index, and what was left out and why.

    Names starting with a dot are skipped, folders and files alike; ``extra`` adds extensions
    (".py", ...). In a git work tree, what ``.gitignore`` excludes is left out too. Links to
    folders are not followed; a link to a file is indexed only when its target is inside
    ``root`` (else anything readable, /etc/passwd or a key, would be served). Folders that
    cannot be read are listed, not silently passed over. ``exclude`` patterns (and the folder's
    ``.lancelotignore``) leave out what they match; with ``site_detection``, a documentation
    site's source copies and generated pages are left out (``sites``). ``stats`` holds each
    document's (size, mtime_ns), taken during the walk. ``code``: source files in the common
    languages too (``code.CODE_SUFFIXES``), vendored, generated and minified ones left out; None:
    when the folder ``is_project``. In a project no file is taken for a rendered page's source copy
    (an email template beside its HTML is the project's own).
    """
    code = is_project(root) if code is None else code
    # os.scandir, not os.walk + pathlib: a DirEntry knows whether it is a folder or a link without
    # a system call, and relative paths are plain strings (pathlib was most of a no-change run).
    # Same order as os.walk top-down with sorted folders, so a site's root is seen before its files.
    wanted = EXTENSIONS | extra | (CODE_SUFFIXES if code else frozenset())
    walk = _Walk(root, wanted, ignore.Excluder(ignore.patterns_for(root, exclude)), site_detection)
    walk.result.code, walk.extra = code, extra
    pending = [(os.fspath(root), "", False)]  # (folder, relative, below a folder of pages with their sources)
    while pending:
        pending.extend(walk.visit(*pending.pop()))
    return walk.finish()


class _Walk:
    """What one ``scan`` has found so far, folder by folder."""

    def __init__(self, root: Path, wanted: set[str], excluder: ignore.Excluder, site_detection: bool) -> None:
        self.root, self.wanted, self.excluder, self.site_detection = root, wanted, excluder, site_detection
        self.result = Scan()
        self.found: list[str] = []  # documents, before .gitignore has its say
        self.sites: list[sites.Site] = []
        self.extra: frozenset[str] = frozenset()  # --ext: asked for by name, never left out as code is

    def visit(self, folder: str, here: str, below_pairs: bool) -> list[tuple[str, str, bool]]:
        """Take in one folder's documents; its subfolders to walk, last first (they are popped)."""
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            self.result.skipped.append((f"{here or '.'}/", f"cannot read folder: {exc.strerror or exc}"))
            return []
        dirs, links, files = self._sort_out(entries, here)
        dirs = self._enterable(here, dirs)
        site_here, beside = self._site(folder, here, dirs, files, below_pairs)
        for entry in files:
            self._file(entry, here, site_here, beside)
        pairs = below_pairs or sites.SOURCE_COPY in beside.values()
        return [
            (os.path.join(folder, d), f"{here}/{d}" if here else d, pairs) for d in reversed(dirs) if d not in links
        ]

    def _sort_out(
        self, entries: list[os.DirEntry[str]], here: str
    ) -> tuple[list[str], set[str], list[os.DirEntry[str]]]:
        """(folder names, the ones that are links, files); a link to a folder is listed as skipped."""
        dirs, links, files = [], set(), []
        for entry in entries:
            if _is_dir(entry):
                dirs.append(entry.name)
                if _is_link(entry):
                    links.add(entry.name)
                    if not entry.name.startswith("."):
                        self.result.skipped.append((f"{here}/{entry.name}/" if here else f"{entry.name}/", FOLDER_LINK))
            else:
                files.append(entry)
        return dirs, links, files

    def _enterable(self, here: str, dirs: list[str]) -> list[str]:
        """The folders to walk, sorted: no dot-named, no undecodable (listed as skipped) or excluded one."""
        dirs = sorted(d for d in dirs if not d.startswith("."))
        for bad in [d for d in dirs if not _utf8(d)]:
            self.result.skipped.append((printable(f"{here}/{bad}/" if here else f"{bad}/"), BAD_NAME))
            dirs.remove(bad)
        if self.excluder:  # an excluded folder is not entered at all
            dirs = [d for d in dirs if not self.excluder.excluded(f"{here}/{d}" if here else d, folder=True)]
        return dirs

    def _site(
        self, folder: str, here: str, dirs: list[str], files: list[os.DirEntry[str]], below_pairs: bool
    ) -> tuple[sites.Site | None, dict[str, str]]:
        """The documentation site this folder is in (if any: for all its files), and the files that
        are source copies beside their pages (name -> reason)."""
        if not self.site_detection:
            return None, {}
        names = [entry.name for entry in files]
        site = sites.detect(folder, here, dirs, names)
        if site:
            self.sites.append(site)
        site_here = sites.site_of(self.sites, here) if self.sites else None
        if self.result.code and not site_here:  # a project's .txt beside an .html is its own (issue 47)
            return None, {}
        return site_here, sites.sources_beside_pages(names, below_pairs)

    def _file(self, entry: os.DirEntry[str], here: str, site_here: sites.Site | None, beside: dict[str, str]) -> None:
        name = entry.name
        if name.startswith("."):
            return
        if not _utf8(name):  # a name from an old archive or a Samba share: a table holds UTF-8 only
            self.result.skipped.append((printable(f"{here}/{name}" if here else name), BAD_NAME))
            return
        suffix = suffix_of(name)
        if suffix not in self.wanted:
            self.result.other[suffix or "(no extension)"] += 1
            return
        rel = f"{here}/{name}" if here else name
        if suffix in CODE_SUFFIXES and suffix not in self.extra and suffix not in EXTENSIONS:
            why = self._code_left_out(rel, name, site_here)
            if why:
                self.result.code_left_out[why] += 1
                return
        if _is_link(entry) and not inside(self.root, Path(entry.path)):
            self.result.skipped.append((rel, OUTSIDE_LINK))
            return
        if self.excluder and self.excluder.excluded(rel):
            self.result.excluded += 1
            return
        if (site_here or beside) and self._left_out_of_site(rel, name, site_here, beside):
            return
        self.found.append(rel)
        try:
            info = entry.stat()  # follows a link (checked inside above), as reading it will
            self.result.stats[rel] = (info.st_size, info.st_mtime_ns)
        except OSError:  # a broken link or a file gone meanwhile: read_document will say why
            self.result.stats[rel] = (None, None)

    def _code_left_out(self, rel: str, name: str, site_here: sites.Site | None) -> str | None:
        """Why a source file found by default is not the project's own code, or None."""
        if site_here is not None:
            return LEFT_OUT_SITE
        if any(part in VENDORED for part in rel.split("/")[:-1]):
            return LEFT_OUT_VENDORED
        if name.lower().endswith(GENERATED_SUFFIXES):
            return LEFT_OUT_GENERATED
        return None

    def _left_out_of_site(self, rel: str, name: str, site_here: sites.Site | None, beside: dict[str, str]) -> bool:
        """Whether a site leaves the file out (a source copy, a search or index page): counted, by kind and reason."""
        kind, reason = (site_here.kind, site_here.leave_out(rel)) if site_here else ("", None)
        if reason is None and name in beside:
            kind, reason = sites.BESIDE, beside[name]
        if reason:
            key = (kind, reason)
            self.result.site_counts[key] = self.result.site_counts.get(key, 0) + 1
        return bool(reason)

    def finish(self) -> Scan:
        """The scan, with what ``.gitignore`` excludes left out."""
        result = self.result
        ignored = git_ignored(self.root, self.found)
        result.paths = sorted(p for p in self.found if p not in ignored)
        result.ignored = len(self.found) - len(result.paths)
        result.code_files = sum(1 for p in result.paths if suffix_of(p) in CODE_SUFFIXES - EXTENSIONS - self.extra)
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


def suffix_of(rel: str) -> str:
    """A file's extension, lower case, as the walk reads it (``Path.suffix``'s rule: "notes." and
    ".rc" have none)."""
    name = rel.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


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
        return (
            f"nothing to index in {root}: every document is left out{linked}{unread}; "
            f"check the --exclude patterns (saved with the table) and .lancelotignore"
        )
    if not total:
        return (
            f"nothing to index in {root}: it holds no files (names starting with a dot are skipped){unread}"
            f"{linked}; give the folder of your documents"
        )
    counts = ", ".join(f"{n} {suffix}" for suffix, n in found.other.most_common(6))
    more = ", ..." if len(found.other) > 6 else ""
    return (
        f"nothing to index in {root}: found {total} file(s), none of a supported kind ({kinds}): "
        f"{counts}{more}{unread}{linked}; convert them, or use --ext to add source-code extensions"
    )
