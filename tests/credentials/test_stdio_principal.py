"""Credentials over stdio with a configured principal (issue 34), through the official client.

``toolpacks serve --principal alice`` serves alice's view: a tool declaring
``credentials=["github"]`` gets alice's value from the store. Two server processes, one for
alice and one for bob, run at once: each gets its own value, and a subject with none gets
the how-to-connect result naming the command and nothing of anyone else's.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from toolpacks.host.credentials._store import SqliteCredentialStore

pytestmark = [pytest.mark.timeout(120)]

PACK = '''
from toolpacks import ToolContext, hookimpl, tool


@tool(credentials=["github"])
def gh_token(context: ToolContext) -> str:
    """The caller's GitHub token."""
    return context.principal.subject + "=" + context.credential("github")


@hookimpl
def register_tools(register):
    register(gh_token)
'''

CONFIG = """
[agents.dev]
packs = ["credpack"]

[credentials.github]
kind = "secret"
"""


def _site(root: Path) -> Path:
    directory = root / "site"
    directory.mkdir()
    (directory / "credpack_mod.py").write_text(textwrap.dedent(PACK))
    dist = directory / "toolpacks_credpack-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpacks-credpack\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[toolpacks]\ncredpack = credpack_mod\n")
    (directory / "toolpacks.toml").write_text(CONFIG)
    return directory


async def _call_as(directory: Path, subject: str | None) -> mcp_types.CallToolResult:
    """``gh_token`` over stdio, served with ``--principal SUBJECT`` (None: no principal)."""
    keys = ("TOOLPACKS_STATE_DIR", "TOOLPACKS_CACHE_DIR", "XDG_CONFIG_HOME", "TOOLPACKS_TRUST_FILE")
    env = {"PYTHONPATH": str(directory), **{k: os.environ[k] for k in keys}}
    config = str(directory / "toolpacks.toml")
    args = ["-m", "toolpacks", "serve", "--agent", "dev", "--config", config]
    if subject is not None:
        args += ["--principal", subject]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with (directory / f"serve-{subject or 'anonymous'}.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await client.call_tool("gh_token", {})


def _text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


def test_each_stdio_principal_gets_its_own_credential(tmp_path: Path) -> None:
    """Alice's and bob's servers run at once, each call gets its principal's value."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice_stdio_1")
    store.set("github", "bob", "ghp_bob_stdio_2")
    directory = _site(tmp_path)

    async def both() -> list[mcp_types.CallToolResult]:
        calls = (_call_as(directory, who) for who in ("alice", "bob", "carol"))
        return list(await asyncio.wait_for(asyncio.gather(*calls), 90))

    alice, bob, carol = asyncio.run(both())
    assert not alice.is_error, _text(alice)
    assert _text(alice) == "alice=ghp_alice_stdio_1"
    assert not bob.is_error, _text(bob)
    assert _text(bob) == "bob=ghp_bob_stdio_2"
    assert carol.is_error
    assert "toolpacks credentials set github --subject carol" in _text(carol)
    assert "ghp_" not in _text(carol)


def test_without_a_principal_no_credential_is_served(tmp_path: Path) -> None:
    """No --principal: the tool gets nobody's value."""
    SqliteCredentialStore().set("github", "alice", "ghp_alice_stdio_3")
    directory = _site(tmp_path)

    result = asyncio.run(asyncio.wait_for(_call_as(directory, None), 60))
    assert result.is_error
    assert "ghp_" not in _text(result)
