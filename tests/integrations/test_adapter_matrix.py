"""Deferral and approvals, one row per adapter (docs/guides/integrations/index.md's table).

Each row runs the framework's own loop with a scripted model (no network):

- **deferral**: the toolset defers ``get_customer``; the model calls ``search_tools`` (the
  framework's own in pydantic-ai, toolpacks' elsewhere), reads the found definition, then
  calls the deferred tool by name, and its result reaches the model;
- **approval**: ``delete`` requires approval and the toolset has no handler; the framework's
  approval mechanism asks, and the tool runs exactly when the person approved.

strands runs in a venv of its own: its rows are in ``test_strands.py`` (``DEFERRAL`` and the
approval scenarios there).
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Callable
from typing import Any

import llm
import pytest
from agents import Agent as OpenAIAgent
from agents import RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolpacks import Toolset, tool
from toolpacks.host._toolset import ToolEntry
from toolpacks.integrations import langchain as lc
from toolpacks.integrations import llm as tl
from toolpacks.integrations import openai_agents as oa
from toolpacks.integrations.pydantic_ai import as_toolset

NO_TRACING = RunConfig(tracing_disabled=True)
ADAPTERS = ["pydantic-ai", "openai-agents", "langchain", "llm"]


class World:
    """A deferred ``get_customer``, an approval-requiring ``delete``, and what ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        ran = self.ran

        @tool
        def get_customer(customer_id: str) -> str:
            """Look up a customer record in the CRM by its id."""
            ran.append(f"get_customer {customer_id}")
            return f"customer {customer_id}: Ada"

        @tool
        def now() -> str:
            """The current time."""
            return "noon"

        @tool(require_approval=True)
        def delete(path: str) -> str:
            """Delete a file."""
            ran.append(f"delete {path}")
            return f"deleted {path}"

        self.toolset = Toolset(
            [
                ToolEntry("get_customer", "crm.get_customer", "crm", get_customer, deferred=True),
                ToolEntry("now", "clock.now", "clock", now),
                ToolEntry("delete", "files.delete", "files", delete, require_approval=True),
            ]
        )


# -- pydantic-ai ---------------------------------------------------------------------------------


class _LocalSearch(FunctionModel):
    """A function model without native tool search: pydantic-ai's local ``search_tools``."""

    @classmethod
    def supported_native_tools(cls) -> frozenset[Any]:
        return frozenset()


def _pydantic_ai_deferral(world: World, capabilities: list[Any] | None = None) -> list[str]:
    seen: list[str] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        step = len(messages)
        if step == 1:
            assert "get_customer" not in [t.name for t in info.function_tools]
            return ModelResponse(parts=[ToolCallPart("search_tools", {"queries": ["customer"]})])
        seen.extend(str(p.content) for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        if step == 3:
            return ModelResponse(parts=[ToolCallPart("get_customer", {"customer_id": "c7"})])
        return ModelResponse(parts=[TextPart("done")])

    # No capabilities by default: pydantic-ai adds its tool search itself.
    agent = Agent(
        _LocalSearch(respond), toolsets=[as_toolset(world.toolset)], capabilities=capabilities
    )
    assert agent.run_sync("who is c7?").output == "done"
    return seen


def _pydantic_ai_approval(world: World, approve: bool) -> None:
    steps = [ToolCallPart("delete", {"path": "/tmp/a"}, tool_call_id="c1"), TextPart("done")]

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[steps.pop(0) if steps else TextPart("done")])

    agent = Agent(
        FunctionModel(respond),
        toolsets=[as_toolset(world.toolset)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("delete /tmp/a")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["c1"]
    assert world.ran == []
    results = DeferredToolResults(approvals={"c1": approve})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=results)


# -- openai-agents -------------------------------------------------------------------------------


def _outputs(result: Any) -> list[str]:
    return [str(i.output) for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]


def _openai_agents_deferral(world: World) -> list[str]:
    model = ScriptedModel(
        [
            [function_call("search_tools", {"query": "customer record"}, call_id="s1")],
            [function_call("get_customer", {"customer_id": "c7"}, call_id="g1")],
            [assistant_message("done")],
        ]
    )
    agent = OpenAIAgent(name="crm", model=model, tools=oa.as_tools(world.toolset))
    result = asyncio.run(Runner.run(agent, "who is c7?", run_config=NO_TRACING))
    assert result.final_output == "done"
    return _outputs(result)


def _openai_agents_approval(world: World, approve: bool) -> None:
    model = ScriptedModel(
        [[function_call("delete", {"path": "/tmp/a"}, call_id="c1")], [assistant_message("ok")]]
    )
    agent = OpenAIAgent(name="files", model=model, tools=oa.as_tools(world.toolset))

    async def scenario() -> None:
        first = await Runner.run(agent, "delete /tmp/a", run_config=NO_TRACING)
        assert [i.name for i in first.interruptions] == ["delete"]
        assert world.ran == []
        state = first.to_state()
        (state.approve if approve else state.reject)(first.interruptions[0])
        await Runner.run(agent, state, run_config=NO_TRACING)

    asyncio.run(scenario())


# -- LangChain -----------------------------------------------------------------------------------


class _ScriptedChat(GenericFakeChatModel):
    """A fake chat model answering with its messages in turn; it accepts tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _calls(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


def _langchain_deferral(world: World) -> list[str]:
    chat = _ScriptedChat(
        messages=iter(
            [
                _calls(("search_tools", {"query": "customer record"}, "s1")),
                _calls(("get_customer", {"customer_id": "c7"}, "g1")),
                AIMessage("done"),
            ]
        )
    )
    agent = create_agent(model=chat, tools=lc.as_tools(world.toolset))
    final = agent.invoke({"messages": [{"role": "user", "content": "who is c7?"}]})
    return [str(m.content) for m in final["messages"] if isinstance(m, ToolMessage)]


def _langchain_approval(world: World, approve: bool) -> None:
    chat = _ScriptedChat(
        messages=iter([_calls(("delete", {"path": "/tmp/a"}, "c1")), AIMessage("done")])
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on=lc.interrupt_on(world.toolset))
    agent = create_agent(
        model=chat,
        tools=lc.as_tools(world.toolset),
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": f"matrix-{approve}"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "delete"}]}, config)
    assert len(first["__interrupt__"]) == 1
    assert world.ran == []
    decision = {"type": "approve" if approve else "reject"}
    agent.invoke(Command(resume={"decisions": [decision]}), config)


# -- llm -----------------------------------------------------------------------------------------


class _ScriptedLLM(llm.Model):
    """An llm model that asks for the scripted tool calls in turn, then answers "done"."""

    model_id = "toolpacks-scripted"
    supports_tools = True

    def __init__(self, turns: list[list[tuple[str, dict[str, Any], str]]]) -> None:
        self.turns = list(turns)
        self.results: list[str] = []

    def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Any:
        self.results.extend(r.output for r in prompt.tool_results)
        calls = self.turns.pop(0) if self.turns else []
        for name, arguments, call_id in calls:
            response.add_tool_call(
                llm.ToolCall(name=name, arguments=arguments, tool_call_id=call_id)
            )
        yield "" if calls else "done"


def _llm_deferral(world: World) -> list[str]:
    model = _ScriptedLLM(
        [
            [("search_tools", {"query": "customer record"}, "s1")],
            [("get_customer", {"customer_id": "c7"}, "g1")],
        ]
    )
    model.chain("who is c7?", tools=tl.as_tools(world.toolset)).text()
    return model.results


def _llm_approval(world: World, approve: bool) -> None:
    model = _ScriptedLLM([[("delete", {"path": "/tmp/a"}, "c1")]])
    asked: list[str] = []

    def before_call(tool: Any, call: Any) -> None:  # what `llm --ta` does: ask the person
        asked.append(call.tool_call_id)
        assert world.ran == []
        if not approve:
            raise llm.CancelToolCall("the person said no")

    tools = tl.as_tools(world.toolset, llm_approves=True)
    model.chain("delete /tmp/a", tools=tools, before_call=before_call).text()
    assert asked == ["c1"]


DEFERRAL: dict[str, Callable[[World], list[str]]] = {
    "pydantic-ai": _pydantic_ai_deferral,
    "openai-agents": _openai_agents_deferral,
    "langchain": _langchain_deferral,
    "llm": _llm_deferral,
}
APPROVAL: dict[str, Callable[[World, bool], None]] = {
    "pydantic-ai": _pydantic_ai_approval,
    "openai-agents": _openai_agents_approval,
    "langchain": _langchain_approval,
    "llm": _llm_approval,
}


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_deferred_tool_is_found_by_search_then_called(adapter: str) -> None:
    """The model finds the deferred tool with search_tools, calls it, and gets its result."""
    world = World()
    results = DEFERRAL[adapter](world)
    assert world.ran == ["get_customer c7"]
    assert _found(results[0]) == "get_customer"  # the search's answer: the deferred tool
    assert results[-1] == "customer c7: Ada"


def _found(answer: str) -> str:
    """The first tool a search answer names (pydantic-ai's own, or toolpacks' JSON)."""
    if answer.startswith("{'discovered_tools'"):  # pydantic-ai's tool search, as text
        return str(ast.literal_eval(answer)["discovered_tools"][0]["name"])
    return str(json.loads(answer)["tools"][0]["name"])


@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_frameworks_approval_decides(adapter: str, approve: bool) -> None:
    """No handler: the framework asks; approved, the tool runs once; rejected, never."""
    world = World()
    APPROVAL[adapter](world, approve)
    assert world.ran == (["delete /tmp/a"] if approve else [])


def test_pydantic_ai_with_its_tool_search_capability_named_too() -> None:
    """``capabilities=[ToolSearch()]``, as pydantic-ai's docs show it, finds the tool the same."""
    from pydantic_ai.capabilities import ToolSearch

    world = World()
    results = _pydantic_ai_deferral(world, [ToolSearch()])
    assert world.ran == ["get_customer c7"]
    assert _found(results[0]) == "get_customer"
    assert results[-1] == "customer c7: Ada"


def test_llm_without_its_approval_refuses_and_names_the_fix() -> None:
    """Without llm's approval step (no ``--ta``): refused, the message names ``--ta``."""
    world = World()
    model = _ScriptedLLM([[("delete", {"path": "/tmp/a"}, "c1")]])
    model.chain("delete /tmp/a", tools=tl.as_tools(world.toolset)).text()
    assert world.ran == []
    [refusal] = model.results
    assert refusal.startswith("Error: Tool 'delete' requires approval")
    assert "--ta" in refusal


def test_llm_lists_each_parameter() -> None:
    """``llm tools list`` prints the implementation's signature: each parameter, no **kwargs."""
    import inspect

    @tool
    def find(query: str, limit: int = 5, exact: bool = False) -> str:
        """Find things."""
        return query

    [made] = tl.as_tools(Toolset([find]))
    shown = str(inspect.signature(made.implementation))
    assert shown == "(query: str, limit: int = 5, exact: bool = False, *, llm_tool_call=None)"
    text = made.implementation(llm_tool_call=llm.ToolCall(name="find", arguments={"query": "x"}))
    assert text == "x"


def test_a_toolset_handler_decides_in_every_adapter() -> None:
    """With an approval handler nothing is put to the framework: the handler's answer holds."""
    world = World()
    world.toolset = Toolset(list(world.toolset.entries()), approval=lambda request: False)
    assert lc.interrupt_on(world.toolset) == {}
    [delete] = [t for t in oa.as_tools(world.toolset) if t.name == "delete"]
    assert delete.needs_approval is False
    [made] = [t for t in tl.as_tools(world.toolset, llm_approves=True) if t.name == "delete"]
    with pytest.raises(Exception, match="requires approval"):
        made.implementation(path="/tmp/a")
    assert world.ran == []


def test_the_guides_table_names_a_test_per_adapter() -> None:
    """docs/guides/integrations/index.md: one row per adapter, each naming tests that exist."""
    import re
    from pathlib import Path

    here = Path(__file__).resolve().parent
    page = here.parents[1] / "docs" / "guides" / "integrations" / "index.md"
    rows = [
        line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| [")
    ]
    assert [re.match(r"\| \[([^\]]+)\]", row)[1] for row in rows] == [  # type: ignore[index]
        "pydantic-ai",
        "openai-agents",
        "LangChain",
        "Strands Agents",
        "llm",
    ]
    for row in rows:
        tests = row.rsplit("|", 2)[1]
        files = re.findall(r"`(test_\w+\.py)`", tests)
        assert files, row
        for name in re.findall(r"`(test_\w+)`", tests):
            assert any(f"def {name}(" in (here / f).read_text(encoding="utf-8") for f in files), (
                name
            )
        for param in re.findall(r"`\[([\w-]+)\]`", tests):
            assert param in ADAPTERS, param
