"""Documents crafted against the indexer's text cleaning (issue 37 item 3): one per pass that was
quadratic, cubic or exponential in a crafted input, each about ``size`` bytes. Before the passes
were made linear, one 4 KB heading line took 52 s and 64 KB of "<!--" 4.3 s (128 KB: 17.8 s); at
256 KB most of these did not finish in minutes.

Used by tests/test_linear_passes.py (a whole `lancelot index` over them) and by the "cleaning"
family of tests/benchmarks/attacks.py.
"""

from __future__ import annotations

from pathlib import Path

SIZE = 256 * 1024
NESTED_TABLES = 30  # 2^28 readings of the innermost row before (libxml2 keeps 256 levels)


def _fill(unit: str, head: str, tail: str, size: int) -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def pages(size: int = SIZE) -> dict[str, str]:
    """{file name: text}: Markdown for site_markdown, mdtext and titles; HTML (with a <main>, so the
    page is walked, not handed to trafilatura) for html and html_markdown."""
    half = size // 2
    return {
        "heading-attributes.md": "# " + " " * size + "<",  # the cubic one
        "comments.md": _fill("<!--", "", "", size),
        "scripts.md": _fill("<script>", "", "", size),
        "style-tags.md": _fill("<style", "", "", size),
        "backticks.md": _fill("`", "a", "x", size),
        "heading-blanks.md": _fill(" ", "# a", "b", size),
        "include.md": _fill("a", "{* ", "", size),
        "block-title.md": _fill(" ", "/// note | x", "y", size),
        "colons-title.md": _fill(" ", ":::tip x", "y", size),
        "badges.md": _fill("[![", "", "", size),
        "permalinks.md": _fill(" #", "# a", "b", size),
        "roles.md": _fill(":a", "# ", "", size),
        "emphasis.md": _fill("(*a", "# ", "", size),
        "table-rule.html": _fill("-", "<main><p>| ", "x</p></main>", size),
        "code-span.html": "<main><p>a" + "`" * half + "a" * half + "`</p></main>",
        "heading-marks.html": _fill(" #", "<main><h2>a", "b</h2></main>", size),
        "title-markup.html": _fill("(*a", "<main><h2>", "</h2></main>", size),
        "pre-backticks.html": "<main><pre>" + "a" * half + "`" * half + "</pre></main>",
        "articles.html": _fill("<article>x</article>", "<html><body>", "</body></html>", size),
        "nested-tables.html": "<main>" + "<table><tr><td>" * NESTED_TABLES + "x</main>",
        "xml-declaration.html": _fill(" ", "<?xml", "><main><p>x</p></main>", size),
    }


def write(folder: Path, size: int = SIZE) -> list[str]:
    """Write ``pages(size)`` into ``folder`` (created); their names."""
    folder.mkdir(parents=True, exist_ok=True)
    made = pages(size)
    for name, text in made.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(made)
