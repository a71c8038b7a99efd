"""`python -m lancelot_cli` runs the `lancelot` command."""

import sys

from lancelot_cli.cli.app import main
from lancelot_cli.startup import start

if __name__ == "__main__":
    start(sys.argv[1:])  # the process-wide set-up (lancelot_cli.startup), before any command loads lancedb
    main()
