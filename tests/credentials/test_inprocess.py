"""Per-user credentials in-process: each principal gets its own value, never another's."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Principal, ToolContext, tool
from toolpacks.exceptions import ConfigError
from toolpacks.host.credentials._store import SqliteCredentialStore
from toolpacks.testing import make_host

ALICE, BOB, CAROL = Principal("alice"), Principal("bob"), Principal("carol")
CONFIG = {"credentials": {"github": {"kind": "secret", "description": "a GitHub token"}}}


@tool(credentials=["github"])
def whoami(ctx: ToolContext) -> str:
    """Say which GitHub token the call received."""
    return f"token={ctx.credential('github')}"


@tool(credentials=["github"])
def greedy(ctx: ToolContext) -> str:
    """Ask for a credential the tool did not declare."""
    return ctx.credential("slack")


@tool(credentials=["github"])
def leaky(ctx: ToolContext) -> str:
    """Log the token at DEBUG (what a careless tool does)."""
    logging.getLogger("toolpacks.tool").debug("using token %s", ctx.credential("github"))
    return "ok"


@tool
def plain(ctx: ToolContext) -> str:
    """A tool that declares no credential, and asks anyway."""
    return ctx.credential("github")


@pytest.fixture
def toolset(pack_of: Any) -> Any:
    """A toolset of the three tools, with alice's and bob's tokens stored."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice_secret_value_1")
    store.set("github", "bob", "ghp_bob_secret_value_22")
    host = make_host(pack_of(whoami, greedy, plain, leaky), names=["gh"], config=CONFIG)
    return host.toolset()


def test_each_principal_gets_its_own_value(toolset: Any) -> None:
    """Alice's call sees alice's token, bob's bob's, on Toolset.call and call_sync."""
    alice = toolset.call_sync("whoami", {}, ToolContext(principal=ALICE))
    bob = toolset.call_sync("whoami", {}, ToolContext(principal=BOB))
    assert alice.value == "token=ghp_alice_secret_value_1"
    assert bob.value == "token=ghp_bob_secret_value_22"


def test_each_principal_gets_its_own_value_async(toolset: Any, run: Any) -> None:
    """The same through ``await Toolset.call``, interleaved."""
    import asyncio

    async def calls() -> list[Any]:
        principals = (ALICE, BOB, ALICE, BOB)
        return await asyncio.gather(
            *(toolset.call("whoami", {}, ToolContext(principal=p)) for p in principals)
        )

    results = run(calls())
    assert [r.value[-2:] for r in results] == ["_1", "22", "_1", "22"]


def test_a_principal_without_one_is_told_how_to_connect(toolset: Any) -> None:
    """Carol has none: the result names the credential and the command, and holds no value."""
    result = toolset.call_sync("whoami", {}, ToolContext(principal=CAROL))
    assert result.is_error
    message = result.error.message
    assert "github" in message
    assert "toolpacks credentials set github --subject carol" in message
    assert "ghp_" not in message
    assert "alice" not in message
    assert "bob" not in message


def test_no_principal_is_refused(toolset: Any) -> None:
    """A call with no principal fails closed, naming what is missing."""
    result = toolset.call_sync("whoami", {})
    assert result.is_error
    assert "no principal" in result.error.message
    assert "ghp_" not in result.error.message


def test_an_undeclared_credential_is_never_given(toolset: Any) -> None:
    """A tool asking for a credential it did not declare gets an error, not a value."""
    result = toolset.call_sync("greedy", {}, ToolContext(principal=ALICE))
    assert result.is_error
    assert "did not declare" in result.error.message
    result = toolset.call_sync("plain", {}, ToolContext(principal=ALICE))
    assert result.is_error
    assert "carries none" in result.error.message
    assert "ghp_" not in result.error.message


def test_the_tool_invoked_directly_gets_nothing(run: Any) -> None:
    """``Tool.invoke`` outside a toolset resolves no credential: an error result."""
    result = run(whoami.invoke({}, ToolContext(principal=ALICE)))
    assert result.is_error
    assert "carries none" in result.error.message


def test_an_undefined_credential_is_a_config_error(pack_of: Any) -> None:
    """A tool declaring a credential no [credentials] table defines fails the toolset."""
    host = make_host(pack_of(whoami), names=["gh"])
    with pytest.raises(ConfigError, match=r"\[credentials\.github\]"):
        host.toolset()


def test_plaintext_nowhere_on_disk_nor_in_debug_logs(
    toolset: Any, dirs: dict[str, Path], plaintext_in: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Stored and used, a value is in no file under the state, cache or config directories.

    Nor in any log record at DEBUG, a tool logging it included.
    """
    caplog.set_level(logging.DEBUG)
    result = toolset.call_sync("whoami", {}, ToolContext(principal=ALICE))
    assert result.value.endswith("_1")
    assert toolset.call_sync("leaky", {}, ToolContext(principal=ALICE)).value == "ok"
    assert "using token" in caplog.text
    assert plaintext_in(list(dirs.values()), "ghp_alice_secret_value_1") == []
    assert any(dirs["state"].iterdir())  # the store is there, encrypted
    assert "ghp_alice_secret_value_1" not in caplog.text


def test_the_served_copy_keeps_the_credentials(toolset: Any) -> None:
    """The copy an MCP server makes (other error exposure) still resolves credentials."""
    from toolpacks.mcp._direct import policy_toolset

    served = policy_toolset(toolset, True, None)
    assert served is not toolset
    result = served.call_sync("whoami", {}, ToolContext(principal=BOB))
    assert result.value == "token=ghp_bob_secret_value_22"
