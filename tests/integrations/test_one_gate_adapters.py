"""One gate on every framework road: hostile arguments never reach the tool through an adapter.

The same values ``tests/security/test_one_gate.py`` refuses in-process are sent through each
adapter installed in this venv (pydantic-ai, openai-agents, langchain-core, llm); each must
refuse them in its framework's idiom with toolpacks' own message, and the tool must not run.
strands is checked the same way in its own venv (``test_strands.py``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.integrations.conftest import Trace

from toolpacks import ToolError, Toolset

HOSTILE: dict[str, tuple[dict[str, Any], str]] = {
    "true for int": ({"a": True, "b": 1}, "got boolean"),
    "text for int that is not finite": ({"a": "1e999", "b": 1}, "finite"),
    "4000-digit integer": ({"a": 10**4000, "b": 1}, "too long"),
    "lone surrogate in a list": ({"numbers": [1], "label": "x\ud800"}, "Unicode"),
}


def _tool_for(arguments: dict[str, Any]) -> str:
    return "total" if "numbers" in arguments else "add"


def _pydantic_ai(toolset: Toolset, name: str, arguments: dict[str, Any]) -> str:
    from pydantic_ai import ModelRetry, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks.integrations.pydantic_ai import as_toolset

    adapter = as_toolset(toolset)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def run() -> str:
        listed = (await adapter.get_tools(ctx))[name]
        try:
            await adapter.call_tool(name, arguments, ctx, listed)
        except ModelRetry as exc:
            return str(exc)
        raise AssertionError("hostile arguments were not refused")

    return asyncio.run(run())


def _openai_agents(toolset: Toolset, name: str, arguments: dict[str, Any]) -> str:
    from agents.tool_context import ToolContext as AgentsToolContext

    from toolpacks.integrations.openai_agents import as_tools

    function_tool = {t.name: t for t in as_tools(toolset)}[name]
    text = json.dumps(arguments, ensure_ascii=True)  # the model's text, surrogate escaped
    ctx = AgentsToolContext(None, tool_name=name, tool_call_id="c1", tool_arguments=text)
    return str(asyncio.run(function_tool.on_invoke_tool(ctx, text)))


def _langchain(toolset: Toolset, name: str, arguments: dict[str, Any]) -> str:
    from toolpacks.integrations.langchain import as_tools

    lc_tool = {t.name: t for t in as_tools(toolset)}[name]
    call = {"name": name, "args": arguments, "id": "c1", "type": "tool_call"}
    message = lc_tool.invoke(call)
    assert message.status == "error"
    return str(message.content)


def _llm(toolset: Toolset, name: str, arguments: dict[str, Any]) -> str:
    from toolpacks.integrations.llm import as_tools

    implementation: Any = {t.name: t for t in as_tools(toolset)}[name].implementation
    with pytest.raises(ToolError) as refused:
        implementation(**arguments)
    return str(refused.value)


ROADS = {
    "pydantic-ai": _pydantic_ai,
    "openai-agents": _openai_agents,
    "langchain": _langchain,
    "llm": _llm,
}


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_arguments_are_refused_by_every_adapter(
    road: str, case: str, toolset: Toolset, trace: Trace
) -> None:
    """The framework gets toolpacks' invalid-arguments message; the tool never runs."""
    arguments, words = HOSTILE[case]
    name = _tool_for(arguments)
    text = ROADS[road](toolset, name, arguments)
    assert "Invalid arguments" in text, (road, case, text)
    assert words.lower() in text.lower(), (road, case, text)
    assert trace.ran == [], (road, case)
