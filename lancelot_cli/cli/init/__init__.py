"""`lancelot init`: set up the database folder, the default table and how documents are embedded (an
OpenAI key, a local model, or none), then print ready-to-paste MCP client configurations.

The modules, in the order the command uses them:

* `command`: the Typer command; reads the flags, then `--show`, `--forget`, or the flow.
* `answers`: `InitOptions` (the flags) and `Plan` (every write, decided before any is made).
* `flow`: `Wizard`, every question in order and every write at the end (`apply`).
* `prompts`: the `Prompter` the flow asks through, its questionary implementation, the validators.
* `embedding`: how documents are embedded: a key (then `key`), a local model (no key), or none.
* `key`: the OpenAI key questions and the one embeddings call that checks a key.
* `clients`: the client configurations printed at the end (Claude Code, Claude Desktop/Cursor,
  VS Code, Codex, install links), with the absolute path of the `lancelot` script.
* `show`: `--show` (rows from the settings table) and `--forget`.

Where things go: settings in ``settings.json`` in the config folder, keyed by the variable names
(other entries already there are kept); the key in the OS keychain through keyring, else the
encrypted key file (`credentials.store_key`). The key never goes to the settings file, the
database folder, the output or a log. Messages go to stderr; the client configurations (the
result) and ``--show`` go to stdout, so ``lancelot init --db DB --no-api-key > clients.txt`` keeps
only them.
"""

from lancelot_cli.cli.init.answers import InitOptions, Plan
from lancelot_cli.cli.init.clients import client_configs, server_command
from lancelot_cli.cli.init.command import HELP, init
from lancelot_cli.cli.init.flow import Wizard, execute
from lancelot_cli.cli.init.questions import QuestionaryPrompter

__all__ = [
    "HELP",
    "InitOptions",
    "Plan",
    "QuestionaryPrompter",
    "Wizard",
    "client_configs",
    "execute",
    "init",
    "server_command",
]
