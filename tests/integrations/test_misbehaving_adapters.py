"""Tools that misbehave, through each framework adapter: an error in the framework's idiom.

Whatever exception a tool raises (``StopIteration``, ``GeneratorExit``, ``SystemExit``, a
``BaseException`` of its own, an exception whose text cannot be made), the framework gets
toolpacks' error message as it gets any tool failure, never a hang and never an exception
``except Exception`` cannot catch; and the next call through the same adapter answers.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolpacks import ToolError, Toolset, tool


class OwnBase(BaseException):
    """A ``BaseException`` subclass of a tool's own."""


class UnprintableToolError(ToolError):
    """A ``ToolError`` whose text cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


KINDS: list[type[BaseException]] = [
    StopIteration,
    GeneratorExit,
    StopAsyncIteration,
    KeyboardInterrupt,
    SystemExit,
    OwnBase,
    UnprintableToolError,
]


def toolset_raising(kind: type[BaseException]) -> Toolset:
    """``bad`` (sync, raising ``kind``), ``bad_async`` (the same, async) and ``fine``."""

    @tool
    def bad() -> str:
        """Raise."""
        raise kind()

    @tool
    async def bad_async() -> str:
        """Raise."""
        raise kind()

    @tool
    def fine() -> str:
        """Answer."""
        return "fine"

    return Toolset([bad, bad_async, fine])


def _pydantic_ai(toolset: Toolset, name: str) -> str:
    from pydantic_ai import ModelRetry, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks.integrations.pydantic_ai import as_toolset

    adapter = as_toolset(toolset)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def run() -> str:
        listed = (await adapter.get_tools(ctx))[name]
        try:
            return str(await adapter.call_tool(name, {}, ctx, listed))
        except ModelRetry as exc:
            return str(exc)

    return str(asyncio.run(asyncio.wait_for(run(), 20)))


def _openai_agents(toolset: Toolset, name: str) -> str:
    from agents.tool_context import ToolContext as AgentsToolContext

    from toolpacks.integrations.openai_agents import as_tools

    function_tool = {t.name: t for t in as_tools(toolset)}[name]
    ctx = AgentsToolContext(None, tool_name=name, tool_call_id="c1", tool_arguments="{}")
    return str(asyncio.run(asyncio.wait_for(function_tool.on_invoke_tool(ctx, "{}"), 20)))


def _langchain(toolset: Toolset, name: str) -> str:
    from toolpacks.integrations.langchain import as_tools

    lc_tool = {t.name: t for t in as_tools(toolset)}[name]
    message = lc_tool.invoke({"name": name, "args": {}, "id": "c1", "type": "tool_call"})
    return str(message.content)


def _llm(toolset: Toolset, name: str) -> str:
    from toolpacks.integrations.llm import as_tools

    implementation: Any = {t.name: t for t in as_tools(toolset)}[name].implementation
    try:
        return json.dumps(implementation())
    except ToolError as exc:  # llm's idiom for a failed tool
        return str(exc)


ROADS = {
    "pydantic-ai": _pydantic_ai,
    "openai-agents": _openai_agents,
    "langchain": _langchain,
    "llm": _llm,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["bad", "bad_async"])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("road", ROADS)
def test_every_exception_kind_is_the_frameworks_error_and_the_next_call_answers(
    road: str, kind: type[BaseException], name: str
) -> None:
    """The framework gets "Tool '...' failed", then a normal call through it answers."""
    toolset = toolset_raising(kind)
    call = ROADS[road]
    try:
        text = call(toolset, name)
    except Exception as exc:  # an ordinary exception is a framework's idiom too
        text = str(exc)
    assert f"Tool '{name}' failed" in text, (road, kind, text)
    assert "fine" in call(toolset, "fine")
