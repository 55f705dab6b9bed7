"""Policies and host settings that hand-made mutants showed no test pinned (issue 27).

An "always" approval covers the one tool it was given for; a secret marked only by
``writeOnly`` in the schema is masked for every policy; the ``[settings]`` argument caps of a
host reach the gate on every road a toolset call takes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from pydantic import Field

from toolpacks import ArgumentLimits, CallOptions, Host, Tool, ToolContext, Toolset, hookimpl, tool
from toolpacks.core._secrets import MASK
from toolpacks.host._approval import ApprovalRequest
from toolpacks.host._toolset import ToolEntry
from toolpacks.testing import call

SECRET = "tok-4f1c-very-secret-77"

ran: list[str] = []
"""The tools that ran, in order."""


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


# -- "always" is scoped to the tool it was given for ---------------------------------------------


@tool(require_approval=True)
def pay(amount: int) -> str:
    """Pay an amount."""
    ran.append("pay")
    return f"paid {amount}"


@tool(require_approval=True)
def wire(amount: int) -> str:
    """Wire an amount abroad."""
    ran.append("wire")
    return f"wired {amount}"


class _Handler:
    """An approval handler answering from a table, recording what it was asked."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, request: ApprovalRequest) -> str:
        self.asked.append(request.tool)
        return self.answers.get(request.tool, "deny")


def test_always_for_one_tool_does_not_approve_another(pack_of: Callable[..., Any]) -> None:
    """After "always" for ``pay``, a call of ``wire`` still goes to the handler, and is denied."""
    handler = _Handler({"pay": "always"})
    host = Host({}, discover=False, approval=handler)
    host.add_pack(pack_of(pay, wire), "bank")
    ts = host.toolset()
    assert call(ts, "pay", {"amount": 1}).value == "paid 1"
    denied = call(ts, "wire", {"amount": 2})
    assert denied.error is not None
    assert denied.error.kind == "denied"
    assert call(ts, "pay", {"amount": 3}).value == "paid 3"
    assert handler.asked == ["pay", "wire"]
    assert ran == ["pay", "pay"]


def test_always_covers_the_tool_by_either_of_its_names() -> None:
    """An "always" for the exposed name holds when the tool is called by qualified name."""
    handler = _Handler({"pay": "always"})
    ts = Toolset([ToolEntry("pay", "bank.pay", "bank", pay, require_approval=True)])
    ts.approver.handler = handler
    assert call(ts, "pay", {"amount": 1}).value == "paid 1"
    assert call(ts, "bank.pay", {"amount": 2}).value == "paid 2"
    assert handler.asked == ["pay"]


def test_always_is_per_exposed_name_for_a_tool_exposed_twice() -> None:
    """One tool under two exposed names (say, two roles) gets an "always" per name."""
    handler = _Handler({"pay_small": "always", "pay_large": "once"})
    ts = Toolset(
        [
            ToolEntry("pay_small", "bank.pay", "bank", pay, require_approval=True),
            ToolEntry("pay_large", "bank.pay", "bank", pay, require_approval=True),
        ],
        approval=handler,
    )
    for name in ("pay_small", "pay_large", "pay_small", "pay_large"):
        assert call(ts, name, {"amount": 1}).value == "paid 1"
    assert handler.asked == ["pay_small", "pay_large", "pay_large"]


def test_always_from_an_ask_decision_is_scoped_too(pack_of: Callable[..., Any]) -> None:
    """An authorize hook's "ask" answered "always" covers only that tool."""

    @tool
    def read() -> str:
        """Read."""
        ran.append("read")
        return "data"

    @tool
    def write() -> str:
        """Write."""
        ran.append("write")
        return "done"

    class Policy:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(read)
            register(write)

        @hookimpl
        def authorize(self, tool: Any, arguments: dict[str, Any], context: Any) -> str:
            return "ask"

    handler = _Handler({"read": "always"})
    host = Host({}, discover=False, approval=handler)
    host.add_pack(Policy(), "files")
    ts = host.toolset()
    assert call(ts, "read").value == "data"
    assert call(ts, "write").error is not None
    assert call(ts, "read").value == "data"
    assert handler.asked == ["read", "write"]


# -- secrets marked by writeOnly are masked for every policy ------------------------------------


@tool(require_approval=True)
def login(user: str, token: Annotated[str, Field(json_schema_extra={"writeOnly": True})]) -> str:
    """Log in with a token."""
    ran.append("login")
    return f"hello {user}"


def _login_fn(**arguments):  # type: ignore[no-untyped-def]  # untyped: schema-only tool
    ran.append("login")
    return f"hello {arguments['user']}"


def _schema_only(secret_schema: dict[str, Any]) -> Tool:
    """A tool whose only description of its arguments is a hand-written schema."""
    return Tool(
        _login_fn,
        name="login",
        description="Log in with a token.",
        require_approval=True,
        input_schema={
            "type": "object",
            "properties": {"user": {"type": "string"}, "token": secret_schema},
            "required": ["user", "token"],
        },
    )


SECRET_TOOLS = {
    "annotated-writeOnly": lambda: login,
    "schema-writeOnly": lambda: _schema_only({"type": "string", "writeOnly": True}),
    "schema-password": lambda: _schema_only({"type": "string", "format": "password"}),
}


def _recording_host(t: Tool, seen: list[tuple[str, Any]]) -> Host:
    class Policy:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(t)

        @hookimpl
        def authorize(self, tool: Any, arguments: dict[str, Any], context: Any) -> None:
            seen.append(("authorize", dict(arguments)))

        @hookimpl
        def before_invoke(self, tool: Any, arguments: dict[str, Any], context: Any) -> None:
            seen.append(("before_invoke", dict(arguments)))

    def approve(request: ApprovalRequest) -> bool:
        seen.append(("approval", dict(request.arguments)))
        return True

    host = Host({}, discover=False, approval=approve)
    host.add_pack(Policy(), "auth")
    return host


@pytest.mark.parametrize("kind", SECRET_TOOLS)
@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "json-text"])
def test_a_write_only_secret_is_masked_for_every_policy(kind: str, as_text: bool) -> None:
    """Authorize hooks, the approval handler and before_invoke hooks see a mask, not the token."""
    seen: list[tuple[str, Any]] = []
    ts = _recording_host(SECRET_TOOLS[kind](), seen).toolset()
    arguments = {"user": "ann", "token": SECRET}
    result = call(ts, "login", json.dumps(arguments) if as_text else arguments)
    assert result.value == "hello ann", result.content
    assert [who for who, _ in seen] == ["authorize", "approval", "before_invoke"]
    for who, payload in seen:
        assert payload == {"user": "ann", "token": MASK}, who


@pytest.mark.parametrize("kind", SECRET_TOOLS)
def test_a_write_only_secret_is_redacted_from_validation_errors(kind: str) -> None:
    """A secret of the wrong type is refused without its value in the message."""
    ts = _recording_host(SECRET_TOOLS[kind](), []).toolset()
    result = call(ts, "login", {"user": "ann", "token": 40414243444546})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "token" in result.content
    assert "(value redacted)" in result.content
    assert "40414243444546" not in result.content
    assert not ran


@pytest.mark.parametrize("kind", SECRET_TOOLS)
def test_a_write_only_secret_is_scrubbed_from_failure_messages(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool failing with the secret in its message sends and logs a mask (errors exposed)."""

    def leaky(**arguments: Any) -> str:
        raise ValueError(f"bad token {arguments['token']}")

    t = SECRET_TOOLS[kind]()
    failing = Tool(
        leaky,
        name="login",
        description="Log in.",
        input_schema=t.input_schema,
    )
    ts = Toolset([failing], options=CallOptions(expose_errors=True))
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = call(ts, "login", {"user": "ann", "token": SECRET})
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert f"bad token {MASK}" in result.content
    assert "bad token" in caplog.text
    assert SECRET not in result.content + caplog.text


# -- the host's [settings] caps reach the gate on every road -----------------------------------


@tool
def echo(text: str) -> str:
    """Echo a text."""
    ran.append("echo")
    return text


@tool(require_approval=True)
def guarded_echo(text: str) -> str:
    """Echo a text, with approval."""
    ran.append("guarded_echo")
    return text


LIMITED = {"settings": {"max_argument_bytes": 64, "max_argument_depth": 3}}
BIG = {"text": "x" * 200}
"""About 200 bytes of arguments: over the 64-byte cap, far under the default 1 MiB."""
DEEP = '{"text": "a", "junk": [[[["x"]]]]}'


@pytest.fixture
def limited(pack_of: Callable[..., Any]) -> Toolset:
    """A toolset of a host whose ``[settings]`` cap arguments at 64 bytes and depth 3."""
    host = Host(LIMITED, discover=False, approval=lambda request: True)
    host.add_pack(pack_of(echo, guarded_echo), "p")
    return host.toolset()


def _too_big(result: Any) -> None:
    assert result.error is not None, result.value
    assert result.error.kind == "invalid_arguments", result.content
    assert "limit of 64 bytes" in result.content or "the limit is 64" in result.content
    assert not ran


@pytest.mark.parametrize("name", ["echo", "guarded_echo"])
@pytest.mark.parametrize(
    "arguments",
    [BIG, json.dumps(BIG), json.dumps(BIG).encode()],
    ids=["dict", "json-text", "bytes"],
)
def test_settings_size_cap_applies_to_toolset_call(
    limited: Toolset, name: str, arguments: Any
) -> None:
    """A 200-byte call is refused under a 64-byte cap, as a dict, as text and as bytes."""
    _too_big(asyncio.run(limited.call(name, arguments)))


def test_settings_size_cap_applies_to_a_small_call_too(limited: Toolset) -> None:
    """The cap is the host's, not a stricter one: a call under 64 bytes runs."""
    assert call(limited, "echo", {"text": "hi"}).value == "hi"


def test_settings_depth_cap_applies_to_toolset_call(limited: Toolset) -> None:
    """Nesting deeper than ``max_argument_depth`` is refused (before the tool's own checks)."""
    result = call(limited, "echo", DEEP)
    assert result.error is not None
    assert "nested more than 3 levels deep" in result.content


def test_settings_size_cap_applies_to_call_many_and_execute(limited: Toolset) -> None:
    """Batches and provider payloads go through the same capped gate."""
    results = asyncio.run(limited.call_many([("echo", BIG), ("guarded_echo", BIG)]))
    for result in results:
        _too_big(result)
    payload = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "echo", "arguments": json.dumps(BIG)},
            }
        ],
    }
    rendered = asyncio.run(limited.execute(payload, "openai"))
    assert "limit of 64 bytes" in rendered[0]["content"]
    assert not ran


def test_settings_size_cap_applies_with_a_context(limited: Toolset) -> None:
    """A call with the application's context is capped the same way."""
    _too_big(asyncio.run(limited.call("echo", BIG, ToolContext(agent_id=None))))


@pytest.mark.parametrize("arguments", [BIG, json.dumps(BIG)], ids=["dict", "json-text"])
def test_call_options_caps_apply_on_the_short_path(arguments: Any) -> None:
    """Limits passed in ``CallOptions`` hold on the short path, directly and via a toolset."""
    from toolpacks.core.call._plan import plan_of

    options = CallOptions(limits=ArgumentLimits(max_bytes=64))
    assert plan_of(echo).fast
    _too_big(echo.invoke_sync(arguments, options=options))
    _too_big(asyncio.run(Toolset([echo], options=options).call("echo", arguments)))
    assert echo.invoke_sync({"text": "hi"}, options=options).value == "hi"
