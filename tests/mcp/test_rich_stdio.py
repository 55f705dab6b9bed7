"""MCP beyond text over stdio: ``toolpacks serve`` spoken to by the official client.

Images and links as content blocks, bad content as error results, progress (awaited, from a
sync tool's thread, and an async generator's yields), log levels and ``logging/setLevel``,
elicitation (accept, decline, cancel, an answer that does not match the form), sampling,
cancellation, and a client without the capabilities: an error result, never a hang.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .conftest import run_bounded, text_of
from .rich_pack import write_rich

TIMEOUT = 20.0


@pytest.fixture(scope="module")
def rich_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("rich")
    write_rich(directory)
    return directory


@contextlib.asynccontextmanager
async def connect(directory: Path, mode: str = "legacy", **callbacks: Any) -> AsyncIterator[Client]:
    """The official client on ``toolpacks serve --agent rich`` over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "toolpacks",
            "serve",
            "--agent",
            "rich",
            "--config",
            str(directory / "toolpacks.toml"),
        ],
        env={"PYTHONPATH": str(directory)},
    )
    with (directory / "serve.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, **callbacks) as client:
            yield client


def run(coro: Any) -> Any:
    """Run a test coroutine, bounded by this module's ``TIMEOUT``."""
    return run_bounded(coro, TIMEOUT)


text = text_of


MODES = ["legacy", "auto"]
"""``legacy``: 2025-11-25 (initialize); ``auto``: 2026-07-28 (each request its envelope)."""


@pytest.mark.parametrize("mode", MODES)
def test_an_image_and_a_link_arrive_as_content_blocks(rich_dir: Path, mode: str) -> None:
    """A list of text, an Image and a ResourceLink: three blocks, the image in base64."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode) as client:
            return await client.call_tool("picture", {})

    result = run(main())
    assert not result.is_error
    kinds = [type(b).__name__ for b in result.content]
    assert kinds == ["TextContent", "ImageContent", "ResourceLink"]
    image = result.content[1]
    assert isinstance(image, mcp_types.ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("tool", "words"), [("bad_picture", "needs image/*"), ("huge_picture", "more than the limit")]
)
def test_bad_content_is_an_error_result(rich_dir: Path, tool: str, words: str) -> None:
    """A wrong MIME family or an image over the cap: an error result that says which."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir) as client:
            return await client.call_tool(tool, {})

    result = run(main())
    assert result.is_error
    assert words in text(result)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["steps", "sync_steps", "counting"])
def test_progress_reaches_the_client(rich_dir: Path, mode: str, tool: str) -> None:
    """report_progress (async, and from a sync tool's thread) and generator yields."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode) as client:
            return await client.call_tool(tool, {"n": 3}, progress_callback=progress)

    result = run(main())
    assert not result.is_error, text(result)
    assert [p[0] for p in seen] == [1.0, 2.0, 3.0]
    if tool == "steps":
        assert seen[0] == (1.0, 3.0, "step 1")


def test_log_levels_and_set_level(rich_dir: Path) -> None:
    """Every level arrives; after logging/setLevel("warning") only warning and error."""
    got: list[tuple[str, Any]] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        got.append((params.level, params.data))

    async def main() -> list[list[str]]:
        async with connect(rich_dir, logging_callback=on_log) as client:
            await client.call_tool("chatty", {})
            first = [level for level, _ in got]
            got.clear()
            await client.set_logging_level("warning")
            await client.call_tool("chatty", {})
            return [first, [level for level, _ in got]]

    before, after = run(main())
    assert before == ["debug", "info", "warning", "error"]
    assert after == ["warning", "error"]


def test_log_on_2026_needs_the_requests_opt_in(rich_dir: Path) -> None:
    """2026-07-28: messages only to a request carrying a log level, at or above it."""
    got: list[str] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        got.append(params.level)

    async def main() -> tuple[list[str], list[str]]:
        async with connect(rich_dir, "auto", logging_callback=on_log) as client:
            await client.call_tool("chatty", {})
            none = list(got)
        async with connect(rich_dir, "auto", logging_callback=on_log, log_level="info") as client:
            await client.call_tool("chatty", {})
        return none, got

    none, some = run(main())
    assert none == []
    assert some == ["info", "warning", "error"]


def _elicit(answer: mcp_types.ElicitResult) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        assert params.message == "Who are you?"
        assert set(params.requested_schema["properties"]) == {"name", "age"}
        return answer

    return callback


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": 36}),
            "hello Ada, 36",
        ),
        (mcp_types.ElicitResult(action="decline"), "the user chose decline"),
        (mcp_types.ElicitResult(action="cancel"), "the user chose cancel"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_elicitation_answers_reach_the_tool(
    rich_dir: Path, answer: Any, expected: str, mode: str
) -> None:
    """Accept (validated), decline, cancel; on 2026-07-28 through input-required results."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode, elicitation_callback=_elicit(answer)) as client:
            return await client.call_tool("ask_person", {})

    result = run(main())
    assert not result.is_error, text(result)
    assert text(result) == expected


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_that_does_not_match_the_form_is_refused(rich_dir: Path, mode: str) -> None:
    """An age that is not a number: an error result; the tool never sees it."""
    wrong = mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": "old"})

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode, elicitation_callback=_elicit(wrong)) as client:
            return await client.call_tool("ask_person", {})

    result = run(main())
    assert result.is_error
    assert "does not match the form" in text(result)
    assert "age" in text(result)


@pytest.mark.parametrize("mode", MODES)
def test_sampling_asks_the_clients_model(rich_dir: Path, mode: str) -> None:
    """sampling/createMessage goes to the client; its answer returns to the tool."""
    asked: list[Any] = []

    async def sampling(context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        asked.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="42"),
            model="test-model",
        )

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode, sampling_callback=sampling) as client:
            return await client.call_tool("ask_model", {"question": "meaning of life?"})

    result = run(main())
    assert text(result) == "model said: 42"
    (params,) = asked
    assert params.max_tokens == 50
    assert params.system_prompt == "be brief"
    assert params.messages[0].content.text == "meaning of life?"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["ask_person", "ask_model"])
def test_a_client_without_the_capability_gets_an_error_result(
    rich_dir: Path, mode: str, tool: str
) -> None:
    """No elicitation or sampling callback (no capability): a clear error, no hang."""

    async def main() -> mcp_types.CallToolResult:
        async with connect(rich_dir, mode) as client:
            return await client.call_tool(tool, {"question": "?"} if tool == "ask_model" else {})

    result = run(main())
    assert result.is_error
    assert "cannot ask" in text(result)


def test_cancelling_a_call_cancels_the_tool(rich_dir: Path, tmp_path: Path) -> None:
    """The client gives up on a call (notifications/cancelled): the tool is cancelled."""
    marker = tmp_path / "cancelled"

    async def main() -> None:
        async with connect(rich_dir) as client:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    client.call_tool("wait_forever", {"marker": str(marker)}), 1.0
                )
            for _ in range(100):
                if marker.exists():
                    return
                await asyncio.sleep(0.05)

    run(main())
    assert marker.read_text() == "cancelled"
