"""The MCP listing is built once and never re-validated or re-encoded per request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest


def test_http_tools_list_builds_the_listing_once_and_never_revalidates_it(
    pack_of: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three tools/list requests: one definition per tool in all, no ListToolsResult model."""
    import mcp_types

    from toolpacks import Host, tool
    from toolpacks.mcp import _search
    from toolpacks.mcp.http._app import build_http_app

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    defined: list[str] = []
    real_definition = _search.definition

    def counting(tool: Any, format: Any, **kw: Any) -> dict[str, Any]:
        defined.append(kw.get("name", ""))
        return real_definition(tool, format, **kw)

    validated: list[object] = []
    real_validate = mcp_types.ListToolsResult.model_validate

    def counting_validate(value: Any, *args: Any, **kw: Any) -> Any:
        validated.append(value)
        return real_validate(value, *args, **kw)

    monkeypatch.setattr(_search, "definition", counting)
    monkeypatch.setattr(mcp_types.ListToolsResult, "model_validate", counting_validate)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }

    async def main(app: Any) -> list[Any]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                answers = []
                for n in range(3):
                    body = {"jsonrpc": "2.0", "id": n, "method": "tools/list"}
                    answer = await c.post("/mcp", content=json.dumps(body), headers=headers)
                    answers.append(answer.json())
                return answers

    with Host({"agents": {"solo": {"packs": ["calc"]}}}, discover=False) as host:
        host.add_pack(pack_of(add, echo), name="calc")
        app = build_http_app(host, ["solo"]).app
        answers = asyncio.run(asyncio.wait_for(main(app), 60))
    assert [[t["name"] for t in a["result"]["tools"]] for a in answers] == [["add", "echo"]] * 3
    assert sorted(defined) == ["add", "echo"]
    assert validated == []


def test_the_listing_text_is_joined_once_until_a_search_finds_more(
    pack_of: Callable[..., Any],
) -> None:
    """tools_json() gives the same bytes object again; the listing is kept as text."""
    from toolpacks import Host, tool
    from toolpacks.mcp._direct import ToolAnswers

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with Host({"agents": {"solo": {"packs": ["calc"]}}}, discover=False) as host:
        host.add_pack(pack_of(add), name="calc")
        answers = ToolAnswers(host.toolset("solo"), False)
        first = answers.tools_json()
        assert answers.tools_json() is first
        assert json.loads(first) == answers.tools()
        reply = json.loads(b"".join(answers.list_reply(7, {"resultType": "complete"})))
        assert reply == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"tools": answers.tools(), "resultType": "complete"},
        }
