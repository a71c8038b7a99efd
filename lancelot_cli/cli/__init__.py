"""The `lancelot` command line. typer, rich and questionary are imported only in this package."""
