"""The process the docs' examples run in, started in the sample's folder.

Started as if from the sample's ``lancelot`` script, it runs each example it is sent through the
real `app` with Typer's CliRunner.

A process of its own, started with ``cwd=`` the sample's folder, so that nothing changes the working
folder of the process that generates the docs (or of the tests that import it): no ``os.chdir``.
One request per line on stdin, ``{"args": [...], "env": {...}}`` (a null value unsets the variable
for the run); one reply per line, ``{"stdout", "stderr", "output", "exit_code", "exception"}`` (the
exception's traceback, or null), on the descriptor that was stdout when it started. Anything written
to file descriptor 1 by the commands themselves (a child process of theirs) goes to stderr instead.

    python -m tools.docrun SCRIPT    # SCRIPT: what ``sys.argv[0]`` is, as `init` prints it
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def main() -> int:
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.argv = [sys.argv[1]]  # `init` looks for the script it runs from (init/clients.py)

    from typer.testing import CliRunner

    from lancelot_cli.cli.app import app

    for line in sys.stdin:
        request = json.loads(line)
        result = CliRunner().invoke(app, request["args"], prog_name="lancelot", env=request["env"])
        raised = result.exception is not None and not isinstance(result.exception, SystemExit)
        reply = {
            "stdout": result.stdout,
            "stderr": result.stderr,
            "output": result.output,
            "exit_code": result.exit_code,
            "exception": "".join(traceback.format_exception(*result.exc_info)) if raised and result.exc_info else None,
        }
        channel.write(json.dumps(reply) + "\n")
        channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
