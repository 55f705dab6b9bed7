"""Resources from packs: in-process through the Toolset, and served over stdio and HTTP.

The official client lists static resources and templates, reads text, a blob and a template
(its parameters filled from the URI), completes a template parameter, and is refused with a
clear MCP error for an unknown URI (-32002) and a resource that raised (-32603, its text
withheld). Over stdio a subscription brings ``notifications/resources/updated`` when the pack
says the resource changed, and stops after ``resources/unsubscribe``.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import MCPError

import toolpacks

from .test_prompts import (
    MODES,
    ROADS,
    OfferServer,
    _error_of,
    connect,
    http_server,
    offer_dir,
    over_stdio,
    served,
)
from .test_rich_stdio import run

__all__ = ["http_server", "offer_dir", "served"]  # fixtures shared with test_prompts

pytestmark = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")

WAIT = 10.0
"""The longest wait for a notification (a bound, not a timing assertion)."""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("road", ROADS)
def test_resources_listed_read_and_templates_filled(
    road: str, mode: str, offer_dir: Path, served: OfferServer | None
) -> None:
    """Static resources and templates listed apart; text, blob and template reads."""

    async def main() -> dict[str, Any]:
        async with connect(road, offer_dir, served, "memo", mode) as client:
            caps = client.server_capabilities
            assert caps is not None
            assert caps.resources is not None
            return {
                "listed": await client.list_resources(),
                "templates": await client.list_resource_templates(),
                "text": await client.read_resource("memo://static"),
                "blob": await client.read_resource("memo://blob"),
                "filled": await client.read_resource("memo://users/ada/notes/monday"),
                "done": await client.complete(
                    mcp_types.ResourceTemplateReference(
                        type="ref/resource", uri="memo://users/{user}/notes/{day}"
                    ),
                    {"name": "user", "value": "pra"},
                ),
            }

    out = run(main())
    listed = {str(r.uri): r for r in out["listed"].resources}
    assert sorted(listed) == ["memo://blob", "memo://broken", "memo://counter", "memo://static"]
    assert listed["memo://static"].description == "A static memo."
    assert listed["memo://static"].mime_type == "text/plain"
    assert [t.uri_template for t in out["templates"].resource_templates] == [
        "memo://users/{user}/notes/{day}"
    ]
    text = out["text"].contents[0]
    assert isinstance(text, mcp_types.TextResourceContents)
    assert (text.text, text.mime_type) == ("static memo", "text/plain")
    blob = out["blob"].contents[0]
    assert isinstance(blob, mcp_types.BlobResourceContents)
    assert base64.b64decode(blob.blob) == b"\x00\x01\x02"
    filled = out["filled"].contents[0]
    assert str(filled.uri) == "memo://users/ada/notes/monday"
    assert filled.text == "notes of ada on monday"
    assert out["done"].completion.values == ["prague"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("road", ROADS)
def test_bad_resource_requests_are_clear_mcp_errors(
    road: str, mode: str, offer_dir: Path, served: OfferServer | None
) -> None:
    """An unknown URI is -32002 naming it; a raising resource is -32603 without its text."""

    async def main() -> list[MCPError]:
        async with connect(road, offer_dir, served, "memo", mode) as client:
            return [
                await _error_of(client.read_resource("memo://nowhere")),
                await _error_of(client.read_resource("memo://broken")),
            ]

    unknown, broken = run(main())
    assert unknown.code == -32002
    assert "'memo://nowhere'" in unknown.message
    assert broken.code == -32603
    assert "memo://broken" in broken.message
    assert "secret-resource-detail" not in broken.message


def test_a_subscription_brings_updated_notifications_until_unsubscribed(offer_dir: Path) -> None:
    """Over stdio: subscribe, the pack says it changed → resources/updated; unsubscribed: not."""
    updates: list[str] = []

    async def main() -> list[str]:
        event = asyncio.Event()

        async def handler(message: Any) -> None:
            if isinstance(message, mcp_types.ResourceUpdatedNotification):
                updates.append(str(message.params.uri))
                event.set()

        async with over_stdio(offer_dir, "memo", "legacy", message_handler=handler) as client:
            caps = client.server_capabilities
            assert caps is not None
            assert caps.resources is not None
            assert caps.resources.subscribe is True
            await client.subscribe_resource("memo://counter")
            await client.call_tool("bump", {})
            await asyncio.wait_for(event.wait(), WAIT)
            event.clear()
            await client.unsubscribe_resource("memo://counter")
            await client.call_tool("bump", {})  # no one listens: nothing is sent
            await client.subscribe_resource("memo://counter")
            await client.call_tool("bump", {})
            await asyncio.wait_for(event.wait(), WAIT)
            read = await client.read_resource("memo://counter")
            assert read.contents[0].text == "3"
            return list(updates)

    assert run(main()) == ["memo://counter", "memo://counter"]


def test_subscribing_over_http_is_accepted(http_server: OfferServer) -> None:
    """Over stateless HTTP, resources/subscribe and unsubscribe answer {} (2025-11-25)."""

    async def main() -> None:
        from .test_prompts import over_http

        async with over_http(http_server.url("memo"), "legacy") as client:
            await client.subscribe_resource("memo://counter")
            await client.unsubscribe_resource("memo://counter")
            unknown = await _error_of(client.subscribe_resource("memo://nowhere"))
            assert unknown.code == -32002

    run(main())


def test_in_process_resources_through_the_toolset(offer_dir: Path) -> None:
    """Toolset.read_resource reads static and template URIs; bad ones raise clearly."""
    sys.path.insert(0, str(offer_dir))
    host = toolpacks.Host(str(offer_dir / "toolpacks.toml"))
    try:
        toolset = host.toolset("memo")
        assert [r.uri for r in toolset.resources()][:2] == ["memo://static", "memo://blob"]
        read = asyncio.run(toolset.read_resource("memo://users/x/notes/y"))
        uri = "memo://users/x/notes/y"
        text = {"uri": uri, "mimeType": "text/plain", "text": "notes of x on y"}
        assert read == {"contents": [text]}
        with pytest.raises(LookupError, match="memo://nowhere"):
            asyncio.run(toolset.read_resource("memo://nowhere"))
        with pytest.raises(RuntimeError, match="memo://broken") as failed:
            asyncio.run(toolset.read_resource("memo://broken"))
        assert "secret-resource-detail" not in str(failed.value)
        picky = host.toolset("picky")
        assert [r.qualified for r in picky.resources()] == ["memo.static", "memo.notes"]
        assert host.toolset("plain").resources() == []
    finally:
        sys.path.remove(str(offer_dir))
        host.close()



def test_http_sessions_deliver_updates(tmp_path_factory: pytest.TempPathFactory) -> None:
    """[settings] http_sessions: over HTTP a subscription hears the pack's updates."""
    from .test_prompts import over_http

    server = OfferServer(tmp_path_factory.mktemp("sessions"), "[settings]\nhttp_sessions = true\n")
    updates: list[str] = []

    async def main() -> None:
        event = asyncio.Event()

        async def handler(message: Any) -> None:
            if isinstance(message, mcp_types.ResourceUpdatedNotification):
                updates.append(str(message.params.uri))
                event.set()

        async with over_http(server.url("memo"), "legacy", message_handler=handler) as client:
            await client.subscribe_resource("memo://counter")
            await client.call_tool("bump", {})
            await asyncio.wait_for(event.wait(), WAIT)

    try:
        run(main())
    finally:
        server.kill()
    assert updates == ["memo://counter"]


def test_http_sessions_let_a_tool_ask_the_client(tmp_path_factory: pytest.TempPathFactory) -> None:
    """With http_sessions a tool's elicitation reaches the client over HTTP and is answered."""
    from .test_prompts import over_http

    server = OfferServer(tmp_path_factory.mktemp("asking"), "[settings]\nhttp_sessions = true\n")
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"name": "ada"})

    async def main() -> mcp_types.CallToolResult:
        async with over_http(server.url("memo"), "legacy", elicitation_callback=elicit) as client:
            return await client.call_tool("ask", {})

    try:
        result = run(main())
    finally:
        server.kill()
    assert asked == ["Your name?"]
    assert not result.is_error
    assert result.content[0].text == "accept: {'name': 'ada'}"


def test_http_sessions_refuse_more_than_one_worker(tmp_path: Path) -> None:
    """Sessions live in one process: serve --http --workers 2 with http_sessions is refused."""
    from toolpacks.exceptions import ConfigError
    from toolpacks.mcp.http._workers import serve_http

    with pytest.raises(ConfigError, match="needs one worker"):
        serve_http({"settings": {"http_sessions": True}, "agents": {"a": {}}}, ["a"], workers=2)
