"""`python -m lancelot_cli` runs the `lancelot` command."""

from lancelot_cli.cli.app import main

if __name__ == "__main__":
    main()  # which starts with the process-wide set-up (lancelot_cli.startup)
