"""Approvals in real agent loops: the tool runs exactly when a person approved the call.

Each framework's own approval mechanism pauses the run (openai-agents' interruptions,
pydantic-ai's deferred tool calls, LangChain's human-in-the-loop middleware), for a tool that
requires approval ("static") and for an ``authorize`` hook that answers "ask" ("hook"); the
person approves or rejects through the framework, and toolpacks neither asks again nor
denies an approved call. The hooks are asked once per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

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
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolpacks import ToolContext, Toolset, tool
from toolpacks.integrations import langchain as lc
from toolpacks.integrations import openai_agents as oa
from toolpacks.integrations.pydantic_ai import as_toolset

MODES = ["hook", "static"]
NO_TRACING = RunConfig(tracing_disabled=True)


class Files:
    """A ``delete`` tool that records what it deleted, and a hook that records its calls."""

    def __init__(self, mode: str, policy: Callable[[str], str | None] | None = None) -> None:
        self.ran: list[str] = []
        self.asked: list[str] = []
        ran, asked = self.ran, self.asked

        @tool(require_approval=mode == "static")
        def delete(path: str) -> str:
            """Delete a file."""
            ran.append(path)
            return f"deleted {path}"

        def authorize(arguments: dict[str, Any], context: ToolContext, **_: Any) -> str | None:
            asked.append(context.call_id)
            if policy is not None:
                return policy(arguments["path"])
            return "ask" if mode == "hook" else None

        self.toolset = Toolset([delete], authorizers=[authorize])


# -- openai-agents -------------------------------------------------------------------------------


def _tool_outputs(result: Any) -> list[str]:
    return [i.output for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]


@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("mode", MODES)
def test_openai_agents_pauses_and_runs_exactly_when_approved(mode: str, approve: bool) -> None:
    """The run stops with an interruption; approved, the call runs once; rejected, never."""
    files = Files(mode)
    model = ScriptedModel(
        [
            [function_call("delete", {"path": "/tmp/a"}, call_id="c1")],
            [assistant_message("done")],
        ]
    )
    agent = OpenAIAgent(name="files", model=model, tools=oa.as_tools(files.toolset))

    async def scenario() -> Any:
        first = await Runner.run(agent, "delete /tmp/a", run_config=NO_TRACING)
        assert [i.name for i in first.interruptions] == ["delete"]
        assert files.ran == []
        state = first.to_state()
        if approve:
            state.approve(first.interruptions[0])
        else:
            state.reject(first.interruptions[0])
        return await Runner.run(agent, state, run_config=NO_TRACING)

    result = asyncio.run(scenario())
    assert result.final_output == "done"
    assert files.ran == (["/tmp/a"] if approve else [])
    outputs = _tool_outputs(result)
    assert len(outputs) == 1
    assert (outputs[0] == "deleted /tmp/a") is approve
    assert files.asked == ["c1"]  # the hooks were asked once, before the pause
    model.assert_complete()


def test_openai_agents_pauses_only_the_calls_a_hook_asks_about() -> None:
    """Per call: a hook's "allow" runs at once, "deny" is refused unasked, "ask" pauses."""
    files = Files("hook", lambda path: {"/tmp": "allow", "/etc": "deny"}.get(path, "ask"))
    model = ScriptedModel(
        [
            [
                function_call("delete", {"path": "/tmp"}, call_id="c1"),
                function_call("delete", {"path": "/etc"}, call_id="c2"),
                function_call("delete", {"path": "/home"}, call_id="c3"),
            ],
            [assistant_message("done")],
        ]
    )
    agent = OpenAIAgent(name="files", model=model, tools=oa.as_tools(files.toolset))

    async def scenario() -> Any:
        first = await Runner.run(agent, "clean up", run_config=NO_TRACING)
        assert [i.raw_item.call_id for i in first.interruptions] == ["c3"]
        state = first.to_state()
        state.approve(first.interruptions[0])
        return await Runner.run(agent, state, run_config=NO_TRACING)

    result = asyncio.run(scenario())
    assert sorted(files.ran) == ["/home", "/tmp"]
    outputs = _tool_outputs(result)
    assert any("not permitted by policy" in o for o in outputs)
    assert sorted(files.asked) == ["c1", "c2", "c3"]


# -- pydantic-ai ---------------------------------------------------------------------------------


def _scripted(*responses: ModelResponse) -> FunctionModel:
    steps = list(responses)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return steps.pop(0)

    return FunctionModel(respond)


@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("mode", MODES)
def test_pydantic_ai_defers_and_runs_exactly_when_approved(mode: str, approve: bool) -> None:
    """The run ends with DeferredToolRequests; the approved call runs once, a denied never."""
    files = Files(mode)
    call = ModelResponse(parts=[ToolCallPart("delete", '{"path": "/tmp/a"}', tool_call_id="c1")])
    agent = Agent(
        _scripted(call),
        toolsets=[as_toolset(files.toolset)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("delete /tmp/a")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["c1"]
    assert files.ran == []
    seen: list[ModelMessage] = []

    def finish(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(messages)
        return ModelResponse(parts=[TextPart("done")])

    second = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": approve}),
        model=FunctionModel(finish),
    )
    assert second.output == "done"
    assert files.ran == (["/tmp/a"] if approve else [])
    request = seen[-1]
    assert isinstance(request, ModelRequest)
    (part,) = request.parts
    assert isinstance(part, ToolReturnPart)
    assert (part.content == "deleted /tmp/a") is approve


# -- LangChain -----------------------------------------------------------------------------------


class _ScriptedChat(GenericFakeChatModel):
    """A fake chat model that answers with its messages in turn and accepts tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _chat(*tool_calls: tuple[str, dict[str, Any], str]) -> _ScriptedChat:
    calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in tool_calls]
    return _ScriptedChat(messages=iter([AIMessage("", tool_calls=calls), AIMessage("done")]))


def _langchain_agent(files: Files, chat: _ScriptedChat, **middleware: Any) -> Any:
    hitl = HumanInTheLoopMiddleware(interrupt_on=lc.interrupt_on(files.toolset), **middleware)
    return create_agent(
        model=chat,
        tools=lc.as_tools(files.toolset),
        middleware=[hitl],
        checkpointer=InMemorySaver(),
    )


def _tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("mode", MODES)
def test_langchain_hitl_middleware_approves_for_toolpacks(mode: str, approve: bool) -> None:
    """The middleware pauses; the approved call runs once (not denied); a rejected never."""
    files = Files(mode)
    agent = _langchain_agent(files, _chat(("delete", {"path": "/tmp/a"}, "c1")))
    config: Any = {"configurable": {"thread_id": f"{mode}-{approve}"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "delete"}]}, config)
    (pause,) = first["__interrupt__"]
    assert [a["name"] for a in pause.value["action_requests"]] == ["delete"]
    assert files.ran == []
    decision = {"type": "approve"} if approve else {"type": "reject"}
    final = agent.invoke(Command(resume={"decisions": [decision]}), config)
    assert files.ran == (["/tmp/a"] if approve else [])
    (message,) = _tool_messages(final)
    assert (message.content == "deleted /tmp/a") is approve
    assert (message.status == "success") is approve
    assert files.asked == ["c1"]  # asked once: not again on resume, nor in the call


def test_langchain_per_call_mode_approves_for_toolpacks_too() -> None:
    """``interrupt_mode="per_call"``: one interrupt per call, approved calls run once."""
    files = Files("static")
    agent = _langchain_agent(
        files, _chat(("delete", {"path": "/tmp/a"}, "c1")), interrupt_mode="per_call"
    )
    config: Any = {"configurable": {"thread_id": "per-call"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "delete"}]}, config)
    (pause,) = first["__interrupt__"]
    final = agent.invoke(Command(resume={pause.id: {"type": "approve"}}), config)
    assert files.ran == ["/tmp/a"]
    (message,) = _tool_messages(final)
    assert message.content == "deleted /tmp/a"


def test_langchain_pauses_only_the_calls_a_hook_asks_about() -> None:
    """A hook's "allow" runs unpaused and "deny" is refused unpaused; "ask" pauses."""
    files = Files("hook", lambda path: {"/tmp": "allow", "/etc": "deny"}.get(path, "ask"))
    chat = _chat(
        ("delete", {"path": "/tmp"}, "c1"),
        ("delete", {"path": "/etc"}, "c2"),
        ("delete", {"path": "/home"}, "c3"),
    )
    agent = _langchain_agent(files, chat)
    config: Any = {"configurable": {"thread_id": "mixed"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "clean"}]}, config)
    (pause,) = first["__interrupt__"]
    assert [a["args"] for a in pause.value["action_requests"]] == [{"path": "/home"}]
    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert sorted(files.ran) == ["/home", "/tmp"]
    refused = [m for m in _tool_messages(final) if m.status == "error"]
    assert [m.tool_call_id for m in refused] == ["c2"]
    assert "not permitted by policy" in str(refused[0].content)
    assert sorted(files.asked) == ["c1", "c2", "c3"]


def test_langchain_an_edited_call_is_put_to_the_hooks_again() -> None:
    """A reviewer's edit runs approved, but a hook that denies the new arguments denies it."""
    files = Files("hook", lambda path: "deny" if path == "/etc" else "ask")
    hitl_edit = HumanInTheLoopMiddleware(
        interrupt_on=lc.interrupt_on(files.toolset, allowed_decisions=["approve", "edit"])
    )
    agent = create_agent(
        model=_chat(("delete", {"path": "/tmp/a"}, "c1")),
        tools=lc.as_tools(files.toolset),
        middleware=[hitl_edit],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "edit"}}
    agent.invoke({"messages": [{"role": "user", "content": "delete"}]}, config)
    edit = {"type": "edit", "edited_action": {"name": "delete", "args": {"path": "/etc"}}}
    final = agent.invoke(Command(resume={"decisions": [edit]}), config)
    assert files.ran == []
    (message,) = _tool_messages(final)
    assert "not permitted by policy" in str(message.content)


def test_langchain_a_toolset_with_a_handler_gets_no_interrupts() -> None:
    """With an approval handler, the handler decides in the call: nothing to interrupt on."""

    @tool(require_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return path

    assert lc.interrupt_on(Toolset([delete], approval=lambda request: True)) == {}
    assert list(lc.interrupt_on(Toolset([delete]))) == ["delete"]


def test_langchain_a_rejected_calls_verdict_is_not_kept_for_a_later_call_with_its_id() -> None:
    """A later call reusing a rejected call's id, with other arguments, is decided anew.

    A rejected call never reaches the tool, so its verdict stayed behind and paused the
    later call although the hooks allow it.
    """
    files = Files("hook", lambda path: "allow" if path == "/tmp" else "ask")
    first_agent = _langchain_agent(files, _chat(("delete", {"path": "/home"}, "c1")))
    config: Any = {"configurable": {"thread_id": "rejected-first"}}
    first = first_agent.invoke({"messages": [{"role": "user", "content": "delete"}]}, config)
    assert first["__interrupt__"]
    first_agent.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    assert files.ran == []
    later_agent = _langchain_agent(files, _chat(("delete", {"path": "/tmp"}, "c1")))
    later_config: Any = {"configurable": {"thread_id": "same-id-later"}}
    later = later_agent.invoke({"messages": [{"role": "user", "content": "clean"}]}, later_config)
    assert "__interrupt__" not in later, "the old verdict paused a call the hooks allow"
    assert files.ran == ["/tmp"]
