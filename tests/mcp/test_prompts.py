"""Prompts from packs: in-process through the Toolset, and served over stdio and HTTP.

The official client lists them (with their arguments), gets them with arguments (text, an
embedded resource and an image as messages), completes argument values, and is refused with
a clear MCP error for an unknown prompt, a missing required argument and a prompt that
raised (its exception text withheld). A server with none answers the listings with empty
lists; an agent's ``prompts`` globs choose among a pack's prompts.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

import toolpacks
from toolpacks.exceptions import ConfigError

from .conftest import HTTP_TIMEOUT, HttpServer
from .offer_pack import write_offer
from .test_rich_stdio import run

MODES = ["legacy", "auto"]
"""``legacy``: 2025-11-25 (initialize); ``auto``: 2026-07-28 (each request its envelope)."""


@pytest.fixture(scope="module")
def offer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("offer")
    write_offer(directory)
    return directory


class OfferServer(HttpServer):
    """``toolpacks serve --agent memo --agent plain --http 127.0.0.1:0`` in a subprocess."""

    def __init__(self, directory: Path, settings: str = "") -> None:
        config = write_offer(directory, settings)
        super().__init__(directory, ["--agent", "memo", "--agent", "plain"], config=config)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OfferServer]:
    served = OfferServer(tmp_path_factory.mktemp("offer-http"))
    try:
        yield served
    finally:
        served.kill()


@contextlib.asynccontextmanager
async def over_stdio(directory: Path, agent: str, mode: str, **kw: Any) -> AsyncIterator[Client]:
    """The official client on ``toolpacks serve --agent AGENT`` over stdio."""
    config = str(directory / "toolpacks.toml")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolpacks", "serve", "--agent", agent, "--config", config],
        env={"PYTHONPATH": str(directory)},
    )
    with (directory / "serve.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, **kw) as client:
            yield client


@contextlib.asynccontextmanager
async def over_http(url: str, mode: str, **kw: Any) -> AsyncIterator[Client]:
    """The official client on the HTTP server's endpoint ``url``."""
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=HTTP_TIMEOUT, **kw) as c:
            yield c


def connect(road: str, offer_dir: Path, server: OfferServer | None, agent: str, mode: str) -> Any:
    if road == "stdio":
        return over_stdio(offer_dir, agent, mode)
    assert server is not None
    return over_http(server.url(agent), mode)


ROADS = ["stdio", "http"]


@pytest.fixture
def served(request: pytest.FixtureRequest, offer_dir: Path) -> OfferServer | None:
    """The HTTP server for the ``http`` road (None over stdio, which starts its own)."""
    if request.node.callspec.params.get("road") == "http":
        server: OfferServer = request.getfixturevalue("http_server")
        return server
    return None


async def _prompts_roundtrip(client: Client) -> dict[str, Any]:
    listed = await client.list_prompts()
    got = await client.get_prompt("trip", {"city": "paris", "days": "2"})
    done = await client.complete(
        mcp_types.PromptReference(type="ref/prompt", name="trip"),
        {"name": "city", "value": "par"},
    )
    return {"listed": listed, "got": got, "done": done}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("road", ROADS)
def test_prompts_listed_got_with_arguments_and_completed(
    road: str, mode: str, offer_dir: Path, served: OfferServer | None
) -> None:
    """prompts/list shows the arguments; prompts/get renders them; completion suggests."""

    async def main() -> dict[str, Any]:
        async with connect(road, offer_dir, served, "memo", mode) as client:
            assert client.server_capabilities is not None
            assert client.server_capabilities.prompts is not None
            assert client.server_capabilities.completions is not None
            return await _prompts_roundtrip(client)

    out = run(main())
    trip = next(p for p in out["listed"].prompts if p.name == "trip")
    assert trip.description == "Plan a trip."
    args = {a.name: (a.required, a.description) for a in trip.arguments or []}
    assert args == {"city": (True, "Where to go."), "days": (False, "How many days.")}
    messages = out["got"].messages
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert isinstance(messages[0].content, mcp_types.TextContent)
    assert messages[0].content.text == "Plan 2 days in paris."
    assert isinstance(messages[1].content, mcp_types.EmbeddedResource)
    assert messages[1].content.resource.uri == "memo://paris"
    assert isinstance(messages[2].content, mcp_types.ImageContent)
    assert messages[2].content.mime_type == "image/png"
    assert out["done"].completion.values == ["paris", "park", "party"]


async def _error_of(call: Any) -> MCPError:
    try:
        await call
    except MCPError as exc:
        return exc
    raise AssertionError("the request was not refused")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("road", ROADS)
def test_bad_prompt_requests_are_clear_mcp_errors(
    road: str, mode: str, offer_dir: Path, served: OfferServer | None
) -> None:
    """Unknown prompt and missing argument: -32602 naming them; a raising prompt: -32603."""

    async def main() -> list[MCPError]:
        async with connect(road, offer_dir, served, "memo", mode) as client:
            return [
                await _error_of(client.get_prompt("nope", {})),
                await _error_of(client.get_prompt("trip", {"days": "2"})),
                await _error_of(client.get_prompt("broken_prompt", {})),
            ]

    unknown, missing, broken = run(main())
    assert unknown.code == -32602
    assert "'nope'" in unknown.message
    assert "trip" in unknown.message
    assert missing.code == -32602
    assert "missing required argument(s) city" in missing.message
    assert broken.code == -32603
    assert "broken_prompt" in broken.message
    assert "RuntimeError" in broken.message
    assert "secret-prompt-detail" not in broken.message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("road", ROADS)
def test_a_server_with_none_lists_no_prompts_and_no_resources(
    road: str, mode: str, offer_dir: Path, served: OfferServer | None
) -> None:
    """An agent whose packs offer neither answers the listings with empty lists."""

    async def main() -> tuple[Any, ...]:
        async with connect(road, offer_dir, served, "plain", mode) as client:
            return (
                await client.list_prompts(),
                await client.list_resources(),
                await client.list_resource_templates(),
            )

    prompts, resources, templates = run(main())
    assert prompts.prompts == []
    assert resources.resources == []
    assert templates.resource_templates == []


def test_in_process_prompts_through_the_toolset(offer_dir: Path) -> None:
    """Toolset.get_prompt renders; bad input raises LookupError/ValueError/RuntimeError."""
    sys.path.insert(0, str(offer_dir))
    host = toolpacks.Host(str(offer_dir / "toolpacks.toml"))
    try:
        toolset = host.toolset("memo")
        got = asyncio.run(toolset.get_prompt("trip", {"city": "prague"}))
        assert got["messages"][0]["content"] == {"type": "text", "text": "Plan 3 days in prague."}
        with pytest.raises(LookupError, match="'nope'"):
            asyncio.run(toolset.get_prompt("nope"))
        with pytest.raises(ValueError, match=r"missing required argument\(s\) city"):
            asyncio.run(toolset.get_prompt("trip", {}))
        with pytest.raises(ValueError, match=r"unknown argument\(s\) town"):
            asyncio.run(toolset.get_prompt("trip", {"city": "x", "town": "y"}))
        with pytest.raises(RuntimeError, match="broken_prompt") as failed:
            asyncio.run(toolset.get_prompt("broken_prompt"))
        assert "secret-prompt-detail" not in str(failed.value)
        picky = host.toolset("picky")
        assert [p.qualified for p in picky.prompts()] == ["memo.trip"]
        with pytest.raises(ConfigError, match=r"prompts 'memo.nothing' matches no prompt"):
            toolpacks.Host(
                {"agents": {"x": {"packs": ["memo"], "prompts": ["memo.nothing"]}}}
            ).toolset("x")
    finally:
        sys.path.remove(str(offer_dir))
        host.close()
