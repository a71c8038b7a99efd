"""The bundled sample as the docs show it: the `EXAMPLES` (commands run on examples/sample-docs) and
the `REPLIES` of a real `lancelot serve` to tool calls on it, for `docgen`'s ``example``, ``tools``,
``tool`` and ``reply`` regions.

Everything runs in a new temporary folder, shown as /home/you: the sample is copied there and
indexed with ``--no-embed`` by the first example; then a `lancelot serve` on stdio (sent the
handshake, ``tools/list`` and every reply's call at once, as raw JSON-RPC) and the ``serve --http``
example start beside the other examples, which run through the real `app` with Typer's CliRunner
in one `docrun` process started in that folder (``cwd=``: nothing here changes the working folder):
as on a 100-column terminal with colour removed, or piped. Every variable
Lancelot reads is cleared first; no key, no keychain, no local model, no warm process. Durations,
timestamps, the folder's path and the HTTP port are normalised, and a table whose cells got shorter
is laid out again, so that every run on every machine prints the same text. About ten seconds.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lancelot_cli.background.client import initialize_request

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lancelot_cli"
WIDTH = 100
HOME = "/home/you"  # what the temporary folder is shown as
TIMEOUT = 90  # seconds a server started here may take to answer everything
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}([ T])\d{2}:\d{2}:\d{2}(\.\d+)?")
_DURATION = re.compile(r"\bin \d+(?:\.\d+)? s\b")
# Variables of the shell that change how output looks; cleared for every run, with all of Lancelot's own.
_DISPLAY = (
    "NO_COLOR",
    "FORCE_COLOR",
    "PY_COLORS",
    "CLICOLOR_FORCE",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERM",
    "COLORTERM",
    "GITHUB_ACTIONS",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "TERMINAL_WIDTH",
    "COLUMNS",
    "LINES",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
)


def _jq_fields(*keys: str) -> Callable[[str], str]:
    """What ``jq -c '{a, b}'`` prints for each JSON line: those keys, compact (a whole float as jq shows it)."""

    def shown(value: Any) -> Any:
        return int(value) if isinstance(value, float) and value.is_integer() else value

    def pick(text: str) -> str:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return "\n".join(
            json.dumps({k: shown(row.get(k)) for k in keys}, ensure_ascii=False, separators=(",", ":")) for row in rows
        )

    return pick


@dataclass(frozen=True)
class Example:
    """A command run on the sample, shown as ``$ command`` and what it printed."""

    name: str
    command: str  # as shown; run as shlex.split with $PWD expanded
    terminal: bool = True  # False: piped (plain text, nothing wrapped)
    stdout_to: str | None = None  # shown as `> FILE`, then `$ cat FILE`
    pipe: tuple[str, Callable[[str], str]] | None = None  # shown after the command; what it does to stdout
    show_exit: bool = False  # add `$ echo $?`
    process: bool = False  # a server: run as its own process, its first line of stderr shown
    writes_settings: bool = False  # the MCP session (which reads the settings) must be done first
    env: tuple[tuple[str, str | None], ...] = ()  # changes to the sandbox's environment (None: unset)
    cut: str | None = None  # a pattern whose first group is kept and the rest of the match shown as "…"


EXAMPLES: tuple[Example, ...] = (
    Example("index", "lancelot index examples/sample-docs ./sample-db --no-embed"),  # first: the others read it
    Example("status", "lancelot status --db ./sample-db"),
    Example("search", 'lancelot search "refund policy" --db ./sample-db --limit 3'),
    Example(
        "jsonl",
        'lancelot search "refund policy" --db ./sample-db --limit 2 --jsonl',
        terminal=False,
        pipe=(" | jq -c '{score, title, source}'", _jq_fields("score", "title", "source")),
    ),
    Example("json-empty", 'lancelot search "xylophone" --db ./sample-db --json', terminal=False),
    Example(
        "query",
        'lancelot query "how do refunds work?" --db ./sample-db --budget 700',
        terminal=False,
        stdout_to="context.md",
    ),
    Example("show", "lancelot show policies/warranty.md --db ./sample-db"),
    Example("show-near", "lancelot show warranty.md --db ./sample-db", terminal=False, show_exit=True),
    Example("ls", "lancelot ls policies/ --db ./sample-db"),
    Example("error", 'lancelot search "refund" --db ./sample-db --table nosuch', show_exit=True),
    Example("version", "lancelot version", terminal=False),
    Example("version-json", "lancelot version --json", terminal=False),
    # The install links encode the temporary folder's real path: cut.
    Example(
        "init",
        'lancelot init --db "$PWD/sample-db" --no-api-key',
        terminal=False,
        writes_settings=True,
        cut=r"(vscode:mcp/install\?|&config=)\S+",
    ),
    Example("init-show", "lancelot init --show", env=(("LANCELOT_WARM", None),)),  # as set up, not as here
    Example("serve-http", "lancelot serve --http 8080 --db ./sample-db", process=True),
)


@dataclass(frozen=True)
class Reply:
    """A tool call made to `lancelot serve` on the sample, shown with its reply."""

    name: str
    tool: str
    arguments: dict[str, Any]


REPLIES: tuple[Reply, ...] = (
    Reply("search", "lancedb_search", {"query": "refund policy", "limit": 2}),
    Reply("query", "lancedb_query", {"question": "how do refunds work?", "contextBudget": 700}),
    Reply("document", "lancedb_document", {"source": "policies/warranty.md"}),
    Reply("status", "lancedb_status", {}),
    Reply("version", "lancedb_version", {}),
    Reply("bad-limit", "lancedb_search", {"query": "refund", "limit": "ten"}),
    Reply("unknown-parameter", "lancedb_search", {"query": "refund", "top_k": 5}),
    Reply("source-and-id", "lancedb_document", {"source": "policies/refunds.md", "id": "policies/refunds.md#0"}),
)


def clean(text: str) -> str:
    """Terminal output as a reader of the docs sees it: no escape codes, no trailing blanks."""
    lines = [line.rstrip() for line in _ANSI.sub("", text).splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _stamp(match: re.Match[str]) -> str:
    return f"2026-01-01{match.group(1)}12:00:00" + ("." + "0" * (len(match.group(2)) - 1) if match.group(2) else "")


_FIELD = re.compile(r"\S(?:\S| (?=\S))*")  # a cell: text with single spaces inside


def _starts(line: str) -> tuple[int, ...]:
    return tuple(m.start() for m in _FIELD.finditer(line))


def _realign(before: list[str], after: list[str]) -> list[str]:
    """The lines of ``after`` (``before`` with paths replaced, line for line), with the columns of each
    table of ``before`` whose cells changed laid out again, so that a shorter path keeps a table as
    the program would have drawn it. A table: two or more lines in a row whose cells (separated by
    two or more spaces) start at the same columns."""
    out, i = list(after), 0
    while i < len(before):
        starts, j = _starts(before[i]), i
        while j < len(before) and len(starts) > 1 and _starts(before[j]) == starts:
            j += 1
        if j - i >= 2 and before[i:j] != after[i:j]:
            old = [[m.group() for m in _FIELD.finditer(line)] for line in before[i:j]]
            new = [[m.group() for m in _FIELD.finditer(line)] for line in after[i:j]]
            if all(len(row) == len(starts) for row in new):
                at = [starts[0]]
                for col in range(len(starts) - 1):
                    gap = starts[col + 1] - starts[col] - max(len(row[col]) for row in old)
                    at.append(at[col] + max(len(row[col]) for row in new) + gap)
                out[i:j] = [
                    " " * at[0]
                    + "".join(cell.ljust(at[c + 1] - at[c]) if c + 1 < len(row) else cell for c, cell in enumerate(row))
                    for row in new
                ]
        i = max(j, i + 1)
    return out


def _pythonpath() -> str:
    """The checkout first: the processes started here import its `lancelot_cli` (and `tools`)."""
    return os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)


def environment(removed: tuple[str, ...], **values: str) -> dict[str, str | None]:
    """CliRunner's ``env``: every variable Lancelot reads or that changes how output looks unset (and
    ``removed``), then ``values``."""
    from lancelot_cli.settings import ENVIRONMENT

    env: dict[str, str | None] = dict.fromkeys((*ENVIRONMENT, *_DISPLAY, *removed))
    env.update(values)
    return env


class Session:
    """`lancelot serve` on stdio, sent the handshake, ``tools/list`` and every `REPLIES` call at once."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.log = open(home / "serve.log", "w+b")  # noqa: SIM115 (closed in replies())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lancelot_cli", "serve"],
            cwd=home,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        messages: list[dict[str, Any]] = [
            initialize_request(1, "lancelot-docs"),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        messages += [
            {
                "jsonrpc": "2.0",
                "id": 3 + i,
                "method": "tools/call",
                "params": {"name": r.tool, "arguments": r.arguments},
            }
            for i, r in enumerate(REPLIES)
        ]
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        self.proc.stdin.flush()  # stdin stays open until every answer is in

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def replies(self) -> dict[int, tuple[str, dict[str, Any]]]:
        """id -> (the line as sent, its parsed message), for every request."""
        wanted = set(range(1, 3 + len(REPLIES)))
        got: dict[int, tuple[str, dict[str, Any]]] = {}
        try:
            while wanted - got.keys():
                line = self.lines.get(timeout=TIMEOUT)
                if not line:
                    break
                message = json.loads(line)
                if "id" in message and ("result" in message or "error" in message):  # not a request of its own
                    got[message["id"]] = (line.decode().rstrip("\n"), message)
        except queue.Empty:
            pass
        finally:
            log = self.close()
        if wanted - got.keys():
            raise RuntimeError(f"lancelot serve did not answer {sorted(wanted - got.keys())}: {log}")
        return got

    def close(self) -> str:
        """Stop the server; return the end of what it logged."""
        if self.log.closed:
            return ""
        _stop(self.proc)
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.log.seek(0)
        log = self.log.read().decode(errors="replace")[-2000:]
        self.log.close()
        return log


class Server:
    """An example that is a server (`serve --http`): started as its own process on a free port shown as 8080;
    what it prints first on stderr is its example's output, then it is stopped."""

    def __init__(self, example: Example, env: dict[str, str], home: Path) -> None:
        self.example = example
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = str(probe.getsockname()[1])
        args = [arg if arg != "8080" else self.port for arg in shlex.split(example.command)[1:]]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lancelot_cli", *args],
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        stream = self.proc.stderr
        assert stream is not None
        threading.Thread(target=lambda: self.lines.put(stream.readline()), daemon=True).start()

    def first_line(self) -> tuple[str, str]:
        """(its first line of stderr, the port it was given)."""
        try:
            first = self.lines.get(timeout=TIMEOUT).decode().rstrip("\n")
        except queue.Empty:
            raise RuntimeError(f"{self.example.command!r} printed nothing in {TIMEOUT} s") from None
        finally:
            _stop(self.proc)
        return first, self.port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a server started here, at once: it only read, and a clean stop waits seconds for its
    background lancedb import to finish."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()


class Sample:
    """The examples and the server's replies on the sample, made once (about ten seconds)."""

    def __init__(self) -> None:
        self.examples: dict[str, str] = {}
        self.tools: list[dict[str, Any]] = []
        self.tools_list_size = 0
        self.replies: dict[str, dict[str, Any]] = {}
        # Under /tmp wherever there is one, whatever TMPDIR says: the folder's path has the same length on
        # every machine, so that the lines and tables where it appears are drawn the same.
        base = "/tmp" if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK) else None
        home = Path(tempfile.mkdtemp(prefix="lancelot-docs-", dir=base))
        try:
            self._make(home)
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def _make(self, home: Path) -> None:
        shutil.copytree(REPO / "examples" / "sample-docs", home / "examples" / "sample-docs")
        script = home / ".venv" / "bin" / "lancelot"  # `init` prints the script it runs from
        script.parent.mkdir(parents=True)
        script.write_text('#!/bin/sh\nexec python3 -m lancelot_cli "$@"\n', encoding="utf-8")
        script.chmod(0o755)
        private = {
            "HOME": str(home),
            "LANCELOT_CONFIG_DIR": str(home / ".config" / "lancelot"),
            "LANCELOT_WARM": "0",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "XDG_RUNTIME_DIR": str(home / ".run"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "FASTEMBED_CACHE_PATH": str(home / ".cache" / "fastembed"),
            "HF_HUB_OFFLINE": "1",
        }
        self.normal = [(str(home.resolve()), HOME), (str(home), HOME)]  # /tmp is /private/tmp on macOS
        cleared = {**os.environ, **environment(("PYTHONPATH",), **private)}
        process_env = {k: v for k, v in cleared.items() if v is not None}
        process_env["PYTHONPATH"] = _pythonpath()
        with closing(Runner(home, script)) as runner:
            self.examples[EXAMPLES[0].name] = self._run(runner, EXAMPLES[0], private, home)
            # The database exists: start the servers, which run beside the other examples.
            session: Session | None = Session(home, {**process_env, "LANCEDB_PATH": str(home / "sample-db")})
            servers: dict[str, Server] = {}
            try:
                servers.update({e.name: Server(e, process_env, home) for e in EXAMPLES if e.process})
                for example in EXAMPLES[1:]:
                    if example.writes_settings and session is not None:
                        self._take(session.replies())
                        session = None
                    if not example.process:
                        self.examples[example.name] = self._run(runner, example, private, home)
                if session is not None:
                    self._take(session.replies())
                    session = None
                for name, server in servers.items():
                    first, port = server.first_line()
                    self.normal.append((f":{port}/", ":8080/"))
                    self.examples[name] = self._normal(f"$ {server.example.command}\n{first}")
            finally:  # whatever failed, no server started here outlives the run
                for server in servers.values():
                    _stop(server.proc)
                if session is not None:
                    session.close()

    def _normal(self, text: str) -> str:
        before = text
        for old, new in self.normal:
            text = text.replace(old, new)
        text = "\n".join(_realign(before.split("\n"), text.split("\n")))
        return _DURATION.sub("in 1.0 s", _TIMESTAMP.sub(_stamp, text))

    def _run(self, runner: Runner, example: Example, private: dict[str, str], home: Path) -> str:
        args = [arg.replace("$PWD", str(home)) for arg in shlex.split(example.command)][1:]
        shown = {"FORCE_COLOR": "1", "NO_COLOR": "1", "TTY_INTERACTIVE": "0"} if example.terminal else {}
        env = environment((), **private, **shown, COLUMNS=str(WIDTH), TERMINAL_WIDTH=str(WIDTH))
        env.update(example.env)
        result = runner.invoke(args, env)
        if result.exception is not None:
            raise RuntimeError(f"example {example.name!r} raised:\n{result.exception}")
        command = example.command + (example.pipe[0] if example.pipe else "")
        if example.stdout_to:
            out = [
                f"$ {command} > {example.stdout_to}",
                clean(result.stderr),
                f"$ cat {example.stdout_to}",
                clean(result.stdout),
            ]
        elif example.pipe:
            out = [f"$ {command}", example.pipe[1](clean(result.stdout)), clean(result.stderr)]
        else:
            out = [f"$ {command}", clean(result.output)]
        if example.show_exit:
            out += ["$ echo $?", str(result.exit_code)]
        text = "\n".join(part for part in out if part)
        if example.cut:
            text = re.sub(example.cut, lambda m: m.group(1) + "…", text)
        return self._normal(text)

    def _take(self, got: dict[int, tuple[str, dict[str, Any]]]) -> None:
        line, listed = got[2]
        if "result" not in listed:
            raise RuntimeError(f"tools/list failed: {line}")
        self.tools = listed["result"]["tools"]
        self.tools_list_size = len(line)
        for i, reply in enumerate(REPLIES):
            self.replies[reply.name] = json.loads(self._normal(json.dumps(got[3 + i][1])))


@dataclass(frozen=True)
class Result:
    """What `docrun` sends back for one example: CliRunner's streams, exit code, and the traceback of
    an exception that was not an exit."""

    stdout: str
    stderr: str
    output: str
    exit_code: int
    exception: str | None


class Runner:
    """A `docrun` process in ``home``, started as if from ``script``: it runs the examples one by one."""

    def __init__(self, home: Path, script: Path) -> None:
        env = {**os.environ, "PYTHONPATH": _pythonpath()}
        self.log = open(home / "docrun.log", "w+b")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.docrun", str(script)],
            cwd=home,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            encoding="utf-8",
        )

    def invoke(self, args: list[str], env: dict[str, str | None]) -> Result:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"args": args, "env": env}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError(f"docrun stopped: {self.log.read().decode(errors='replace')[-2000:]}")
        return Result(**json.loads(line))

    def close(self) -> None:
        """Let it finish (stdin closed) and end."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
