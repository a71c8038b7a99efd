"""`lancelot init --show` (every setting, where it comes from, and the key masked) and `--forget`.

The rows come from the settings table (`settings.rows`), the same rows `lancelot status` prints;
here every setting is listed, with the source in words and, when the file holds a value that
something else overrides, that value too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from lancelot_cli import redact
from lancelot_cli import settings as settings_module
from lancelot_cli.cli.init.questions import say
from lancelot_cli.settings import blank

_SOURCE_WORDS = {"flag": "flag", "env": "environment", "file": "file", "default": "default", "keychain": "keychain"}


def show(flags: Mapping[str, str | None], environ: Mapping[str, str] | None = None) -> str:
    """The effective settings, where each comes from, and the key masked (the text `--show` prints)."""
    env = os.environ if environ is None else environ
    effective = settings_module.load(flags=flags, environ=env)
    directory = effective.config_dir
    stored = settings_module.read_stored(directory)
    settings_file = directory / settings_module.SETTINGS_FILE
    from_env = not blank(env.get("LANCELOT_CONFIG_DIR"))
    lines = [
        f"Config folder:  {directory}" + ("  (LANCELOT_CONFIG_DIR)" if from_env else "  (the platform's)"),
        f"Settings file:  {settings_file}" + ("" if settings_file.exists() else "  (not written yet)"),
        "",
    ]
    rows: list[tuple[str, str, str]] = []
    for name, value, origin in settings_module.rows(effective):  # every setting, in the table's order
        where = _SOURCE_WORDS.get(origin, origin)
        if origin != "file" and name in stored:
            where += f" (file has {redact.url(stored[name])})"
        if name == "LANCELOT_HTTP_TOKENS" and origin == "default":
            value, where = _stored_token_cell(directory, value, where)
        rows.append((name, value, where))
    rows.append(_key_row(directory, env))
    width_name = max(len(r[0]) for r in rows)
    width_value = min(48, max(len(r[1]) for r in rows))
    lines.append(f"{'setting':<{width_name}}  {'value':<{width_value}}  from")
    for name, value, where in rows:
        lines.append(f"{name:<{width_name}}  {value:<{width_value}}  {where}")
    return "\n".join(lines)


def _stored_token_cell(directory: Path, value: str, where: str) -> tuple[str, str]:
    """The HTTP token row when no setting names one: the token `init --http-token` stored, hidden."""
    from lancelot_cli import http_tokens, keyfile

    if not http_tokens.stored(directory):
        return value, where
    in_file = (directory / keyfile.TOKENS_FILE).exists()
    return "(stored, hidden)", f"init --http-token ({directory / keyfile.TOKENS_FILE if in_file else 'keychain'})"


def _key_row(directory: Path, env: Mapping[str, str]) -> tuple[str, str, str]:
    """The key's row: masked, with where it was found (and other stored copies)."""
    from lancelot_cli import credentials, keyfile

    found = credentials.find_openai_key(directory, env)
    if found is None:
        return ("OPENAI_API_KEY", "(none)", "vector search is off; text search works")
    where = _SOURCE_WORDS.get(found.source, found.source)
    if found.source == "file":
        where += f" ({directory / keyfile.KEY_FILE})"
    others = [c.source for c in credentials.stored_keys(directory) if c.source != found.source]
    if others:
        where += f" (also stored: {', '.join(others)})"
    return ("OPENAI_API_KEY", credentials.mask(found.value), where)


def forget(environ: Mapping[str, str] | None = None) -> int:
    """Remove the stored key from the keychain and the key file; the exit code (1 if one could not be)."""
    from lancelot_cli import credentials

    env = os.environ if environ is None else environ
    directory = settings_module.config_dir(env)
    gone = credentials.forget_key(directory)
    places = {"keychain": "the OS keychain", "file": f"the key file in {directory}"}
    if gone.removed:
        say("Removed the stored OpenAI key from " + " and ".join(places[p] for p in gone.removed) + ".")
    else:
        say("No stored OpenAI key was found (keychain and key file).")
    if not blank(env.get("OPENAI_API_KEY")):
        say("note: OPENAI_API_KEY is still set in this environment, and is still used where it is set")
    for problem in gone.problems:
        say(f"warning: {problem}")
    return 1 if gone.problems else 0
