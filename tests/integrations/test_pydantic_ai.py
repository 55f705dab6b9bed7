"""pydantic-ai: ``as_toolset(ts)`` in a real ``Agent`` driven by ``FunctionModel``/``TestModel``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    RunContext,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, UnexpectedModelBehavior
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage

from toolpacks import ToolContext, Toolset, tool
from toolpacks.core.call._options import CallOptions
from toolpacks.host._approval import ApprovalRequest
from toolpacks.integrations.pydantic_ai import ToolpacksToolset, as_toolset

from .conftest import MakeToolset, Total, Trace, import_without

Step = ModelResponse | Callable[[list[ModelMessage], AgentInfo], ModelResponse]


class Script:
    """A FunctionModel that answers with ``steps`` in turn and keeps what it was sent."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.seen: list[list[ModelMessage]] = []
        self.tools: list[ToolDefinition] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        self.tools = list(info.function_tools)
        step = self.steps.pop(0)
        return step if isinstance(step, ModelResponse) else step(messages, info)

    def last_parts(self) -> Sequence[Any]:
        """The parts of the last request the model received."""
        request = self.seen[-1][-1]
        assert isinstance(request, ModelRequest)
        return request.parts


def calls(*calls: tuple[str, Any, str]) -> ModelResponse:
    """A model response calling tools: (name, arguments, call id) each."""
    return ModelResponse(parts=[ToolCallPart(n, a, tool_call_id=i) for n, a, i in calls])


DONE = ModelResponse(parts=[TextPart("done")])


def is_retry(part: Any) -> bool:
    """Whether ``part`` asks the model to retry (a retried tool return, or a retry prompt)."""
    if isinstance(part, ToolReturnPart):
        return part.outcome == "retried"
    return isinstance(part, RetryPromptPart)


def expected(toolset: Toolset, name: str, arguments: Any) -> str:
    """The text toolpacks itself gives for this call (the adapter must pass it on)."""
    return asyncio.run(toolset.call(name, arguments)).content


# -- calls go through the toolset -----------------------------------------------------------


def test_a_call_runs_through_the_toolset_with_the_provider_call_id(
    toolset: Toolset, trace: Trace
) -> None:
    """The toolset's authorize hook sees the call, under pydantic-ai's tool call id."""
    script = Script(calls(("add", '{"a": 1, "b": 2}', "call-7")), DONE)
    result = Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("add")
    assert result.output == "done"
    assert trace.authorized == [("add", "call-7", {"a": 1, "b": 2})]
    (part,) = script.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert (part.content, part.tool_call_id) == (3, "call-7")


def test_test_model_calls_every_tool_with_arguments_it_invents() -> None:
    """With TestModel (arguments as a dict, not text) the call still goes through toolpacks."""
    seen: list[str] = []

    @tool
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    toolset = Toolset([greet], authorizers=[lambda **kw: seen.append(kw["context"].call_id)])
    result = Agent(TestModel(), toolsets=[as_toolset(toolset)]).run_sync("hi")
    assert result.output == '{"greet":"hello a"}'
    assert seen == ["pyd_ai_tool_call_id__greet"]


def test_tool_definitions_come_from_the_toolset(toolset: Toolset) -> None:
    """Names, descriptions and input schemas are the toolset's; metadata names the tool."""
    script = Script(DONE)
    Agent(script.model, toolsets=[as_toolset(toolset, strict=True)]).run_sync("hi")
    neutral = {d["name"]: d for d in toolset.definitions("neutral")}
    assert [t.name for t in script.tools] == toolset.names()
    for definition in script.tools:
        spec = neutral[definition.name]
        assert definition.parameters_json_schema == spec["input_schema"]
        assert definition.description == spec["description"]
        assert definition.strict is True
        assert definition.kind == "function"
        assert definition.metadata is not None
        assert definition.metadata["toolpacks"]["qualified_name"] == definition.name
    delete = next(t for t in script.tools if t.name == "delete")
    assert delete.metadata is not None
    assert delete.metadata["toolpacks"]["require_approval"] is True


def test_strict_is_left_to_pydantic_ai_by_default(toolset: Toolset) -> None:
    """Without strict=..., ToolDefinition.strict is None (pydantic-ai decides per model)."""
    assert {d.strict for d in as_toolset(toolset).tool_definitions()} == {None}


# -- errors in pydantic-ai's idiom ------------------------------------------------------------


def test_invalid_arguments_are_a_retry_carrying_toolpacks_message(
    toolset: Toolset, trace: Trace
) -> None:
    """Bad arguments reach the model as a RetryPromptPart with toolpacks' text; it retries."""
    message = expected(toolset, "add", '{"a": 1, "b": "x"}')
    trace.authorized.clear()
    script = Script(
        calls(("add", '{"a": 1, "b": "x"}', "c1")),
        calls(("add", '{"a": 1, "b": 2}', "c2")),
        DONE,
    )
    agent = Agent(script.model, toolsets=[as_toolset(toolset)])
    assert agent.run_sync("add").output == "done"
    (retry,) = script.seen[1][-1].parts
    assert is_retry(retry)
    assert retry.content == message
    assert "b: Input should be a valid integer" in message
    assert trace.ran == ["add"]  # the tool ran once: for the corrected call


def test_duplicate_keys_in_the_sent_text_reach_toolpacks_gate(toolset: Toolset) -> None:
    """The model's text goes to the gate as sent: a duplicated key is refused, not merged."""
    sent = '{"a": 1, "a": 5, "b": 2}'
    message = expected(toolset, "add", sent)
    script = Script(calls(("add", sent, "c1")), DONE)
    Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("add")
    (retry,) = script.last_parts()
    assert is_retry(retry)
    assert retry.content == message
    assert "'a'" in message


def test_text_that_is_not_json_is_a_retry_with_toolpacks_message(toolset: Toolset) -> None:
    """Arguments that do not parse get toolpacks' wording too."""
    message = expected(toolset, "add", '{"a": 1,')
    script = Script(calls(("add", '{"a": 1,', "c1")), DONE)
    Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("add")
    (retry,) = script.last_parts()
    assert is_retry(retry)
    assert retry.content == message


def test_max_retries_bounds_the_retries(toolset: Toolset) -> None:
    """With max_retries=0 a second bad call ends the run, as for pydantic-ai's own tools."""
    bad = calls(("add", '{"a": "x", "b": 1}', "c1"))
    script = Script(bad, bad, DONE)
    agent = Agent(script.model, toolsets=[as_toolset(toolset, max_retries=0)])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries"):
        agent.run_sync("add")


def test_a_failing_tool_is_a_failed_tool_return_with_toolpacks_text(
    toolset: Toolset,
) -> None:
    """A tool that raises gives a failed ToolReturnPart with toolpacks' (masked) message."""
    message = expected(toolset, "explode", {"reason": "boom"})
    script = Script(calls(("explode", {"reason": "boom"}, "c1")), DONE)
    assert Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("go").output == "done"
    (part,) = script.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert part.outcome == "failed"
    assert part.content == message
    assert "internal detail" not in message


def test_a_timeout_is_a_failed_tool_return(toolset: Toolset) -> None:
    """A toolpacks timeout applies inside pydantic-ai and is reported as a failure."""

    @tool(timeout=0.05)
    def stall(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        ctx.cancel_event.wait(30)
        return "late"

    script = Script(calls(("stall", {}, "c1")), DONE)
    Agent(script.model, toolsets=[as_toolset(Toolset([stall]))]).run_sync("go")
    (part,) = script.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert part.outcome == "failed"
    assert "timed out" in part.content


# -- structured values ---------------------------------------------------------------------------


def test_a_structured_value_arrives_structured(toolset: Toolset) -> None:
    """ToolResult.value itself is the tool's return: the model and the run see the model."""
    script = Script(calls(("total", '{"numbers": [1, 2, 3]}', "c1")), DONE)
    result = Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("sum")
    (part,) = script.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert part.content == Total(total=6, count=3)
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returns[0].content == Total(total=6, count=3)
    assert returns[0].model_response_str() == '{"total":6,"count":3}'


def test_a_value_longer_than_the_cap_is_the_capped_text(make_toolset: MakeToolset) -> None:
    """Result caps apply to structured values: over the cap, the truncated text is returned."""
    toolset = make_toolset(options=CallOptions(max_content_chars=10))
    script = Script(calls(("total", '{"numbers": [1, 2, 3]}', "c1")), DONE)
    Agent(script.model, toolsets=[as_toolset(toolset)]).run_sync("sum")
    (part,) = script.last_parts()
    assert isinstance(part.content, str)
    assert part.content.startswith('{"total":6')
    assert "truncated" in part.content


def test_floats_arrive_as_numbers_and_non_finite_ones_as_null() -> None:
    """A float is returned as is; infinity (which JSON cannot hold) as None, as its text says."""

    @tool
    def scale(x: float, factor: float) -> float:
        """Multiply."""
        return x * factor

    script = Script(
        calls(
            ("scale", '{"x": 1.5, "factor": 2}', "c1"),
            ("scale", '{"x": 1e308, "factor": 10}', "c2"),
        ),
        DONE,
    )
    Agent(script.model, toolsets=[as_toolset(Toolset([scale]))]).run_sync("scale")
    assert [p.content for p in script.last_parts()] == [3.0, None]


def test_an_unknown_tool_name_is_a_retry_listing_the_tools() -> None:
    """A name the toolset does not have (called directly) is a ModelRetry naming the tools."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    adapter = as_toolset(Toolset([ping]))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def scenario() -> None:
        listed = (await adapter.get_tools(ctx))["ping"]
        await adapter.call_tool("pong", {}, ctx, listed)

    with pytest.raises(ModelRetry, match=r"Unknown tool 'pong'\. Available tools: ping"):
        asyncio.run(scenario())


# -- approvals -------------------------------------------------------------------------------------


def test_approval_without_a_handler_defers_to_pydantic_ai(toolset: Toolset, trace: Trace) -> None:
    """A call needing approval ends the run with DeferredToolRequests; approving runs it."""
    agent = Agent(
        Script(calls(("delete", '{"path": "/tmp/a"}', "c1"))).model,
        toolsets=[as_toolset(toolset)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("delete it")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["c1"]
    assert first.output.metadata["c1"]["qualified_name"] == "delete"
    assert first.output.metadata["c1"]["reason"] == "the tool requires approval"
    assert trace.ran == []  # nothing ran while waiting

    resumed = Script(DONE)
    second = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
        model=resumed.model,
    )
    assert second.output == "done"
    assert trace.ran == ["delete"]
    (part,) = resumed.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert part.content == "deleted /tmp/a"


def test_a_denied_deferred_call_never_runs(toolset: Toolset, trace: Trace) -> None:
    """Denying the deferred call in DeferredToolResults leaves the tool unrun."""
    agent = Agent(
        Script(calls(("delete", '{"path": "/etc"}', "c1"))).model,
        toolsets=[as_toolset(toolset)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("delete it")
    agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": False}),
        model=Script(DONE).model,
    )
    assert trace.ran == []


def test_invalid_arguments_are_retried_before_approval_is_asked(toolset: Toolset) -> None:
    """Approval is asked only for arguments that passed the gate and validation."""
    script = Script(calls(("delete", '{"path": 3}', "c1")), DONE)
    agent = Agent(
        script.model, toolsets=[as_toolset(toolset)], output_type=[str, DeferredToolRequests]
    )
    assert agent.run_sync("delete").output == "done"
    (retry,) = script.last_parts()
    assert is_retry(retry)


def test_an_authorize_hook_asking_is_deferred_too() -> None:
    """An authorize hook answering "ask" is mapped to pydantic-ai's approval as well."""

    @tool
    def send(to: str) -> str:
        """Send a message."""
        return f"sent to {to}"

    toolset = Toolset([send], authorizers=[lambda **_: "ask"])
    agent = Agent(
        Script(calls(("send", '{"to": "bob"}', "c1"))).model,
        toolsets=[as_toolset(toolset)],
        output_type=[str, DeferredToolRequests],
    )
    first = agent.run_sync("send")
    assert isinstance(first.output, DeferredToolRequests)
    assert first.output.metadata["c1"]["reason"] == "an authorize hook asked for approval"


def test_a_handler_on_the_toolset_decides_instead(make_toolset: MakeToolset, trace: Trace) -> None:
    """With a toolpacks approval handler, it decides and pydantic-ai defers nothing."""
    asked: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    toolset = make_toolset(approval=handler)
    script = Script(calls(("delete", '{"path": "/etc"}', "c9")), DONE)
    agent = Agent(
        script.model, toolsets=[as_toolset(toolset)], output_type=[str, DeferredToolRequests]
    )
    assert agent.run_sync("delete").output == "done"
    assert [(r.tool, r.call_id) for r in asked] == [("delete", "c9")]
    (part,) = script.last_parts()
    assert isinstance(part, ToolReturnPart)
    assert part.outcome == "failed"
    assert "not approved" in part.content
    assert trace.ran == []


# -- arguments changed inside pydantic-ai -------------------------------------------------------


class _Rewrite(AbstractCapability[Any]):
    """A capability that changes validated arguments (replacing or mutating the dict)."""

    def __init__(self, in_place: bool) -> None:
        self.in_place = in_place

    async def after_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        if self.in_place:
            args["b"] = 40
            return args
        return {**args, "b": 40}


@pytest.mark.parametrize("in_place", [False, True], ids=["replaced", "mutated"])
def test_arguments_changed_by_a_capability_are_the_ones_used(
    toolset: Toolset, trace: Trace, in_place: bool
) -> None:
    """When pydantic-ai's hooks change the arguments, toolpacks gets the changed ones."""
    script = Script(calls(("add", '{"a": 2, "b": 0}', "c1")), DONE)
    agent = Agent(script.model, toolsets=[as_toolset(toolset)], capabilities=[_Rewrite(in_place)])
    agent.run_sync("add")
    assert trace.authorized == [("add", "c1", {"a": 2, "b": 40})]
    (part,) = script.last_parts()
    assert part.content == 42


# -- bad input to the adapter ----------------------------------------------------------------------


def test_as_toolset_refuses_what_is_not_a_toolset() -> None:
    """Passing a tool or a list instead of a Toolset is a TypeError saying what to pass."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    with pytest.raises(TypeError, match=r"takes a toolpacks Toolset, got Tool"):
        as_toolset(ping)  # type: ignore[arg-type]


def test_negative_max_retries_is_refused(toolset: Toolset) -> None:
    """max_retries below zero is a ValueError."""
    with pytest.raises(ValueError, match="max_retries must be at least 0, got -1"):
        as_toolset(toolset, max_retries=-1)


def test_id_and_label(toolset: Toolset) -> None:
    """The id given is the toolset's id; the label names the agent."""
    adapter = as_toolset(toolset, id="files")
    assert isinstance(adapter, ToolpacksToolset)
    assert adapter.id == "files"
    assert adapter.label == "toolpacks toolset of agent 'tester' ('files')"


def test_without_pydantic_ai_the_import_error_names_the_extra() -> None:
    """Importing the adapter without the framework says which extra to install."""
    message = import_without("toolpacks.integrations.pydantic_ai", "pydantic_ai")
    assert "pip install 'toolpacks[pydantic-ai]'" in message


def test_import_toolpacks_does_not_import_pydantic_ai() -> None:
    """The adapter (and its framework) load only when imported by path."""
    message = import_without("toolpacks", "pydantic_ai")
    assert message == "imported"
