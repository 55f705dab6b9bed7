"""Adapters carry the principal: from a ``for_principal`` view, and from the framework's run.

pydantic-ai reads ``RunContext.deps`` (a Principal, a ToolContext, or an object with a
``principal`` attribute), openai-agents ``RunContextWrapper.context``, langchain
``config["configurable"]["principal"]``. Each with the real framework (a FunctionModel, a
ScriptedModel, ``BaseTool.invoke``); the tool sees the subject and scopes, and a call made
for no principal, or one lacking the scope, is refused.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from toolpacks import Principal, ToolContext, Toolset, tool

ALICE = Principal("alice", scopes={"repo.read"})
BOB = Principal("bob", scopes={"other"})


@tool(scopes=["repo.read"])
def whoami(note: str, context: ToolContext) -> str:
    """Say who called."""
    p = context.principal
    return f"{p.subject if p else None}:{','.join(sorted(p.scopes)) if p else ''}"


@tool
def ping(word: str) -> str:
    """Answer a ping."""
    return word


def toolset() -> Toolset:
    return Toolset([whoami, ping], agent="a")


@dataclass
class Deps:
    principal: Principal | None


# -- pydantic-ai -----------------------------------------------------------------------------


def _pydantic_run(ts: Toolset, deps: Any) -> tuple[list[str], str]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolpacks.integrations.pydantic_ai import as_toolset

    seen: dict[str, Any] = {}

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if "tools" not in seen:
            seen["tools"] = sorted(t.name for t in info.function_tools)
            return ModelResponse(parts=[ToolCallPart("whoami", {"note": "n"}, tool_call_id="c1")])
        for part in messages[-1].parts:
            seen["answer"] = str(getattr(part, "content", ""))
            if isinstance(part, ToolReturnPart):
                seen["answer"] = str(part.content)
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), toolsets=[as_toolset(ts)], deps_type=object)
    agent.run_sync("who", deps=deps)
    return seen["tools"], seen["answer"]


def test_pydantic_ai_with_a_view_lists_and_calls_as_its_principal() -> None:
    tools, answer = _pydantic_run(toolset().for_principal(ALICE), None)
    assert tools == ["ping", "whoami"]
    assert answer == "alice:repo.read"


def test_pydantic_ai_reads_the_principal_from_deps() -> None:
    for deps in (ALICE, Deps(ALICE), ToolContext(principal=ALICE)):
        _, answer = _pydantic_run(toolset(), deps)
        assert answer == "alice:repo.read", deps
    _, refused = _pydantic_run(toolset(), Deps(BOB))
    assert "missing scope repo.read" in refused
    _, nobody = _pydantic_run(toolset(), None)
    assert "no principal" in nobody


# -- openai-agents ---------------------------------------------------------------------------


def _agents_run(ts: Toolset, context: Any) -> str:
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message, function_call

    from toolpacks.integrations.openai_agents import as_tools

    model = ScriptedModel(
        [[function_call("whoami", {"note": "n"}, call_id="c1")], [assistant_message("ok")]]
    )
    agent = Agent(name="who", model=model, tools=as_tools(ts))
    result = asyncio.run(
        Runner.run(agent, "go", context=context, run_config=RunConfig(tracing_disabled=True))
    )
    outputs = [i.output for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]
    return str(outputs[0])


def test_openai_agents_reads_the_principal_from_the_run_context() -> None:
    assert _agents_run(toolset(), Deps(ALICE)) == "alice:repo.read"
    assert _agents_run(toolset(), {"principal": ALICE}) == "alice:repo.read"
    assert "missing scope repo.read" in _agents_run(toolset(), Deps(BOB))
    assert "no principal" in _agents_run(toolset(), None)


def test_openai_agents_with_a_view() -> None:
    from toolpacks.integrations.openai_agents import as_tools

    view = toolset().for_principal(ALICE)
    assert sorted(t.name for t in as_tools(view)) == ["ping", "whoami"]
    assert sorted(t.name for t in as_tools(toolset().for_principal(None))) == ["ping"]
    assert _agents_run(view, None) == "alice:repo.read"


# -- langchain -------------------------------------------------------------------------------


def _langchain_tool(ts: Toolset) -> Any:
    from toolpacks.integrations.langchain import as_tools

    return {t.name: t for t in as_tools(ts)}["whoami"]


def _call() -> dict[str, Any]:
    return {"name": "whoami", "args": {"note": "n"}, "id": "c1", "type": "tool_call"}


def test_langchain_reads_the_principal_from_configurable() -> None:
    lc = _langchain_tool(toolset())
    message = lc.invoke(_call(), {"configurable": {"principal": ALICE}})
    assert message.content == "alice:repo.read"
    refused = lc.invoke(_call(), {"configurable": {"principal": BOB}})
    assert "missing scope repo.read" in refused.content
    assert "no principal" in lc.invoke(_call()).content
    async_message = asyncio.run(lc.ainvoke(_call(), {"configurable": {"principal": ALICE}}))
    assert async_message.content == "alice:repo.read"


def test_langchain_with_a_view() -> None:
    view = toolset().for_principal(ALICE)
    assert _langchain_tool(view).invoke(_call()).content == "alice:repo.read"
    from toolpacks.integrations.langchain import as_tools

    assert [t.name for t in as_tools(toolset().for_principal(None))] == ["ping"]


def test_the_fast_road_never_skips_the_views_principal() -> None:
    """A view never takes pydantic-ai's short road: only Toolset.call puts its principal in."""
    from toolpacks.integrations._common import plain_entry

    assert plain_entry(toolset(), "ping") is not None
    assert plain_entry(toolset().for_principal(ALICE), "ping") is None
    assert json.dumps(_pydantic_run(toolset().for_principal(ALICE), None)[1]) == json.dumps(
        "alice:repo.read"
    )
