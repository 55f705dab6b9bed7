"""Serving a toolset as an MCP server: end to end over stdio with the official MCP client."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, MCPError

from toolpacks import CallOptions, ToolError, Toolset, tool
from toolpacks.host._toolset import ToolEntry
from toolpacks.mcp import build_server

from .conftest import BlockingClient, serve_params, text_of, write_demo

# -- over stdio, against a subprocess ---------------------------------------------------------


def test_lists_tools_with_schemas_annotations_and_output_schemas(served: BlockingClient) -> None:
    """tools/list gives every exposed tool with its input schema, output schema and hints."""
    tools = served.list_tools()
    assert sorted(tools) == ["add", "explode", "forecast", "refuse", "wipe"]
    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.input_schema["properties"].keys() == {"a", "b"}
    assert add.input_schema["required"] == ["a", "b"]
    assert add.annotations is not None
    assert add.annotations.read_only_hint is True
    assert add.annotations.idempotent_hint is True
    assert "Add numbers" in (add.title, add.annotations.title)
    # A non-object output is wrapped as {"result": ...}, as the MCP specification asks.
    assert add.output_schema is not None
    assert add.output_schema["type"] == "object"
    assert add.output_schema["required"] == ["result"]
    assert add.output_schema["properties"]["result"]["type"] == "integer"
    forecast = tools["forecast"]
    assert forecast.output_schema is not None
    assert forecast.output_schema["type"] == "object"
    assert set(forecast.output_schema["properties"]) == {"city", "days", "summary"}
    wipe = tools["wipe"]
    assert wipe.annotations is not None
    assert wipe.annotations.destructive_hint is True


def test_call_returns_text_and_structured_content(served: BlockingClient) -> None:
    """A successful call has text content and structuredContent matching the output schema."""
    result = served.call("forecast", {"city": "Oslo", "days": 2})
    assert result.is_error is False
    assert result.structured_content == {"city": "Oslo", "days": 2, "summary": "sunny"}
    assert '"city":"Oslo"' in text_of(result).replace(" ", "")


def test_non_object_output_is_wrapped_in_result(served: BlockingClient) -> None:
    """An integer return value arrives as structuredContent {"result": value}."""
    result = served.call("add", {"a": 2, "b": 3})
    assert result.is_error is False
    assert result.structured_content == {"result": 5}
    assert text_of(result) == "5"


def test_bad_arguments_are_an_error_result_naming_the_argument(served: BlockingClient) -> None:
    """Invalid arguments give isError with a per-argument message, not a protocol error."""
    result = served.call("add", {"a": "two", "c": 1})
    assert result.is_error is True
    text = text_of(result)
    assert "Invalid arguments for tool 'add'" in text
    assert "- a:" in text
    assert "- b: missing required argument" in text
    assert "- c: unexpected argument" in text
    assert result.structured_content is None


def test_failing_tool_is_an_error_result_without_exception_text(served: BlockingClient) -> None:
    """An unexpected exception gives isError naming the tool and type, never its message."""
    result = served.call("explode", {})
    assert result.is_error is True
    text = text_of(result)
    assert "explode" in text
    assert "RuntimeError" in text
    assert "hunter2" not in text
    assert "password" not in text


def test_tool_error_message_reaches_the_client(served: BlockingClient) -> None:
    """A ToolError raised on purpose passes its message through."""
    result = served.call("refuse", {})
    assert result.is_error is True
    assert "quota exceeded, try tomorrow" in text_of(result)


def test_approval_required_tool_is_refused_without_a_policy(served: BlockingClient) -> None:
    """A tool that requires approval is refused with an explanation when no policy exists."""
    result = served.call("wipe", {"path": "/"})
    assert result.is_error is True
    text = text_of(result)
    assert "requires approval" in text
    assert "no approval policy" in text
    assert "wiped" not in text


def test_unknown_tool_is_a_protocol_error(served: BlockingClient) -> None:
    """Calling a tool the server does not list is a JSON-RPC error, as the spec asks."""
    with pytest.raises(MCPError, match="Unknown tool: nope"):
        served.call("nope", {})


# -- in process (the same server object, no subprocess) ---------------------------------------


async def _call(server: Any, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


def _run(server: Any, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    return asyncio.run(asyncio.wait_for(_call(server, name, arguments), 20))


@tool(require_approval=True)
def launch(target: str) -> str:
    """Launch something (needs approval)."""
    return f"launched {target}"


@tool
def crash() -> str:
    """Fails unexpectedly."""
    raise ValueError("internal path /srv/secret.db")


@tool
def fine() -> str:
    """Works."""
    return "ok"


def test_approval_handler_lets_approved_calls_run() -> None:
    """With an approval handler, approved calls run and denied ones are refused."""
    seen: list[str] = []

    def approve(request: Any) -> bool:
        seen.append(request.arguments["target"])
        return request.arguments["target"] == "rocket"

    server = build_server(Toolset([launch]), approval=approve)
    assert _run(server, "launch", {"target": "rocket"}).is_error is False
    denied = _run(server, "launch", {"target": "moon"})
    assert denied.is_error is True
    assert "not approved" in denied.content[0].text
    assert seen == ["rocket", "moon"]


def test_expose_errors_sends_exception_text() -> None:
    """expose_errors=True includes the exception message; the default hides it."""
    assert "/srv/secret.db" not in text_of(_run(build_server(Toolset([crash])), "crash", {}))
    exposed = _run(build_server(Toolset([crash]), expose_errors=True), "crash", {})
    assert exposed.is_error
    assert "/srv/secret.db" in text_of(exposed)


def test_failing_hook_is_an_error_result_without_its_text() -> None:
    """An exception escaping a hook becomes an error result that does not leak its message."""
    hooked = fine.replace()

    @hooked.before_invoke
    def broken_hook(**kwargs: Any) -> None:
        raise KeyError("api_key=sk-live-123")

    result = _run(build_server(Toolset([hooked])), "fine", {})
    assert result.is_error is True
    text = text_of(result)
    assert "KeyError" in text
    assert "sk-live-123" not in text


def test_exposed_hook_error_shows_its_text_with_secrets_scrubbed() -> None:
    """With expose_errors, a hook's message is shown, but the toolset's secrets are masked."""

    @tool
    def hooked() -> str:
        """Works, but its hook fails."""
        return "ok"

    @hooked.before_invoke
    def broken_hook(**kwargs: Any) -> None:
        raise KeyError("bad key sk-live-123 at /etc")

    options = CallOptions(redact=("sk-live-123",))
    toolset = Toolset([ToolEntry("hooked", "p.hooked", "p", hooked, options)])
    text = text_of(_run(build_server(toolset, expose_errors=True), "hooked", {}))
    assert "failed in a hook: KeyError: " in text
    assert "at /etc" in text
    assert "sk-live-123" not in text
    assert "**********" in text


def test_tool_error_from_a_tool_is_not_a_protocol_error() -> None:
    """Even a tool that raises ToolError with no message gives a well-formed error result."""

    @tool
    def empty() -> str:
        """Fails with no message."""
        raise ToolError("")

    result = _run(build_server(Toolset([empty])), "empty", {})
    assert result.is_error is True
    assert "empty" in text_of(result)


def test_client_cancellation_cancels_the_running_tool() -> None:
    """When the client gives up on a call, the async tool is cancelled within 100 ms."""
    cancelled: list[float] = []

    @tool
    async def slow() -> str:
        """Sleeps for a long time."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(time.monotonic())
            raise
        return "done"

    async def scenario() -> float:
        async with Client(build_server(Toolset([slow]))) as client:
            with pytest.raises(MCPError, match="Timed out"):
                await client.call_tool("slow", {}, read_timeout_seconds=0.2)
            gave_up = time.monotonic()
            await asyncio.sleep(0.2)
            return gave_up

    gave_up = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert len(cancelled) == 1
    assert cancelled[0] - gave_up < 0.1


def test_serving_an_agent_whose_pack_is_a_remote_mcp_server(tmp_path: Path) -> None:
    """Both ways at once: an MCP client reaches mcp-server-time through a served toolset."""
    write_demo(tmp_path)
    config = tmp_path / "proxy.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [mcp_servers.time]
            command = {json.dumps(sys.executable)}
            args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

            [agents.proxy]
            packs = ["time"]
            """
        )
    )
    client = BlockingClient(serve_params(tmp_path, config, "proxy"), tmp_path / "stderr.log")
    client.connect()
    try:
        tools = client.list_tools()
        assert sorted(tools) == ["convert_time", "get_current_time"]
        listed = tools["get_current_time"]
        assert listed.annotations is not None
        assert listed.annotations.read_only_hint is True
        assert listed.output_schema is not None
        assert "datetime" in listed.output_schema["properties"]
        result = client.call("get_current_time", {"timezone": "UTC"})
        assert result.is_error is False
        assert result.structured_content["timezone"] == "UTC"
        failed = client.call("get_current_time", {"timezone": "Mars/Olympus"})
        assert failed.is_error is True
        assert "Invalid timezone" in text_of(failed)
    finally:
        client.close()


def test_a_hook_exception_whose_text_fails_is_still_an_error_result() -> None:
    """With expose_errors, a hook exception whose ``__str__`` raises is still reported."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    @tool
    def hooked_odd() -> str:
        """Works, but its hook fails oddly."""
        return "ok"

    @hooked_odd.before_invoke
    def broken_hook(**kwargs: Any) -> None:
        raise Unprintable()

    server = build_server(Toolset([hooked_odd]), expose_errors=True)
    result = _run(server, "hooked_odd", {})
    assert result.is_error is True
    assert "Unprintable" in text_of(result)
