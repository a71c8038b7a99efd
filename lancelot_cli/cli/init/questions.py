"""The questions of `lancelot init`: the `Prompter` the flow asks through, its questionary
implementation, and the validators that say what is wrong with an answer (None when it is fine).

Every question uses ``unsafe_ask()``: Ctrl-C raises ``KeyboardInterrupt`` (the CLI boundary says
"interrupted", exit 130) and Ctrl-D (``EOFError``) is treated the same way. questionary is imported
inside the methods: it is slow to import. Tests pass prompt_toolkit ``input``/``output`` objects
and drive the real prompts through a pipe.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import typer

from lancelot_cli.settings import blank
from lancelot_cli.storage.schema import is_local, local_path

Validator = Callable[[str], "str | None"]  # None when the answer is fine, else what is wrong with it
Value = TypeVar("Value", bound=str)  # a `select` choice's value


class Prompter(Protocol):
    """The questions `lancelot init` asks. Each returns the answer or raises ``KeyboardInterrupt``."""

    def path(self, message: str, *, default: str = "", validate: Validator | None = None) -> str: ...

    def text(self, message: str, *, default: str = "", validate: Validator | None = None) -> str: ...

    def password(self, message: str, *, validate: Validator | None = None) -> str: ...

    def confirm(self, message: str, *, default: bool = True) -> bool: ...

    def select(self, message: str, choices: Sequence[tuple[Value, str]], *, default: Value | None = None) -> Value:
        """``choices`` are ``(value, title)`` pairs; returns the chosen value."""
        ...


class QuestionaryPrompter:
    """The `Prompter` for a person at a terminal, through questionary.

    A text or path question starts empty, with its default shown in the question ("[/srv/db]");
    Enter alone takes the default. (questionary's own ``default=`` pre-fills the field, and what
    the person types is appended to it: a pre-filled ``/srv/db`` plus a typed ``/srv/new`` became
    ``/srv/db/srv/new``.)

    Args:
        input: a prompt_toolkit ``Input`` (tests pass ``create_pipe_input()``); None for the terminal.
        output: a prompt_toolkit ``Output`` (tests pass ``DummyOutput()``); None for the terminal.
    """

    def __init__(self, input: Any = None, output: Any = None) -> None:  # noqa: A002 - questionary's names
        self._io = {name: value for name, value in (("input", input), ("output", output)) if value is not None}

    @staticmethod
    def _ask(question: Any) -> Any:
        try:
            return question.unsafe_ask()  # Ctrl-C raises KeyboardInterrupt instead of returning None
        except EOFError:  # Ctrl-D, or input that ended: the person is not answering; same as Ctrl-C
            raise KeyboardInterrupt from None

    @staticmethod
    def _validator(validate: Validator | None, default: str = "") -> Any:
        if validate is None:
            return None

        def check(answer: str) -> bool | str:
            problem = validate(default if blank(answer) and default else answer)
            return True if problem is None else problem

        return check

    def path(self, message: str, *, default: str = "", validate: Validator | None = None) -> str:
        import questionary

        return self._or_default(
            questionary.path(
                with_default(message, default),
                validate=self._validator(validate, default),
                only_directories=True,
                **self._io,
            ),
            default,
        )

    def text(self, message: str, *, default: str = "", validate: Validator | None = None) -> str:
        import questionary

        return self._or_default(
            questionary.text(with_default(message, default), validate=self._validator(validate, default), **self._io),
            default,
        )

    def _or_default(self, question: Any, default: str) -> str:
        answer = str(self._ask(question))
        return default if blank(answer) else answer

    def password(self, message: str, *, validate: Validator | None = None) -> str:
        import questionary

        return str(self._ask(questionary.password(message, validate=self._validator(validate), **self._io)))

    def confirm(self, message: str, *, default: bool = True) -> bool:
        import questionary

        return bool(self._ask(questionary.confirm(message, default=default, **self._io)))

    def select(self, message: str, choices: Sequence[tuple[Value, str]], *, default: Value | None = None) -> Value:
        import questionary

        options = [questionary.Choice(title, value=value) for value, title in choices]
        values = [value for value, _ in choices]
        chosen: Value = self._ask(
            questionary.select(
                message,
                choices=options,  # the chosen pair's value, as given
                default=default if default in values else None,
                **self._io,
            )
        )
        return chosen


def with_default(message: str, default: str) -> str:
    """The question with its default shown, e.g. ``Database folder [/srv/db]:``."""
    if not default:
        return message
    return f"{message.rstrip(':').rstrip()} [{default}]:"


def say(message: str) -> None:
    """A note for the person (stderr; stdout is kept for the configurations)."""
    typer.echo(message, err=True)


def normalise_db(raw: str, cwd: Path | None = None) -> str:
    """An absolute folder path (``~`` expanded, ``file://`` dropped); object-store URIs as given."""
    value = raw.strip()
    if not is_local(value):
        return value
    path = Path(local_path(value)).expanduser()
    return os.path.normpath(str(path if path.is_absolute() else (cwd or Path.cwd()) / path))


def db_problem(raw: str, cwd: Path | None = None) -> str | None:
    """Why ``raw`` cannot be the database folder, or None."""
    if blank(raw):
        return "enter the database folder's path"
    path = normalise_db(raw, cwd)
    if not is_local(path):
        return None
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{path} is a file, not a folder"
    parent = Path(path).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, so {path} cannot be a folder"
    return None


def key_problem(raw: str) -> str | None:
    """Why ``raw`` cannot be an API key, or None (blank is fine: it means "no key"). Never quotes the key:
    a key with a character HTTP headers cannot carry would otherwise end up in an error message."""
    value = raw.strip()
    if any(ch.isspace() for ch in value):
        return "an API key has no spaces in it; paste the key alone"
    if not (value.isascii() and value.isprintable()):
        return "an API key is plain ASCII (letters, digits, - and _); this has other characters"
    return None


def source_problem(raw: str, cwd: Path | None = None) -> str | None:
    if blank(raw):
        return "enter the folder of documents to index"
    path = (cwd or Path.cwd()) / Path(raw.strip()).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder" if path.exists() else f"{path} does not exist"
    return None


def base_url_problem(raw: str) -> str | None:
    if blank(raw) or raw.strip().startswith(("http://", "https://")):
        return None
    return "a base URL starts with http:// or https:// (leave it empty for OpenAI)"


def not_blank(what: str) -> Validator:
    return lambda raw: f"enter {what}" if blank(raw) else None
