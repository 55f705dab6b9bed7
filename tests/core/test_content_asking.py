"""In-process: what tools ask of their caller goes to the application's handlers.

``CallHandlers`` per call (``ToolContext(channel=...)``) or for a toolset
(``toolset.handlers``); without them progress is dropped, logs go to the logger, and asking
is an error result that says what is missing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import CallHandlers, Elicitation, Sample, ToolContext, Toolset, tool


class Person(BaseModel):
    name: str
    age: int


@tool
async def ask(ctx: ToolContext) -> str:
    """Asks who the user is."""
    answer = await ctx.elicit("Who are you?", Person)
    return f"{answer.content.name} {answer.content.age}" if answer.accepted else answer.action


@tool
async def ask_schema(ctx: ToolContext) -> str:
    """Asks with a plain JSON Schema."""
    schema = {
        "type": "object",
        "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
        "required": ["color"],
    }
    answer = await ctx.elicit("Pick a color", schema)
    return answer.content["color"] if answer.accepted else answer.action


@tool
async def think(question: str, ctx: ToolContext) -> str:
    """Asks the caller's model."""
    sample = await ctx.sample([("user", question)], max_tokens=20, temperature=0.5)
    return f"{sample.model}: {sample.text}"


@tool
def work(n: int, ctx: ToolContext) -> str:
    """Reports progress and logs, from a sync tool (a worker thread)."""
    for i in range(n):
        ctx.report_progress(i + 1, n, "working")
    ctx.log("warning", "almost done")
    return "done"


@tool
async def numbers(n: int):
    """Yields 1..n."""
    for i in range(n):
        yield i + 1


TOOLS = [ask, ask_schema, think, work, numbers]


def call(name: str, args: dict[str, Any], handlers: CallHandlers | None, *, per_call: bool) -> Any:
    toolset = Toolset(TOOLS)
    if per_call:
        return asyncio.run(toolset.call(name, args, ToolContext(channel=handlers)))
    toolset.handlers = handlers
    return asyncio.run(toolset.call(name, args))


@pytest.mark.parametrize("per_call", [True, False])
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Elicitation("accept", {"name": "Ada", "age": 36}), "Ada 36"),
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
    ],
)
def test_elicitation_handler_answers(per_call: bool, answer: Any, expected: str) -> None:
    """Accept (validated into the model), decline, cancel; sync handler, both ways of giving it."""
    asked: list[tuple[str, dict[str, Any]]] = []

    def handler(message: str, schema: dict[str, Any]) -> Any:
        asked.append((message, schema))
        return answer

    result = call("ask", {}, CallHandlers(elicitation=handler), per_call=per_call)
    assert result.ok, result.content
    assert result.value == expected
    assert asked[0][0] == "Who are you?"
    assert set(asked[0][1]["properties"]) == {"name", "age"}


@pytest.mark.parametrize(
    ("tool_name", "answer", "words"),
    [
        ("ask", {"action": "accept", "content": {"name": "Ada", "age": "old"}}, "age"),
        ("ask_schema", {"action": "accept", "content": {"color": "green"}}, "color"),
        ("ask", {"action": "maybe"}, "not accept, decline or cancel"),
    ],
)
def test_an_answer_that_does_not_match_is_refused(tool_name: str, answer: Any, words: str) -> None:
    """The tool never sees it: the call is an error result naming the field."""

    async def handler(message: str, schema: dict[str, Any]) -> Any:
        return answer

    result = call(tool_name, {}, CallHandlers(elicitation=handler), per_call=True)
    assert result.is_error
    assert words in result.content


def test_sampling_handler_answers() -> None:
    """An async sampling handler gets MCP createMessage params; a Sample comes back."""
    seen: list[dict[str, Any]] = []

    async def sampling(params: dict[str, Any]) -> Sample:
        seen.append(params)
        return Sample(text="blue", model="m1")

    result = call("think", {"question": "sky?"}, CallHandlers(sampling=sampling), per_call=False)
    assert result.value == "m1: blue"
    assert seen == [
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "sky?"}}],
            "maxTokens": 20,
            "temperature": 0.5,
        }
    ]


def test_a_text_from_the_sampling_handler_is_the_answer() -> None:
    """A handler may answer with plain text."""
    result = call("think", {"question": "?"}, CallHandlers(sampling=lambda p: "yes"), per_call=True)
    assert result.value == ": yes"


@pytest.mark.parametrize("tool_name", ["ask", "think"])
@pytest.mark.parametrize("handlers", [None, CallHandlers()])
def test_without_a_handler_asking_is_an_error_result(tool_name: str, handlers: Any) -> None:
    """No handler (or no channel at all): an error result that says what is missing."""
    args = {"question": "?"} if tool_name == "think" else {}
    result = call(tool_name, args, handlers, per_call=handlers is not None)
    assert result.is_error
    missing = "elicitation handler" if tool_name == "ask" else "sampling handler"
    assert missing in result.content


def test_progress_and_logs_from_a_sync_tool_reach_the_handlers() -> None:
    """A sync tool's reports, sent from its worker thread, arrive in order."""
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[tuple[str, str]] = []
    handlers = CallHandlers(
        progress=lambda p, t, m: progress.append((p, t, m)),
        log=lambda level, message: logs.append((level, message)),
    )

    async def main() -> Any:
        toolset = Toolset(TOOLS)
        toolset.handlers = handlers
        result = await toolset.call("work", {"n": 3})
        for _ in range(100):  # sent from the thread: let the loop deliver them
            if len(progress) == 3 and logs:
                break
            await asyncio.sleep(0.01)
        return result

    assert asyncio.run(main()).value == "done"
    assert progress == [(1.0, 3, "working"), (2.0, 3, "working"), (3.0, 3, "working")]
    assert logs == [("warning", "almost done")]


def test_an_async_generator_yields_progress_in_process() -> None:
    """With handlers, each yield is a progress report; the result is the last item."""
    progress: list[float] = []
    handlers = CallHandlers(progress=lambda p, t, m: progress.append(p))
    result = call("numbers", {"n": 3}, handlers, per_call=True)
    assert result.value == 3
    assert progress == [1.0, 2.0, 3.0]


def test_without_handlers_logs_go_to_the_logger(caplog: pytest.LogCaptureFixture) -> None:
    """No channel: progress is dropped and the log line goes to ``toolpacks.tool``."""
    with caplog.at_level(logging.WARNING, logger="toolpacks.tool"):
        result = call("work", {"n": 2}, None, per_call=False)
    assert result.value == "done"
    assert "work: almost done" in caplog.text


def test_a_bad_log_level_is_an_error_result() -> None:
    """``ctx.log("loud", ...)`` raises ValueError inside the tool: an error result."""

    @tool
    def loud(ctx: ToolContext) -> str:
        """Logs at a level that does not exist."""
        ctx.log("loud", "hi")  # type: ignore[arg-type]
        return "no"

    result = asyncio.run(Toolset([loud]).call("loud", {}))
    assert result.is_error
