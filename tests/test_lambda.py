"""AWS Lambda handler (SPEC §8, with the HTTP rules of §7): real API Gateway HTTP API payload-format-2.0
events through ``lancelot_cli.server.aws_lambda.handler`` (Mangum + Guard + the MCP app) over the
real sample database. No mocks of Lancelot's own code; the only wrapper is a call counter around
the third-party ``lancedb.connect``."""

from __future__ import annotations

import contextlib
import json
import os
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import lancelot_cli
from lancelot_cli.server.transports import aws_lambda
from tests.conftest import REPO, hash_tree
from tests.support.expected import TOOLS
from tests.support.lambda_events import API_HOST, make_event

MAX_BODY = 64 * 1024


def rpc(method: str, params: dict[str, Any] | None = None, ident: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return message


def search(query: str = "refund", **arguments: Any) -> dict[str, Any]:
    return rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": query, **arguments}})


LIST = rpc("tools/list")


def body_json(response: dict[str, Any]) -> Any:
    assert not response.get("isBase64Encoded"), response
    return json.loads(response["body"])


def headers_of(response: dict[str, Any]) -> dict[str, str]:
    return {k.lower(): v for k, v in (response.get("headers") or {}).items()}


def assert_ok(response: dict[str, Any]) -> dict[str, Any]:
    """A 200 JSON-RPC result (not an error) with a JSON content type; returns the result."""
    assert response["statusCode"] == 200, response
    assert headers_of(response)["content-type"].startswith("application/json"), response
    reply = body_json(response)
    assert reply.get("jsonrpc") == "2.0", reply
    assert "error" not in reply, reply
    return reply["result"]


def assert_error(response: dict[str, Any], status: int) -> dict[str, Any]:
    """An HTTP error answered with a JSON-RPC error object (SPEC §7)."""
    assert response["statusCode"] == status, response
    reply = body_json(response)
    assert reply["jsonrpc"] == "2.0" and "error" in reply, reply
    assert isinstance(reply["error"]["code"], int) and reply["error"]["message"], reply
    return reply["error"]


def tool_json(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is not True, result
    return json.loads(result["content"][0]["text"])


def hit_sources(response: dict[str, Any]) -> list[str]:
    return [hit["source"] for hit in tool_json(assert_ok(response))["hits"]]


def find_engines(root: Any, limit: int = 50_000) -> list[Any]:
    """Engine objects reachable from ``root`` through attributes, containers and closures."""
    from lancelot_cli.engine import Engine

    found: list[Any] = []
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, str, bytes, int, float, type(None))):
            continue
        seen.add(id(obj))
        if isinstance(obj, Engine):
            found.append(obj)
            continue
        if isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                with contextlib.suppress(ValueError):  # empty cell
                    stack.append(cell.cell_contents)
            continue
        if isinstance(obj, types.MethodType):
            stack += [obj.__func__, obj.__self__]
            continue
        if isinstance(obj, dict):
            stack += list(obj.values())
            continue
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
            continue
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            stack += list(attrs.values())
    return found


Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def lam(monkeypatch: pytest.MonkeyPatch, sample_db: Path) -> Callable[..., Invoke]:
    """``lam(**env)`` configures a cold Lambda (fresh module-global handler, the given environment
    on top of LANCEDB_PATH=sample_db) and returns ``invoke(event) -> response``."""

    def configure(**env: str | None) -> Invoke:
        monkeypatch.setattr(aws_lambda, "_handler", None)
        monkeypatch.setenv("LANCEDB_PATH", str(sample_db))
        for name, value in env.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)

        def invoke(event: dict[str, Any]) -> dict[str, Any]:
            response = aws_lambda.handler(event, None)
            assert isinstance(response, dict) and isinstance(response["statusCode"], int), response
            assert isinstance(response["body"], str), response
            # The Lambda runtime serialises the reply as JSON; it must survive that unchanged.
            wire = json.loads(json.dumps(response))
            assert wire["statusCode"] == int(response["statusCode"])
            return wire

        return invoke

    return configure


# -- 1. real MCP calls --------------------------------------------------------------------------


def test_tools_call_search_finds_refund_policy(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    response = invoke(make_event(search("refund")))
    reply = tool_json(assert_ok(response))
    assert reply["count"] >= 1 and reply["hits"]
    assert reply["hits"][0]["source"] == "policies/refunds.md"
    assert reply["searchType"] == "text"
    # Stateless: no session is handed out.
    assert "mcp-session-id" not in headers_of(response)


def test_tools_list_lists_the_four_tools(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    result = assert_ok(invoke(make_event(LIST)))
    names = {tool["name"] for tool in result["tools"]}
    assert names == TOOLS
    assert all(tool["annotations"]["readOnlyHint"] is True for tool in result["tools"])


def test_stateless_without_initialize_and_initialize_also_works(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    # The very first invocation of a cold handler is a tool call, with no initialize before it.
    assert "policies/refunds.md" in hit_sources(invoke(make_event(search("refund"))))
    init = rpc(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}},
    )
    response = invoke(make_event(init))
    result = assert_ok(response)
    assert result["serverInfo"]["name"] == "lancelot"
    assert result["protocolVersion"] == "2025-06-18"
    assert "mcp-session-id" not in headers_of(response)
    # Another tool call after it, again without a session id.
    status = tool_json(assert_ok(invoke(make_event(rpc("tools/call", {"name": "lancedb_status", "arguments": {}})))))
    assert "documents" in json.dumps(status)


def test_documented_handler_path(lam: Callable[..., Invoke]) -> None:
    """The Dockerfile's CMD names the handler; the package itself no longer imports the server for it."""
    import importlib

    lam()
    cmd = (REPO / "Dockerfile").read_text(encoding="utf-8").rsplit("CMD", 1)[1]
    module, _, name = json.loads(cmd)[0].rpartition(".")
    handler = getattr(importlib.import_module(module), name)
    response = handler(make_event(search("refund")), None)
    assert hit_sources(response)[0] == "policies/refunds.md"
    result = assert_ok(handler(make_event(LIST), None))
    assert {tool["name"] for tool in result["tools"]} == TOOLS
    assert not hasattr(lancelot_cli, "handler")


def test_query_and_version_tools(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    query = rpc("tools/call", {"name": "lancedb_query", "arguments": {"question": "how do refunds work?"}})
    result = assert_ok(invoke(make_event(query)))
    assert result.get("isError") is not True
    assert "policies/refunds.md" in result["content"][0]["text"]
    version = tool_json(assert_ok(invoke(make_event(rpc("tools/call", {"name": "lancedb_version", "arguments": {}})))))
    assert version["version"] == lancelot_cli.__version__


# -- 2. methods, bodies, headers ----------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405_with_allow_post(lam: Callable[..., Invoke], method: str) -> None:
    invoke = lam()
    response = invoke(make_event(None, method=method))
    assert_error(response, 405)
    assert headers_of(response)["allow"] == "POST"


def test_base64_encoded_body(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    response = invoke(make_event(search("refund"), base64_body=True))
    assert hit_sources(response)[0] == "policies/refunds.md"
    # Non-ASCII text survives the base64 round trip.
    response = invoke(make_event(json.dumps(search("remboursement café"), ensure_ascii=False), base64_body=True))
    assert tool_json(assert_ok(response))["query"] == "remboursement café"


def padded(message: dict[str, Any], size: int) -> str:
    """``message`` as JSON text of exactly ``size`` bytes (padded inside a string, so still one object)."""
    message = json.loads(json.dumps(message))
    message.setdefault("params", {}).setdefault("_meta", {})["pad"] = ""
    base = len(json.dumps(message).encode())
    message["params"]["_meta"]["pad"] = "x" * (size - base)
    text = json.dumps(message)
    assert len(text.encode()) == size
    return text


@pytest.mark.parametrize("content_length", [True, False], ids=["declared", "undeclared"])
def test_body_over_64kb_is_413(lam: Callable[..., Invoke], content_length: bool) -> None:
    invoke = lam()
    body = padded(LIST, MAX_BODY + 1)
    assert len(body.encode()) == 65_537
    assert_error(invoke(make_event(body, content_length=content_length)), 413)
    # Also when it arrives base64-encoded (the limit is on the decoded body).
    assert_error(invoke(make_event(body, content_length=content_length, base64_body=True)), 413)


@pytest.mark.parametrize("content_length", [True, False], ids=["declared", "undeclared"])
def test_body_of_exactly_64kb_is_accepted(lam: Callable[..., Invoke], content_length: bool) -> None:
    invoke = lam()
    body = padded(LIST, MAX_BODY)
    assert len(body.encode()) == 65_536
    result = assert_ok(invoke(make_event(body, content_length=content_length)))
    assert {tool["name"] for tool in result["tools"]} == TOOLS
    # Trailing whitespace padding is JSON too.
    text = json.dumps(LIST)
    body = text + " " * (MAX_BODY - len(text))
    assert len(body.encode()) == 65_536
    assert_ok(invoke(make_event(body, content_length=content_length)))


@pytest.mark.parametrize("body", ["not json", '{"jsonrpc": "2.0", ', "\xff\xfe"], ids=["text", "truncated", "binary"])
def test_non_json_body_is_400(lam: Callable[..., Invoke], body: str) -> None:
    invoke = lam()
    error = assert_error(invoke(make_event(body)), 400)
    assert error["code"] == -32700


def test_post_without_body_is_400(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    assert_error(invoke(make_event(None)), 400)
    assert_error(invoke(make_event("")), 400)


def test_content_length_understated_is_still_413(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    event = make_event(padded(LIST, MAX_BODY + 1))
    event["headers"]["content-length"] = "10"
    assert_error(invoke(event), 413)
    event["headers"]["content-length"] = "not-a-number"
    assert_error(invoke(event), 413)


def test_notification_is_202_with_empty_body(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    response = invoke(make_event({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert response["statusCode"] == 202, response
    assert response["body"] == ""


def test_non_json_base64_body_is_400(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    event = make_event(b"\x00\x01\x02 definitely not json \xff", base64_body=True)
    assert_error(invoke(event), 400)


def test_cookies_comma_joined_headers_and_query_string(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    event = make_event(
        search("refund"),
        cookies=["session=abc123", "theme=dark; Path=/", "empty="],
        raw_query="foo=bar&x=1&x=2&flag",
        headers={
            "x-forwarded-for": "203.0.113.7, 10.0.0.1, 10.0.0.2",
            "cache-control": "no-cache, no-store",
            "accept-encoding": "gzip, deflate, br",
            "accept-language": "en-GB,en;q=0.9,fr;q=0.8",
            "x-custom": "a,b,,c",
        },
    )
    assert hit_sources(invoke(event))[0] == "policies/refunds.md"
    # Empty cookie list and an empty query string are fine too.
    assert_ok(invoke(make_event(LIST, cookies=[], raw_query="")))


def test_event_without_optional_fields(lam: Callable[..., Invoke]) -> None:
    """A minimal event (no cookies key, no content-length, no host) still works."""
    invoke = lam()
    event = make_event(LIST, content_length=False, headers={"host": None, "x-forwarded-port": None})
    event.pop("cookies", None)
    assert_ok(invoke(event))


# -- 3. paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/mcp", "/anything/deep", "/lancelot", "/mcp/"])
def test_base_path_unset_serves_every_path(lam: Callable[..., Invoke], path: str) -> None:
    invoke = lam(LANCELOT_BASE_PATH=None)
    assert_ok(invoke(make_event(LIST, path=path)))


@pytest.mark.parametrize(
    "path,status",
    [
        ("/lancelot", 200),
        ("/lancelot/", 200),
        ("/lancelot/mcp", 200),
        ("/lancelot/mcp/", 200),
        ("/other", 404),
        ("/mcp", 404),
        ("/", 404),
        ("/lancelotx", 404),
        ("/lancelot/other", 404),
        ("/lancelot/mcp/more", 404),
        ("/other/lancelot", 404),
    ],
)
def test_base_path_set(lam: Callable[..., Invoke], path: str, status: int) -> None:
    invoke = lam(LANCELOT_BASE_PATH="/lancelot")
    response = invoke(make_event(LIST, path=path))
    if status == 200:
        assert_ok(response)
    else:
        assert_error(response, status)


@pytest.mark.parametrize("setting", ["lancelot", "/lancelot/", " /lancelot "])
def test_base_path_is_normalised(lam: Callable[..., Invoke], setting: str) -> None:
    invoke = lam(LANCELOT_BASE_PATH=setting)
    assert_ok(invoke(make_event(LIST, path="/lancelot")))
    assert_ok(invoke(make_event(LIST, path="/lancelot/mcp")))
    assert_error(invoke(make_event(LIST, path="/other")), 404)


@pytest.mark.parametrize(
    "path,status",
    [
        ("/prod/lancelot", 200),
        ("/prod/lancelot/mcp", 200),
        ("/prod/lancelot/", 200),
        ("/lancelot", 200),  # custom domain mapping: no stage prefix in the path
        ("/prod/other", 404),
        ("/prod", 404),
        ("/prod/mcp", 404),
        ("/production/lancelot", 404),
        ("/staging/lancelot", 404),
    ],
)
def test_named_stage_prefix_is_removed(lam: Callable[..., Invoke], path: str, status: int) -> None:
    invoke = lam(LANCELOT_BASE_PATH="/lancelot")
    response = invoke(make_event(LIST, path=path, stage="prod"))
    if status == 200:
        assert_ok(response)
    else:
        assert_error(response, status)


def test_default_stage_leaves_paths_alone(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_BASE_PATH="/lancelot")
    assert_ok(invoke(make_event(LIST, path="/lancelot", stage="$default")))
    assert_ok(invoke(make_event(LIST, path="/lancelot/mcp", stage="$default")))
    assert_error(invoke(make_event(LIST, path="/$default/lancelot", stage="$default")), 404)
    assert_error(invoke(make_event(LIST, path="/prod/lancelot", stage="$default")), 404)


def test_named_stage_with_base_path_unset_serves_everything(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_BASE_PATH=None)
    assert_ok(invoke(make_event(LIST, path="/prod/anything", stage="prod")))
    assert_ok(invoke(make_event(LIST, path="/prod", stage="prod")))


def test_wrong_path_is_404_before_method_check(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_BASE_PATH="/lancelot")
    assert_error(invoke(make_event(None, method="GET", path="/other")), 404)
    response = invoke(make_event(None, method="GET", path="/prod/lancelot", stage="prod"))
    assert_error(response, 405)
    assert headers_of(response)["allow"] == "POST"


# -- 4. Origin and Host -------------------------------------------------------------------------


def test_origin_absent_is_allowed(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_ALLOWED_ORIGINS=None)
    assert_ok(invoke(make_event(LIST, headers={"origin": None})))


def test_origin_present_with_list_unset_is_403(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_ALLOWED_ORIGINS=None)
    assert_error(invoke(make_event(LIST, headers={"origin": "https://app.example.com"})), 403)
    assert_error(invoke(make_event(LIST, headers={"origin": "null"})), 403)


def test_origin_listed_is_allowed_and_others_are_403(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_ALLOWED_ORIGINS="https://app.example.com, https://other.example.org")
    allowed = make_event(search(), headers={"origin": "https://app.example.com"})
    assert "policies/refunds.md" in hit_sources(invoke(allowed))
    assert_ok(invoke(make_event(LIST, headers={"origin": "https://other.example.org"})))
    assert_ok(invoke(make_event(LIST, headers={"origin": "HTTPS://APP.EXAMPLE.COM"})))  # case-insensitive
    assert_error(invoke(make_event(LIST, headers={"origin": "https://evil.example.com"})), 403)
    assert_error(invoke(make_event(LIST, headers={"origin": "http://app.example.com"})), 403)
    # A rejected Origin is rejected before the method rule is applied.
    assert_error(invoke(make_event(None, method="GET", headers={"origin": "https://evil.example.com"})), 403)


@pytest.mark.parametrize("host", [API_HOST, "api.example.com", "evil.example.net:8443", "127.0.0.1:3000"])
def test_host_not_checked_by_default(lam: Callable[..., Invoke], host: str) -> None:
    invoke = lam(LANCELOT_ALLOWED_HOSTS=None)
    assert_ok(invoke(make_event(LIST, headers={"host": host})))


def test_allowed_hosts_when_set(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_ALLOWED_HOSTS="api.example.com")
    assert_ok(invoke(make_event(LIST, headers={"host": "api.example.com"})))
    assert_ok(invoke(make_event(LIST, headers={"host": "API.Example.COM"})))
    assert_error(invoke(make_event(LIST, headers={"host": API_HOST})), 403)
    assert_error(invoke(make_event(LIST, headers={"host": "api.example.com.evil.net"})), 403)
    assert_error(invoke(make_event(LIST, headers={"host": None})), 403)


# -- 5. MCP-Protocol-Version --------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1999-01-01", "2025-13-45", "latest"])
def test_unsupported_protocol_version_is_400(lam: Callable[..., Invoke], version: str) -> None:
    invoke = lam()
    error = assert_error(invoke(make_event(LIST, headers={"mcp-protocol-version": version})), 400)
    assert version in error["message"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", None])
def test_supported_or_missing_protocol_version(lam: Callable[..., Invoke], version: str | None) -> None:
    invoke = lam()
    response = invoke(make_event(search(), headers={"mcp-protocol-version": version}))
    assert hit_sources(response)[0] == "policies/refunds.md"


# -- 6. warm invocations ------------------------------------------------------------------------


def test_warm_invocations_reuse_handler_engine_and_connection(
    lam: Callable[..., Invoke], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lancedb

    calls: list[str] = []
    real_connect = lancedb.connect

    def counting_connect(uri: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(uri))
        return real_connect(uri, *args, **kwargs)

    monkeypatch.setattr(lancedb, "connect", counting_connect)
    invoke = lam()
    assert aws_lambda._handler is None

    assert hit_sources(invoke(make_event(search("refund"))))[0] == "policies/refunds.md"
    first = aws_lambda._handler
    assert first is not None
    engines = find_engines(first.app)
    assert len(engines) == 1, engines
    engine = engines[0]
    db = engine._db
    assert db is not None, "the first tool call opens the connection"

    assert "policies/shipping.md" in hit_sources(invoke(make_event(search("shipping"))))
    assert_ok(invoke(make_event(rpc("tools/call", {"name": "lancedb_status", "arguments": {}}))))
    assert aws_lambda.handler(make_event(search("warranty")), None)["statusCode"] == 200

    assert aws_lambda._handler is first
    assert find_engines(aws_lambda._handler.app) == [engine]
    assert engine._db is db
    assert len(calls) == 1, calls


def test_cold_start_after_reset_builds_a_new_handler(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    assert_ok(invoke(make_event(LIST)))
    first = aws_lambda._handler
    invoke = lam()  # a new execution environment
    assert_ok(invoke(make_event(LIST)))
    assert aws_lambda._handler is not None and aws_lambda._handler is not first


def test_settings_are_read_once_per_execution_environment(
    lam: Callable[..., Invoke], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Environment variables of a Lambda do not change while it is warm; the built handler keeps its own."""
    invoke = lam(LANCELOT_BASE_PATH="/lancelot")
    assert_ok(invoke(make_event(LIST, path="/lancelot")))
    monkeypatch.setenv("LANCELOT_BASE_PATH", "/elsewhere")
    assert_ok(invoke(make_event(LIST, path="/lancelot")))


def test_errors_do_not_poison_warm_handler(lam: Callable[..., Invoke]) -> None:
    invoke = lam()
    assert_error(invoke(make_event("garbage")), 400)
    assert_error(invoke(make_event(padded(LIST, MAX_BODY + 1))), 413)
    assert_error(invoke(make_event(None, method="GET")), 405)
    unknown = rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "x", "table": "nope"}})
    result = assert_ok(invoke(make_event(unknown)))
    assert result["isError"] is True
    assert hit_sources(invoke(make_event(search("refund"))))[0] == "policies/refunds.md"


def test_database_path_unset_or_missing(lam: Callable[..., Invoke], tmp_path: Path) -> None:
    invoke = lam(LANCEDB_PATH=None)
    missing = tmp_path / "no-such-db"
    assert_ok(invoke(make_event(LIST)))
    result = assert_ok(invoke(make_event(search())))
    assert result["isError"] is True and "LANCEDB_PATH" in result["content"][0]["text"]

    invoke = lam(LANCEDB_PATH=str(missing))
    result = assert_ok(invoke(make_event(search())))
    assert result["isError"] is True and "does not exist" in result["content"][0]["text"]
    assert not missing.exists(), "a read-only server must not create the database folder"


# -- 7. writes only under /tmp ------------------------------------------------------------------


def test_config_dir_defaults_to_tmp(lam: Callable[..., Invoke]) -> None:
    invoke = lam(LANCELOT_CONFIG_DIR=None)
    assert "LANCELOT_CONFIG_DIR" not in os.environ
    assert_ok(invoke(make_event(LIST)))
    assert os.environ["LANCELOT_CONFIG_DIR"] == "/tmp/lancelot"
    engine = find_engines(aws_lambda._handler.app)[0]
    assert Path(engine.settings.config_dir) == Path("/tmp/lancelot")


def test_config_dir_already_set_is_kept(lam: Callable[..., Invoke], isolated_env: Path) -> None:
    invoke = lam()
    assert_ok(invoke(make_event(LIST)))
    assert os.environ["LANCELOT_CONFIG_DIR"] == str(isolated_env)


def test_database_and_home_and_cwd_unchanged(
    lam: Callable[..., Invoke], sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    cwd = tmp_path / "task"  # like /var/task: read-only in Lambda
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.chdir(cwd)
    before = hash_tree(sample_db)
    assert before
    invoke = lam(LANCELOT_CONFIG_DIR=None)

    calls = [
        search("refund"),
        search("warranty", limit=3, searchType="text"),
        search("anything", searchType="vector"),  # no key: falls back to text, still read-only
        rpc("tools/call", {"name": "lancedb_query", "arguments": {"question": "refund"}}),
        rpc("tools/call", {"name": "lancedb_query", "arguments": {"question": "x", "warmStart": True}}),
        rpc("tools/call", {"name": "lancedb_status", "arguments": {"verbose": True}}),
        rpc("tools/call", {"name": "lancedb_version", "arguments": {}}),
        rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": "x", "table": "missing"}}),
        LIST,
    ]
    for message in calls:
        assert invoke(make_event(message))["statusCode"] == 200
    for bad in (make_event("nope"), make_event(None, method="DELETE"), make_event(padded(LIST, MAX_BODY + 1))):
        assert invoke(bad)["statusCode"] >= 400

    assert hash_tree(sample_db) == before
    assert list(home.rglob("*")) == []
    assert list(cwd.rglob("*")) == []
    assert os.environ["LANCELOT_CONFIG_DIR"].startswith("/tmp/")


# -- malformed events (issue 27 #7) ---------------------------------------------------------------


def _broken(change: Callable[[dict[str, Any]], Any]) -> Any:
    event = make_event(rpc("tools/list"))
    return change(event)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(event: dict[str, Any]) -> dict[str, Any]:
        event[key] = value
        return event

    return change


MALFORMED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "bad-base64": lambda e: {**e, "isBase64Encoded": True, "body": "!!!not base64"},
    "none": lambda e: None,
    "int": lambda e: 42,
    "list": lambda e: [],
    "headers-null": _set("headers", None),
    "no-request-context-http": lambda e: {
        **e,
        "requestContext": {k: v for k, v in e["requestContext"].items() if k != "http"},
    },
    "no-request-context": lambda e: {k: v for k, v in e.items() if k != "requestContext"},
    "header-value-int": lambda e: {**e, "headers": {**e["headers"], "x-number": 5}},
    "cookies-null": _set("cookies", None),
    "cookies-not-strings": _set("cookies", [1, None]),
    "body-int": _set("body", 5),
    "query-null": _set("rawQueryString", None),
    "method-null": lambda e: {
        **e,
        "requestContext": {**e["requestContext"], "http": {**e["requestContext"]["http"], "method": None}},
    },
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_event_gets_a_400_with_a_json_rpc_error(lam: Callable[..., Invoke], kind: str) -> None:
    invoke = lam()
    event = _broken(MALFORMED[kind])
    if kind == "cookies-null":  # null for "no cookies": served
        assert invoke(event)["statusCode"] == 200
        return
    if kind == "headers-null":  # null for "no headers": answered by the HTTP rules (no Content-Type)
        response = invoke(event)
        assert response["statusCode"] == 415 and "Content-Type" in body_json(response)["error"]["message"]
        return
    response = invoke(event)
    assert response["statusCode"] == 400, response
    error = body_json(response)["error"]
    assert error["code"] == -32600 and "not an API Gateway HTTP API event" in error["message"]
    assert invoke(make_event(rpc("tools/list")))["statusCode"] == 200  # and the next request is served
