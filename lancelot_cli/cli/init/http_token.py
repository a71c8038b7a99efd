"""The HTTP login token part of `lancelot init` (issue 50 #1): make a bearer token for
`lancelot serve --http`, keep the stored one, or remove it.

``--http-token`` makes a new one (``secrets.token_urlsafe(32)``), ``--remove-http-token`` removes
it; without either nothing changes, except that on a terminal the question is asked when a token is
stored already (keep, new, remove) or the database is on an object store (the set-up a team shares
through `serve --http` replicas). The token is made while the questions are asked and stored at the
end with every other write (Ctrl-C before then changes nothing), in the OS keychain or the
encrypted file (``http_tokens``), and printed once, on stdout with the client configurations, as
``MCP_LANCELOT_TOKEN=<token>``: the line a person copies to where the clients run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from lancelot_cli.cli.init.questions import say
from lancelot_cli.storage.schema import is_local

if TYPE_CHECKING:
    from lancelot_cli.cli.init.questions import Prompter

# What init does with the HTTP token: make a new one, keep whatever is stored, or remove it.
TokenAction = Literal["new", "keep", "remove"]
QUESTION = "A bearer token for `lancelot serve --http`?"


class TokenQuestions:
    """The token question, mixed into `flow.Wizard` (which provides the attributes below)."""

    interactive: bool
    config_dir: Path
    token_flag: TokenAction | None
    token_action: TokenAction = "keep"
    new_token: str | None = None

    @property
    def ask(self) -> Prompter:  # provided by the Wizard
        raise NotImplementedError

    def _http_token(self, db_uri: str) -> None:
        """Decide what happens to the token (``token_action``); a new one is made now, stored at the end."""
        from lancelot_cli import http_tokens

        action: TokenAction = self.token_flag or "keep"
        if self.token_flag is None and self.interactive:
            if http_tokens.stored(self.config_dir):
                action = self.ask.select(
                    "HTTP login token for `lancelot serve --http` (stored, not shown again):",
                    [
                        ("keep", "Keep the stored token"),
                        ("new", "Make a new one (the stored one stops working)"),
                        ("remove", "Remove it (no login unless LANCELOT_HTTP_TOKENS is set)"),
                    ],
                    default="keep",
                )
            elif not is_local(db_uri) and self.ask.confirm(
                f"{QUESTION} (for a server your team shares; stored like the key, shown once)", default=False
            ):
                action = "new"
        self.token_action = action
        self.new_token = http_tokens.new_token() if action == "new" else None

    def _apply_http_token(self) -> None:
        """Store the new token or remove the stored one (called by `Wizard.apply`, with the other writes)."""
        from lancelot_cli import http_tokens

        if self.token_action == "new" and self.new_token:
            result = http_tokens.store(self.config_dir, self.new_token)
            where = "the OS keychain" if result.source == "keychain" else f"the encrypted file {result.path}"
            say(
                f"A new bearer token for `lancelot serve --http` is in {where}; it is printed once, below, "
                f"as MCP_LANCELOT_TOKEN (a server started before now keeps the old one until restarted)."
            )
        elif self.token_action == "remove":
            gone = http_tokens.forget(self.config_dir)
            say("The stored HTTP token was removed." if gone.removed else "There was no stored HTTP token to remove.")
            for problem in gone.problems:
                say(f"warning: {problem}")
