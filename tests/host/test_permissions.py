"""Permissions: allowed agents, approval (handlers, once/always) and authorize hooks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from toolpacks import Host, ToolContext, tool
from toolpacks.host._approval import ApprovalRequest
from toolpacks.testing import call


@tool(allowed_agents=["admin"])
def shutdown() -> str:
    """Shut the system down."""
    return "bye"


@tool(require_approval=True)
def pay(amount: int) -> str:
    """Pay an amount."""
    return f"paid {amount}"


@tool
def read() -> str:
    """Read something harmless."""
    return "data"


@pytest.fixture
def ops(pack_of: Callable[..., Any]) -> Any:
    """A pack with an admin-only tool, an approval-requiring tool and a harmless one."""
    return pack_of(shutdown, pay, read)


_AGENTS = {"agents": {"admin": {}, "bob": {}, "guest": {}}}
"""Agents must be defined to be named: an unknown agent is a configuration error."""


def _host(ops: Any, config: dict[str, Any] | None = None, **options: Any) -> Host:
    host = Host({**_AGENTS, **(config or {})}, discover=False, **options)
    host.add_pack(ops, "ops")
    return host


# -- allowed_agents -----------------------------------------------------------------------------


def test_allowed_agents_enforced_at_build(ops: Any) -> None:
    """A tool limited to some agents is absent from every other agent's toolset."""
    host = _host(ops)
    assert "shutdown" in host.toolset("admin")
    assert "shutdown" not in host.toolset("guest")
    assert "shutdown" not in host.toolset()


def test_allowed_agents_enforced_at_call(ops: Any) -> None:
    """A call whose context names another agent is denied, even in the admin's toolset."""
    ts = _host(ops).toolset("admin")
    assert call(ts, "shutdown").value == "bye"
    result = call(ts, "shutdown", context=ToolContext(agent_id="intruder"))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not available to agent 'intruder'" in result.content


# -- require_approval ---------------------------------------------------------------------------


def test_approval_without_handler_denies_and_tells_the_model(ops: Any) -> None:
    """Without an approval handler, a call needing approval is denied with an explanation."""
    result = call(_host(ops).toolset(), "pay", {"amount": 3})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "requires approval" in result.content
    assert "not approved" in result.content


def test_sync_handler_approves(ops: Any) -> None:
    """A sync handler answering True lets the call run; it sees the request details."""
    requests: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        requests.append(request)
        return True

    ts = _host(ops, approval=approve).toolset("admin")
    assert call(ts, "pay", {"amount": 5}).value == "paid 5"
    (request,) = requests
    assert request.qualified_name == "ops.pay"
    assert request.tool == "pay"
    assert request.arguments == {"amount": 5}
    assert request.agent_id == "admin"


def test_async_handler_denies(ops: Any) -> None:
    """An async handler is awaited; False denies the call."""

    async def deny(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return False

    result = call(_host(ops, approval=deny).toolset(), "pay", {"amount": 5})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"


def test_handler_on_toolset_overrides_host(ops: Any) -> None:
    """An approval handler given to toolset() wins over the host's."""
    host = _host(ops, approval=lambda r: False)
    assert call(host.toolset(approval=lambda r: True), "pay", {"amount": 1}).value == "paid 1"


def test_once_asks_every_time(ops: Any) -> None:
    """An answer of "once" approves only that call: the next call asks again."""
    asked: list[int] = []

    def once(request: ApprovalRequest) -> str:
        asked.append(1)
        return "once"

    ts = _host(ops, approval=once).toolset()
    call(ts, "pay", {"amount": 1})
    call(ts, "pay", {"amount": 2})
    assert len(asked) == 2


def test_always_is_remembered_per_toolset(ops: Any) -> None:
    """An answer of "always" approves later calls of that tool without asking again."""
    asked: list[int] = []

    def always(request: ApprovalRequest) -> str:
        asked.append(1)
        return "always"

    host = _host(ops, approval=always)
    ts = host.toolset()
    assert call(ts, "pay", {"amount": 1}).value == "paid 1"
    assert call(ts, "pay", {"amount": 2}).value == "paid 2"
    assert len(asked) == 1
    call(host.toolset(), "pay", {"amount": 3})  # a new toolset asks afresh
    assert len(asked) == 2


def test_deny_answer_denies(ops: Any) -> None:
    """An answer of "deny" refuses the call."""
    result = call(_host(ops, approval=lambda r: "deny").toolset(), "pay", {"amount": 1})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not approved" in result.content


def test_handler_that_raises_denies(ops: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A handler that raises denies the call (fail closed) and is logged."""

    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("handler bug")

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = call(_host(ops, approval=broken).toolset(), "pay", {"amount": 1})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "approval handler failed" in caplog.text


def test_agent_config_require_approval_true(ops: Any) -> None:
    """``require_approval = true`` for an agent makes every tool ask."""
    host = _host(ops, {"agents": {"careful": {"require_approval": True}}})
    result = call(host.toolset("careful"), "read")
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "requires approval" in result.content
    assert not call(host.toolset("careful", approval=lambda r: True), "read").is_error


def test_agent_config_require_approval_list(ops: Any) -> None:
    """``require_approval = ["ops.read"]`` makes only that tool ask."""
    host = _host(ops, {"agents": {"careful": {"require_approval": ["ops.read"]}}})
    ts = host.toolset("careful")
    assert [e.exposed for e in ts.entries() if e.require_approval] == ["pay", "read"]
    result = call(ts, "read")
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "requires approval" in result.content


def test_require_approval_with_unknown_tool_is_a_config_error(ops: Any) -> None:
    """A typo in the approval list is an error, not a silently unprotected tool."""
    from toolpacks import ConfigError

    host = _host(ops, {"agents": {"careful": {"require_approval": ["ops.reed"]}}})
    with pytest.raises(ConfigError, match=r"require_approval names unknown tool\(s\) ops\.reed"):
        host.toolset("careful")


# -- authorize hooks ----------------------------------------------------------------------------


def test_host_authorize_deny(ops: Any) -> None:
    """An authorize hook answering "deny" refuses the call with a policy message."""
    host = _host(ops)
    host.hook("authorize")(lambda tool, arguments, context: "deny")
    result = call(host.toolset(), "read")
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not permitted by policy" in result.content


def test_host_authorize_ask_sends_to_handler(ops: Any) -> None:
    """An answer of "ask" sends a call that does not require approval to the handler."""
    reasons: list[str] = []

    def handler(request: ApprovalRequest) -> bool:
        reasons.append(request.reason)
        return False

    host = _host(ops, approval=handler)
    host.hook("authorize")(lambda tool, arguments, context: "ask")
    result = call(host.toolset(), "read")
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not approved" in result.content
    assert reasons == ["an authorize hook asked for approval"]


def test_authorize_allow_does_not_bypass_required_approval(ops: Any) -> None:
    """Answering "allow" ends the hook chain; required approval is still asked for."""
    host = _host(ops)
    host.hook("authorize")(lambda tool, arguments, context: "allow")
    assert call(host.toolset(), "read").value == "data"
    result = call(host.toolset(), "pay", {"amount": 1})
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "requires approval" in result.content


def test_first_non_none_authorize_answer_wins(ops: Any, pack_of: Callable[..., Any]) -> None:
    """Host hooks are asked first, then pack hooks; the first non-None answer decides."""
    order: list[str] = []

    def abstain(tool: Any, arguments: Any, context: Any) -> None:
        order.append("host-none")

    def allow(tool: Any, arguments: Any, context: Any) -> str:
        order.append("host-allow")
        return "allow"

    def pack_deny(tool: Any, arguments: Any, context: Any) -> str:
        order.append("pack-deny")
        return "deny"

    host = _host(ops)
    host.add_pack(pack_of(authorize=pack_deny), "policy")
    result = call(host.toolset(), "read")  # the pack's deny is the first answer
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not permitted by policy" in result.content
    assert order == ["pack-deny"]
    order.clear()
    host.hook("authorize")(abstain)
    host.hook("authorize")(allow)
    assert call(host.toolset(), "read").value == "data"
    assert order == ["host-none", "host-allow"]


def test_authorize_sees_agent_and_arguments(ops: Any) -> None:
    """Authorize hooks get the tool, the arguments (also from JSON text) and the agent id."""
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    async def record(tool: Any, arguments: dict[str, Any], context: ToolContext) -> None:
        seen.append((tool.name, arguments, context.agent_id))

    host = _host(ops, approval=lambda r: True)
    host.hook("authorize")(record)
    call(host.toolset("bob"), "pay", '{"amount": 7}')
    assert seen == [("pay", {"amount": 7}, "bob")]


def test_authorize_hook_with_fewer_parameters(ops: Any) -> None:
    """A hook may declare only the arguments it needs, as pluggy allows."""
    host = _host(ops)
    host.hook("authorize")(lambda tool: "deny" if tool.name == "read" else None)
    result = call(host.toolset(), "read")
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not permitted by policy" in result.content


def test_authorize_hook_with_unknown_parameter_is_refused(ops: Any) -> None:
    """A hook asking for an argument the event does not provide is refused at registration."""
    host = _host(ops)
    with pytest.raises(TypeError, match="takes agent"):
        host.hook("authorize")(lambda tool, agent: None)


def test_invalid_authorize_answer_denies(ops: Any, caplog: pytest.LogCaptureFixture) -> None:
    """An answer other than allow/deny/ask/None denies the call (fail closed) and is logged."""
    host = _host(ops)
    host.hook("authorize")(lambda tool: True)
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = call(host.toolset(), "read")
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "denied"
    assert "not permitted by policy" in result.content
    assert "expected one of allow, deny, ask" in caplog.text


def test_tagged_authorize_hook_answers_only_for_its_tags(pack_of: Callable[..., Any]) -> None:
    """An authorize hook registered with tags only answers for tools sharing one."""

    @tool(tags=["danger"])
    def risky() -> str:
        """Do something risky."""
        return "risky"

    host = Host({}, discover=False)
    host.add_pack(pack_of(risky, read), "p")
    host.hook("authorize", tags=["danger"])(lambda tool: "deny")
    ts = host.toolset()
    result = call(ts, "risky")
    assert result.error is not None
    assert result.error.kind == "denied"
    assert call(ts, "read").value == "data"


def test_unknown_hook_event_is_refused() -> None:
    """host.hook() with an unknown event lists the valid ones."""
    with pytest.raises(ValueError, match="before_invoke, after_invoke"):
        Host({}, discover=False).hook("before_call")
