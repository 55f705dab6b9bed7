"""A host's ``[settings]`` argument caps hold for a served toolset (issue 27).

The server object ``build_server`` makes is driven in process by the official MCP client: the
same handlers ``toolpacks serve`` runs, without a subprocess.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import mcp_types
from mcp import Client

from toolpacks import Host, tool
from toolpacks.mcp import build_server

from .conftest import text_of

ran: list[str] = []


@tool
def echo(text: str) -> str:
    """Echo a text."""
    ran.append(text)
    return text


@tool(require_approval=True)
def guarded_echo(text: str) -> str:
    """Echo a text, with approval."""
    ran.append(text)
    return text


async def _calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with Client(server) as client:
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def test_served_calls_are_capped_by_the_hosts_settings(pack_of: Callable[..., Any]) -> None:
    """A 200-byte call to a served agent is refused under ``max_argument_bytes = 64``."""
    ran.clear()
    host = Host({"settings": {"max_argument_bytes": 64}}, discover=False)
    host.add_pack(pack_of(echo, guarded_echo), "p")
    server = build_server(host.toolset(), approval=lambda request: True)
    big = {"text": "x" * 200}
    results: list[mcp_types.CallToolResult] = asyncio.run(
        asyncio.wait_for(
            _calls(server, [("echo", big), ("guarded_echo", big), ("echo", {"text": "hi"})]), 20
        )
    )
    for refused in results[:2]:
        assert refused.is_error is True
        assert "larger than the limit of 64 bytes" in text_of(refused)
    assert results[2].is_error is False
    assert ran == ["hi"]
