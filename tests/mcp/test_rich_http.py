"""MCP beyond text over streamable HTTP: ``toolpacks serve --http``, the official client.

Content blocks on both revisions and both routes (direct and SDK); progress and log
messages on an SSE reply when the call listens for them; elicitation and sampling, which
stateless HTTP cannot carry, an error result that says so (no hang), as for a client without
the capability.
"""

from __future__ import annotations

import base64
import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import HTTP_TIMEOUT, HttpServer
from .rich_pack import write_rich
from .test_rich_stdio import run, text

MODES = ["legacy", "auto"]


class RichServer(HttpServer):
    """``toolpacks serve --agent rich --http 127.0.0.1:0`` in a subprocess."""

    def __init__(self, directory: Path) -> None:
        config = write_rich(directory)
        command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(config)]
        self.proc = subprocess.Popen(
            [*command, "--agent", "rich", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(directory)},
            cwd=directory,
        )
        self.directory = directory
        self.lines: list[str] = []
        self._base: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.base = self._wait_announced()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RichServer]:
    served = RichServer(tmp_path_factory.mktemp("rich-http"))
    try:
        yield served
    finally:
        served.kill()


@contextlib.asynccontextmanager
async def connect(url: str, mode: str, **callbacks: Any) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(
            transport, mode=mode, read_timeout_seconds=HTTP_TIMEOUT, **callbacks
        ) as client:
            yield client


@pytest.mark.parametrize("mode", MODES)
def test_an_image_arrives_as_a_content_block(server: RichServer, mode: str) -> None:
    """Text, an image in base64 and a resource link, on each revision."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(server.url(), mode) as client:
            return await client.call_tool("picture", {})

    result = run(main())
    assert not result.is_error
    assert [b.type for b in result.content] == ["text", "image", "resource_link"]
    assert base64.b64decode(result.content[1].data).startswith(b"\x89PNG")


@pytest.mark.parametrize("mode", MODES)
def test_bad_content_is_an_error_result(server: RichServer, mode: str) -> None:
    """A wrong MIME family: an error result, on each revision."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(server.url(), mode) as client:
            return await client.call_tool("bad_picture", {})

    result = run(main())
    assert result.is_error
    assert "needs image/*" in text(result)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["steps", "sync_steps", "counting"])
def test_progress_arrives_on_the_stream(server: RichServer, mode: str, tool: str) -> None:
    """A call with a progress token gets each report before its result."""
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async def main() -> mcp_types.CallToolResult:
        async with connect(server.url(), mode) as client:
            return await client.call_tool(tool, {"n": 3}, progress_callback=progress)

    result = run(main())
    assert not result.is_error, text(result)
    assert seen == [1.0, 2.0, 3.0]


def test_log_messages_on_2025_reach_a_listening_client(server: RichServer) -> None:
    """2025-11-25: a tool that takes a ToolContext is answered on a stream, logs and all."""
    got: list[str] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        got.append(params.level)

    async def main() -> mcp_types.CallToolResult:
        async with connect(server.url(), "legacy", logging_callback=on_log) as client:
            return await client.call_tool("chatty", {})

    assert text(run(main())) == "logged"
    assert got == ["debug", "info", "warning", "error"]


def test_log_messages_on_2026_follow_the_requests_level(server: RichServer) -> None:
    """2026-07-28: a request that opts in at info gets info, warning and error."""
    got: list[str] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        got.append(params.level)

    async def main() -> None:
        async with connect(server.url(), "auto", logging_callback=on_log, log_level="info") as c:
            await c.call_tool("chatty", {})

    run(main())
    assert got == ["info", "warning", "error"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["ask_person", "ask_model"])
@pytest.mark.parametrize("capable", [True, False])
@pytest.mark.parametrize("listening", [True, False])
def test_asking_over_stateless_http_is_a_clear_error(
    server: RichServer, mode: str, tool: str, capable: bool, listening: bool
) -> None:
    """Elicitation and sampling: an error result naming what is missing, never a hang.

    On the direct route (a plain call) and the SDK's streaming one (a call with a progress
    token), from a client with the capabilities and one without.
    """

    async def never(context: Any, params: Any) -> Any:
        raise AssertionError("the server cannot have asked over stateless HTTP")

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass

    callbacks = {"elicitation_callback": never, "sampling_callback": never} if capable else {}

    async def main() -> mcp_types.CallToolResult:
        async with connect(server.url(), mode, **callbacks) as client:
            args = {"question": "?"} if tool == "ask_model" else {}
            return await client.call_tool(
                tool, args, progress_callback=progress if listening else None
            )

    result = run(main())
    assert result.is_error
    assert "cannot ask" in text(result)
    assert "stateless HTTP" in text(result)
