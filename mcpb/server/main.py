"""The extension's entry point: `lancelot serve` on stdio (LANCEDB_PATH and the key come from the host)."""

import sys

from lancelot_cli.cli.app import main

if __name__ == "__main__":
    sys.argv = ["lancelot", "serve"]
    main()
