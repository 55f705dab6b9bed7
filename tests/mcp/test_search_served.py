"""Deferred tools served over MCP, with the official client, in a subprocess.

Over stdio: ``tools/list`` shows the tools not deferred plus ``search_tools``; a search
announces what it found with ``notifications/tools/list_changed``, after which the found tool
is listed and called. Over stateless HTTP: a deferred tool answers ``tools/call`` by name, and
the list never changes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from .conftest import CALL_TIMEOUT, HttpServer, serve_params, text_of, write_demo, write_http_demo
from .test_http import TOKEN, connect, run

pytestmark = pytest.mark.slow

DEFERRED_CONFIG = """
[agents.assistant]
packs = ["demo"]
defer = ["demo.forecast"]
"""


async def _stdio_session(directory: Path, config: Path) -> dict[str, Any]:
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(
            message, mcp_types.ServerNotification | mcp_types.ToolListChangedNotification
        ):
            inner = getattr(message, "root", message)
            if getattr(inner, "method", "") == "notifications/tools/list_changed":
                changed.set()

    params = serve_params(directory, config, "assistant")
    with (directory / "stderr.log").open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode="legacy", message_handler=on_message) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            direct = await client.call_tool("forecast", {"city": "Oslo"})
            search = await client.call_tool("search_tools", {"query": "weather forecast"})
            await asyncio.wait_for(changed.wait(), CALL_TIMEOUT)
            after = [t.name for t in (await client.list_tools()).tools]
            called = await client.call_tool("forecast", {"city": "Paris", "days": 2})
    return {
        "before": before,
        "direct": direct,
        "search": search,
        "after": after,
        "called": called,
    }


def test_stdio_search_announces_the_found_tool_which_is_then_listed_and_called(
    tmp_path: Path,
) -> None:
    config = write_demo(tmp_path)
    config.write_text(DEFERRED_CONFIG)
    out = asyncio.run(asyncio.wait_for(_stdio_session(tmp_path, config), 4 * CALL_TIMEOUT))
    assert "forecast" not in out["before"]
    assert "search_tools" in out["before"]
    assert "add" in out["before"]
    assert not out["direct"].is_error  # callable by name before any search
    search = out["search"]
    assert not search.is_error
    found = json.loads(text_of(search))["tools"]
    assert found[0]["name"] == "forecast"
    assert found[0]["inputSchema"]["required"] == ["city"]
    assert search.structured_content == {"tools": found}
    assert "forecast" in out["after"]
    called = out["called"]
    assert not called.is_error
    assert called.structured_content == {"city": "Paris", "days": 2, "summary": "sunny"}


HTTP_DEFERRED = """
[agents.lazy]
packs = ["web"]
defer = ["web.add"]
"""


def test_http_lists_search_tools_and_calls_a_deferred_tool_by_name(tmp_path: Path) -> None:
    write_http_demo(tmp_path)
    config = tmp_path / "deferred.toml"
    config.write_text(HTTP_DEFERRED)
    server = HttpServer(
        tmp_path,
        ["--config", str(config), "--agent", "lazy", "--token-env", "MCP_TEST_TOKEN"],
        {"MCP_TEST_TOKEN": TOKEN},
    )
    try:

        async def main() -> tuple[list[str], Any, Any, list[str]]:
            async with connect(server.url("lazy")) as client:
                listed = [t.name for t in (await client.list_tools()).tools]
                found = await client.call_tool("search_tools", {"query": "add two numbers"})
                added = await client.call_tool("add", {"a": 2, "b": 3})
                again = [t.name for t in (await client.list_tools()).tools]
                return listed, found, added, again

        listed, found, added, again = run(main())
    finally:
        server.kill()
    assert "add" not in listed
    assert "search_tools" in listed
    assert json.loads(text_of(found))["tools"][0]["name"] == "add"
    assert not added.is_error
    assert text_of(added) == "5"
    assert again == listed  # stateless: a search changes nothing
