"""An isolated pack's tool sees the call's principal (issue 31), relayed only to our child.

The host sends the principal's subject and scopes in the call's ``_meta`` over the pipe to
the child it started (``serve --pack``); the child makes the call's ``ToolContext.principal``
from it. A server that is not such a child ignores a principal a client writes there, and a
connection that does not relay (a mounted MCP server) sends none.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolpacks import Principal, ToolContext
from toolpacks.core._credentials import PRINCIPAL_META_KEY, relayed_meta
from toolpacks.host.credentials._relay import CHILD, take

PACK = """
import os
from toolpacks import ToolContext, hookimpl, tool

@tool
def whoami(ctx: ToolContext) -> str:
    '''Who the call is for, as the tool in the child sees it.'''
    p = ctx.principal
    who = "nobody" if p is None else p.subject + ":" + ",".join(sorted(p.scopes))
    return who + " pid=" + str(os.getpid())

@tool(scopes=["repo.read"])
def read_repo(ctx: ToolContext) -> str:
    '''A tool needing the repo.read scope.'''
    return "read for " + ctx.principal.subject

@hookimpl
def register_tools(register):
    register(whoami)
    register(read_repo)
"""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_isolated_tool_sees_the_calls_principal(site: Any, dirs: dict[str, Path]) -> None:
    """Alice's subject and scopes reach the child; a scoped tool runs there with the scope."""
    site.pack("isowho", PACK)
    with site.host({"packs": {"isowho": {"isolate": True}}}) as host:
        toolset = host.toolset()

        def call(name: str, principal: Principal | None) -> Any:
            context = ToolContext(principal=principal) if principal else None
            return asyncio.run(asyncio.wait_for(toolset.call(name, {}, context), 120))

        alice = call("whoami", Principal("alice", scopes={"repo.read", "b"}))
        assert not alice.is_error, alice.error
        who, pid = alice.value.split(" pid=")
        assert who == "alice:b,repo.read"
        assert pid != str(os.getpid())  # the child ran it
        assert call("whoami", Principal("bob")).value.startswith("bob: pid=")
        assert call("whoami", None).value.startswith("nobody pid=")  # nothing kept across
        allowed = call("read_repo", Principal("alice", scopes={"repo.read"}))
        assert not allowed.is_error, allowed.error
        assert allowed.value == "read for alice"
        lacking = call("read_repo", Principal("bob", scopes={"other"}))
        assert lacking.is_error
        assert "missing scope repo.read" in lacking.error.message
        assert call("read_repo", None).is_error  # fail closed without a principal
        # The host knows the child's tool's scopes: its views hide it before any child call.
        assert "read_repo" not in toolset.for_principal(Principal("bob")).names()
        assert "read_repo" in toolset.for_principal(Principal("a", scopes={"repo.read"})).names()


def _tag(principal: Principal | None) -> Any:
    return SimpleNamespace(context=ToolContext(principal=principal))


def test_only_a_relaying_connection_sends_the_principal() -> None:
    """Our own child's connection sends subject and scopes; any other sends nothing."""
    alice = Principal("alice", scopes={"x", "a"}, claims={"email": "a@example.com"})
    meta = relayed_meta(_tag(alice), True)
    assert meta == {PRINCIPAL_META_KEY: {"subject": "alice", "scopes": ["a", "x"]}}
    assert relayed_meta(_tag(alice), False) is None  # a mounted MCP server gets none
    assert relayed_meta(_tag(None), True) is None


def test_only_an_isolated_child_believes_a_relayed_principal() -> None:
    """A principal in a request's _meta counts only in a child serving --pack."""
    params = {"name": "t", "_meta": {PRINCIPAL_META_KEY: {"subject": "eve", "scopes": ["s"]}}}
    assert take(params) is None  # any other server: a client cannot claim to be someone
    reset = CHILD.set(True)
    try:
        assert take(params) == Principal("eve", scopes={"s"})
        bad = {"_meta": {PRINCIPAL_META_KEY: {"subject": "", "scopes": ["s"]}}}
        assert take(bad) is None
        assert take({"_meta": {PRINCIPAL_META_KEY: {"subject": "e", "scopes": [1]}}}) is None
    finally:
        CHILD.reset(reset)
