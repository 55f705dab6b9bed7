"""``require_approval = [...]`` of a mounted MCP server: names the host exposes, fail closed.

The list may name a tool as the host exposes it (``files_read``, or ``remote.files_read``) or
by the server's own name (``files.read``). A listed name that matches no tool of the server
(a typo, or a tool the server renamed or removed, at start or after a tool-list change) makes
every tool of the server require approval, so that renaming a tool never sheds its approval.

The server is a real subprocess built with the official SDK (``MCPServer``).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host

from .test_client_lifecycle import Recorder, call, served_calls, value, wait_until, write_config

pytestmark = pytest.mark.slow

SERVER = '''
import os
from contextlib import suppress

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("remote")


def log(name):
    with open(os.environ["CALL_LOG"], "a") as log_file:
        log_file.write(name + "\\n")


def add(a: int, b: int) -> int:
    """Add two integers."""
    log("add")
    return a + b


def wipe(path: str) -> str:
    """Delete everything under a path."""
    log("wipe")
    return f"wiped {path}"


def read(path: str) -> str:
    """Read a file."""
    log("files.read")
    return f"contents of {path}"


server.add_tool(add)
server.add_tool(wipe)
server.add_tool(read, name="files.read")


@server.tool()
async def rename(ctx: Context) -> str:
    """Offer `wipe` as `wipe_all` from now on, and announce the change."""
    server.remove_tool("wipe")
    server.add_tool(wipe, name="wipe_all")
    await ctx.notify_tools_changed()
    with suppress(Exception):
        await ctx.session.send_tool_list_changed()
    return "renamed"


server.run()
'''


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    """Hosts mounting the server as the pack ``remote``; all closed at teardown."""
    script = tmp_path / "rename_server.py"
    script.write_text(textwrap.dedent(SERVER))
    hosts: list[Host] = []

    def make(approval: Any = None, extra: str = "", **server: Any) -> Host:
        table = {
            "command": sys.executable,
            "args": [str(script)],
            "timeout": 20,
            "env": {"CALL_LOG": str(tmp_path / "calls.log")},
            **server,
        }
        host = Host(
            write_config(tmp_path, {"remote": table}, extra), discover=False, approval=approval
        )
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


def gated(host: Host, agent: str | None = None) -> dict[str, bool]:
    """Whether each exposed tool of the toolset requires approval."""
    return {e.exposed: e.require_approval for e in host.toolset(agent).entries()}


@pytest.mark.parametrize("listed", ["files_read", "remote.files_read", "files.read"])
def test_a_tool_may_be_named_as_exposed_qualified_or_as_the_server_names_it(
    make_host: Callable[..., Host], listed: str
) -> None:
    """``files.read`` is exposed as ``files_read``: each of its three names selects it alone."""
    host = make_host(require_approval=[listed])
    assert gated(host) == {"add": False, "wipe": False, "files_read": True, "rename": False}
    assert not [p for p in host.load("remote").problems if "require_approval" in p]


def test_a_renamed_tool_keeps_its_approval_and_every_tool_then_needs_one(
    make_host: Callable[..., Host], tmp_path: Path
) -> None:
    """The server renames ``wipe`` to ``wipe_all``: the approval is not shed, it widens.

    Toolsets built afterwards gate every tool of the server (a pack problem says why); a
    toolset built before never calls a tool whose approval it does not ask for.
    """
    deny = Recorder(False)
    host = make_host(approval=deny, require_approval=["wipe"])
    before = host.toolset()
    assert before.entry("wipe").require_approval is True
    assert before.entry("add").require_approval is False
    assert value(call(before, "rename")) == "renamed"
    wait_until(lambda: "remote.wipe_all" in host.pack("remote").tools, "`wipe_all` is listed")

    assert set(gated(host).values()) == {True}
    problems = [p for p in host.load("remote").problems if "require_approval" in p]
    assert len(problems) == 1
    assert "'wipe', which the server does not offer" in problems[0]
    assert "every tool of the server requires approval" in problems[0]

    refused = call(host.toolset(), "wipe_all", {"path": "/srv"})
    assert refused.is_error is True
    assert refused.error is not None
    assert refused.error.kind == "denied"
    assert [r.qualified_name for r in deny.requests] == ["remote.wipe_all"]

    stale = call(before, "add", {"a": 1, "b": 2})
    assert stale.is_error is True
    assert "now requires approval" in stale.content
    assert "Build the toolset again" in stale.content
    assert served_calls(tmp_path) == []  # neither call reached the server


def test_a_listed_name_the_server_never_offered_gates_every_tool(
    make_host: Callable[..., Host],
) -> None:
    """A typo (``wpie``) at start: every tool requires approval rather than none."""
    host = make_host(require_approval=["wpie"])
    assert set(gated(host).values()) == {True}
    problems = host.load("remote").problems
    assert any(
        "'wpie', which the server does not offer" in p
        and "every tool of the server requires approval" in p
        for p in problems
    )


def test_a_host_rename_keeps_the_servers_approval(make_host: Callable[..., Host]) -> None:
    """An agent's ``rename`` moves the exposed name; the approval goes with the tool."""
    agent = '\n[agents.ops]\npacks = ["remote"]\nrename = { "remote.wipe" = "delete" }\n'
    host = make_host(extra=agent, require_approval=["wipe"])
    assert gated(host, "ops") == {
        "add": False,
        "delete": True,
        "files_read": False,
        "rename": False,
    }
