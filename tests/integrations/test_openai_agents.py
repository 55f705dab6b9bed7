"""openai-agents: ``as_tools(ts)`` through ``FunctionTool.on_invoke_tool`` and ``Runner.run``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext as AgentsToolContext

from toolpacks import Toolset, tool
from toolpacks.exceptions import ExportError
from toolpacks.host._approval import ApprovalRequest
from toolpacks.integrations.openai_agents import as_tools

from .conftest import MakeToolset, Trace, import_without

NO_TRACING = RunConfig(tracing_disabled=True)


def by_name(tools: list[FunctionTool]) -> dict[str, FunctionTool]:
    return {t.name: t for t in tools}


def invoke(function_tool: FunctionTool, arguments: str, call_id: str = "call_1") -> Any:
    """``on_invoke_tool`` with the ToolContext the runner would build."""
    ctx = AgentsToolContext(
        None, tool_name=function_tool.name, tool_call_id=call_id, tool_arguments=arguments
    )
    return asyncio.run(function_tool.on_invoke_tool(ctx, arguments))


def expected(toolset: Toolset, name: str, arguments: Any) -> str:
    """The text toolpacks itself gives for this call (the adapter must pass it on)."""
    return asyncio.run(toolset.call(name, arguments)).content


# -- on_invoke_tool ---------------------------------------------------------------------------


def test_the_provider_call_id_is_toolpacks_call_id(toolset: Toolset, trace: Trace) -> None:
    """The call goes through the toolset, whose hook sees ctx.tool_call_id as the call id."""
    output = invoke(by_name(as_tools(toolset))["add"], '{"a": 1, "b": 2}', call_id="call_XyZ")
    assert output == "3"
    assert trace.authorized == [("add", "call_XyZ", {"a": 1, "b": 2})]


def test_invalid_arguments_return_toolpacks_message(toolset: Toolset) -> None:
    """Bad arguments come back as toolpacks' per-argument message, for the model to fix."""
    sent = '{"a": 1, "b": "x"}'
    output = invoke(by_name(as_tools(toolset))["add"], sent)
    assert output == expected(toolset, "add", sent)
    assert "b: Input should be a valid integer" in output


def test_a_failing_tool_returns_toolpacks_message_not_the_sdk_default(toolset: Toolset) -> None:
    """A tool that raises returns toolpacks' text, not "An error occurred while running..."."""
    output = invoke(by_name(as_tools(toolset))["explode"], '{"reason": "boom"}')
    assert output == expected(toolset, "explode", {"reason": "boom"})
    assert "An error occurred" not in output
    assert "internal detail" not in output


def test_duplicate_keys_reach_the_gate(toolset: Toolset) -> None:
    """The arguments text is passed on as sent: a duplicated key is refused by the gate."""
    sent = '{"a": 1, "a": 9, "b": 2}'
    output = invoke(by_name(as_tools(toolset))["add"], sent)
    assert output == expected(toolset, "add", sent)


def test_a_structured_value_is_returned_as_json_text(toolset: Toolset) -> None:
    """A model (or dict) return value reaches the model as compact JSON text."""
    output = invoke(by_name(as_tools(toolset))["total"], '{"numbers": [1, 2, 3], "label": null}')
    assert json.loads(output) == {"total": 6, "count": 3}


def test_a_strict_null_for_an_optional_argument_lets_its_default_apply(toolset: Toolset) -> None:
    """Strict mode makes optional parameters nullable; null means "not given" to toolpacks."""
    schema = by_name(as_tools(toolset))["total"].params_json_schema
    assert schema["required"] == ["numbers", "label"]
    output = invoke(by_name(as_tools(toolset))["total"], '{"numbers": [4], "label": null}')
    assert json.loads(output) == {"total": 4, "count": 1}


# -- schemas ----------------------------------------------------------------------------------


def test_strict_schemas_are_toolpacks_strict_export(toolset: Toolset) -> None:
    """Each tool carries the parameters of toolpacks' OpenAI strict export, marked strict."""
    exported = {d["name"]: d for d in toolset.definitions("openai-responses", strict=True)}
    tools = as_tools(toolset)
    assert [t.name for t in tools] == toolset.names()
    for t in tools:
        assert t.strict_json_schema is True
        assert t.params_json_schema == exported[t.name]["parameters"]
        assert t.description == exported[t.name]["description"]


def test_strict_false_keeps_the_plain_schemas(toolset: Toolset) -> None:
    """strict=False gives non-strict tools with the schemas as they are."""
    exported = {d["name"]: d for d in toolset.definitions("openai-responses", strict=False)}
    for t in as_tools(toolset, strict=False):
        assert t.strict_json_schema is False
        assert t.params_json_schema == exported[t.name]["parameters"]


@tool
def tag(labels: dict[str, str]) -> int:
    """Attach free-form labels (an open object: strict mode cannot express it)."""
    return len(labels)


def test_a_tool_that_cannot_be_strict_follows_the_export() -> None:
    """strict=True names the tool in an ExportError; "best_effort" exports it non-strict."""
    with pytest.raises(ExportError, match="tag"):
        as_tools(Toolset([tag]))
    with pytest.warns(UserWarning, match="tag"):
        (loose,) = as_tools(Toolset([tag]), strict="best_effort")
    assert loose.strict_json_schema is False
    assert invoke(loose, '{"labels": {"a": "b", "c": "d"}}') == "2"


def test_an_unknown_strict_value_is_refused(toolset: Toolset) -> None:
    """The strict option must be True, False or "best_effort"."""
    with pytest.raises(ExportError, match="strict must be"):
        as_tools(toolset, strict="yes")  # type: ignore[arg-type]


def test_as_tools_refuses_what_is_not_a_toolset() -> None:
    """Passing a list of tools is a TypeError saying what to pass."""
    with pytest.raises(TypeError, match=r"takes a toolpacks Toolset, got list"):
        as_tools([tag])  # type: ignore[arg-type]


# -- a run ------------------------------------------------------------------------------------


def test_a_runner_run_with_a_scripted_model(toolset: Toolset, trace: Trace) -> None:
    """A full agent run: a bad call, its correction, a structured result, then the answer."""
    model = ScriptedModel(
        [
            [function_call("add", {"a": 1, "b": "x"}, call_id="c1")],
            [function_call("total", {"numbers": [2, 3], "label": None}, call_id="c2")],
            [assistant_message("five")],
        ]
    )
    agent = Agent(name="calc", model=model, tools=as_tools(toolset))
    result = asyncio.run(Runner.run(agent, "go", run_config=NO_TRACING))
    assert result.final_output == "five"
    outputs = [i.output for i in result.new_items if type(i).__name__ == "ToolCallOutputItem"]
    assert outputs[0] == expected(toolset, "add", {"a": 1, "b": "x"})
    assert json.loads(outputs[1]) == {"total": 5, "count": 2}
    assert trace.call_ids() == ["c2"]  # the bad call never passed the gate
    assert trace.ran == ["total"]
    model.assert_complete()


def test_approval_without_a_handler_uses_the_sdk_interruption(
    toolset: Toolset, trace: Trace
) -> None:
    """A tool requiring approval interrupts the run; once approved in RunState, it runs."""
    tools = by_name(as_tools(toolset))
    # The toolset has an authorize hook, so toolpacks decides per call for every tool.
    assert callable(tools["delete"].needs_approval)
    assert callable(tools["add"].needs_approval)
    model = ScriptedModel(
        [
            [function_call("delete", {"path": "/tmp/a"}, call_id="c1")],
            [assistant_message("deleted")],
        ]
    )
    agent = Agent(name="files", model=model, tools=list(tools.values()))

    async def scenario() -> Any:
        first = await Runner.run(agent, "delete", run_config=NO_TRACING)
        assert [i.name for i in first.interruptions] == ["delete"]
        assert trace.ran == []
        state = first.to_state()
        state.approve(first.interruptions[0])
        return await Runner.run(agent, state, run_config=NO_TRACING)

    result = asyncio.run(scenario())
    assert result.final_output == "deleted"
    assert trace.ran == ["delete"]
    assert trace.call_ids() == ["c1"]


def test_a_handler_on_the_toolset_decides_instead(make_toolset: MakeToolset, trace: Trace) -> None:
    """With a toolpacks approval handler, the SDK asks nothing and the handler decides."""
    asked: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    delete = by_name(as_tools(make_toolset(approval=handler)))["delete"]
    assert delete.needs_approval is False
    output = invoke(delete, '{"path": "/etc"}', call_id="c5")
    assert "not approved" in output
    assert [(r.tool, r.call_id) for r in asked] == [("delete", "c5")]
    assert trace.ran == []


def test_an_authorize_hook_asking_pauses_and_an_unapproved_invocation_is_denied() -> None:
    """An "ask" makes ``needs_approval`` true; invoked without the SDK's approval, denied."""

    @tool
    def send(to: str) -> str:
        """Send a message."""
        return f"sent to {to}"

    (sender,) = as_tools(Toolset([send], authorizers=[lambda **_: "ask"]))
    assert callable(sender.needs_approval)
    ctx = AgentsToolContext(None, tool_name="send", tool_call_id="c1", tool_arguments="{}")
    assert asyncio.run(sender.needs_approval(ctx, {"to": "bob"}, "c1")) is True
    assert "not approved" in invoke(sender, '{"to": "bob"}', call_id="c2")


def test_without_openai_agents_the_import_error_names_the_extra() -> None:
    """Importing the adapter without the SDK says which extra to install."""
    message = import_without("toolpacks.integrations.openai_agents", "agents")
    assert "pip install 'toolpacks[openai-agents]'" in message
