"""Every pass that runs over untrusted text before or instead of a parser is linear in its input
(issue 37: one crafted 64 KB request held `serve --http`'s event loop for 10.7 s; one 4 KB Markdown
line held `lancelot index` for 52 s). Each case doubles a hostile input until a call takes 20 ms
and fails when the doubling more than triples the time (``tests/support/growth.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lancelot_cli.server.http import _depth, json_problem
from tests.support.growth import assert_linear

# -- the HTTP guard's checks before the JSON parser (server/http.py, shared by the Lambda handler) --

BODIES: dict[str, Callable[[int], bytes]] = {
    "escaped-quotes-unterminated": lambda n: b'"' + b'\\"' * n,
    "escaped-quotes-in-object": lambda n: b'{"a":"' + b'\\"' * n,
    "backslashes-unterminated": lambda n: b'"' + b"\\\\" * n,
    "quotes-and-brackets": lambda n: b'["' + b'\\"[' * n,
    "many-short-strings": lambda n: b"[" + b'"",' * n,
    "brackets": lambda n: b"[" * n,
}


@pytest.mark.parametrize("make", BODIES.values(), ids=BODIES.keys())
def test_the_body_check_is_linear(make: Callable[[int], bytes]) -> None:
    assert_linear(json_problem, make)


@pytest.mark.parametrize(
    ("text", "deepest"),
    [
        ('{"a": "\\"{[", "b": [1]}', 2),
        ('{"a": "\\\\", "b": [[1]]}', 3),
        ('["]]]]", ["[[["]]', 2),
        ('"' + '\\"' * 10, 0),  # unterminated: no bracket outside a string
        ('"a\nb"[[', 2),  # a raw newline does not end the string scan early
    ],
)
def test_depth_counts_only_brackets_outside_strings(text: str, deepest: int) -> None:
    assert _depth(text) == deepest
