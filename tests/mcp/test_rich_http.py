"""MCP beyond text over streamable HTTP: ``toolpacks serve --http``, the official client.

Content blocks on both revisions and both routes (direct and SDK); progress and log
messages on an SSE reply when the call listens for them; elicitation and sampling, which
stateless HTTP cannot carry, an error result that says so (no hang), as for a client without
the capability.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
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
        super().__init__(directory, ["--agent", "rich"], config=write_rich(directory))


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


@pytest.mark.parametrize("listening", [True, False])
def test_elicitation_on_2026_goes_by_input_required_rounds(
    server: RichServer, listening: bool
) -> None:
    """2026-07-28: the call answers input_required, the client answers and calls again.

    The first round on the direct route (or the streaming one, with a progress token), the
    retry carrying the answer on the SDK road; accept, and a mismatching answer refused.
    """
    answers = iter(
        [
            mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": 36}),
            mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": "old"}),
        ]
    )

    async def elicit(context: Any, params: Any) -> Any:
        assert params.message == "Who are you?"
        return next(answers)

    async def sampling(context: Any, params: Any) -> Any:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="42"), model="m"
        )

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass

    async def main() -> list[mcp_types.CallToolResult]:
        callbacks = {"elicitation_callback": elicit, "sampling_callback": sampling}
        listen = progress if listening else None
        async with connect(server.url(), "auto", **callbacks) as client:
            return [
                await client.call_tool("ask_person", {}, progress_callback=listen),
                await client.call_tool("ask_person", {}, progress_callback=listen),
                await client.call_tool("ask_model", {"question": "?"}, progress_callback=listen),
            ]

    accepted, refused, sampled = run(main())
    assert text(accepted) == "hello Ada, 36"
    assert refused.is_error
    assert "does not match the form" in text(refused)
    assert text(sampled) == "model said: 42"


# A capable client on 2026-07-28 ("auto") is answered by input-required rounds (the test
# above): that pair is not generated here.
_NO_WAY = [(m, c) for m in MODES for c in (True, False) if not (m == "auto" and c)]


@pytest.mark.parametrize(("mode", "capable"), _NO_WAY)
@pytest.mark.parametrize("tool", ["ask_person", "ask_model"])
@pytest.mark.parametrize("listening", [True, False])
def test_asking_without_a_way_to_answer_is_a_clear_error(
    server: RichServer, mode: str, tool: str, capable: bool, listening: bool
) -> None:
    """Elicitation and sampling: an error result naming what is missing, never a hang.

    2025-11-25 over stateless HTTP (no back-channel), and 2026-07-28 from a client without
    the capability; on the direct route (a plain call) and the streaming one (a progress
    token).
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
    words = "did not declare" if mode == "auto" else "stateless HTTP"
    assert words in text(result)


@pytest.mark.parametrize("listening", [True, False])
def test_a_call_the_client_gives_up_on_is_cancelled(
    server: RichServer, tmp_path: Path, listening: bool
) -> None:
    """2026-07-28: the client closes the reply's stream; the tool is cancelled."""
    marker = tmp_path / f"cancelled-{listening}"

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass

    async def main() -> None:
        async with connect(server.url(), "auto") as client:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    client.call_tool(
                        "wait_forever",
                        {"marker": str(marker)},
                        progress_callback=progress if listening else None,
                    ),
                    1.0,
                )
        for _ in range(100):
            if marker.exists():
                return
            await asyncio.sleep(0.05)

    run(main())
    assert marker.read_text() == "cancelled"
