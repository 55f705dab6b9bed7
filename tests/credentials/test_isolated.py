"""Credentials reach an isolated pack's child per call: only the tool's, only the principal's.

The pack runs in a real child process (``[packs.NAME] isolate = true``); the host resolves
the tool's declared credentials for the call's principal and sends those values with the
call; the child never opens the store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Principal, ToolContext
from toolpacks.host.credentials._store import SqliteCredentialStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

PACK = """
import os
from toolpacks import ToolContext, hookimpl, tool

@tool(credentials=["github"])
def gh_token(ctx: ToolContext) -> str:
    '''The GitHub token of the call's principal, and whether the store is reachable here.'''
    return ctx.credential("github") + " pid=" + str(os.getpid())

@tool(credentials=["github"])
def greedy(ctx: ToolContext) -> str:
    '''Ask for a credential it did not declare.'''
    return ctx.credential("slack")

@hookimpl
def register_tools(register):
    register(gh_token)
    register(greedy)
"""


def test_an_isolated_pack_gets_each_principals_own(site: Any, dirs: dict[str, Path]) -> None:
    """Alice's and bob's calls reach the child with their own values; carol's is refused."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice_iso_1")
    store.set("github", "bob", "ghp_bob_iso_2")
    store.set("slack", "alice", "xoxb-alice-never-sent")
    site.pack("iso", PACK)
    config = {
        "packs": {"iso": {"isolate": True}},
        "credentials": {"github": {"kind": "secret"}, "slack": {"kind": "secret"}},
    }
    with site.host(config) as host:
        toolset = host.toolset()

        def call(name: str, who: str) -> Any:
            context = ToolContext(principal=Principal(who))
            return asyncio.run(asyncio.wait_for(toolset.call(name, {}, context), 120))

        alice, bob = call("gh_token", "alice"), call("gh_token", "bob")
        assert not alice.is_error, alice.error
        assert alice.value.startswith("ghp_alice_iso_1 pid=")
        assert bob.value.startswith("ghp_bob_iso_2 pid=")
        assert alice.value.split("pid=")[1] != str(__import__("os").getpid())  # a child ran it
        carol = call("gh_token", "carol")
        assert carol.is_error
        assert "toolpacks credentials set github --subject carol" in carol.error.message
        greedy = call("greedy", "alice")
        assert greedy.is_error
        assert "xoxb" not in greedy.error.message
