"""langchain-core tools from a toolset, with the real langchain-core.

Every call goes through ``Toolset.call`` (the ``trace`` fixture's authorize hook records it
with its call id); ``invoke`` works from plain code, a worker thread and inside a running
loop; errors are ``ToolMessage(status="error")`` with toolpacks' text; structured values are
artifacts.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolpacks import Toolset
from toolpacks.integrations import langchain as adapter

from .conftest import MakeToolset, Total, Trace


def by_name(toolset: Toolset) -> dict[str, BaseTool]:
    return {t.name: t for t in adapter.as_tools(toolset)}


def call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """A model's tool call, as langchain-core hands it to a tool."""
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


# -- definitions -------------------------------------------------------------------------------


def test_tools_carry_the_toolsets_names_descriptions_and_schemas(toolset: Toolset) -> None:
    """Each tool is a BaseTool with the exposed name, description and JSON Schema."""
    tools = by_name(toolset)
    assert sorted(tools) == toolset.names()
    definitions = {d["name"]: d for d in toolset.definitions("neutral")}
    for name, lc_tool in tools.items():
        assert isinstance(lc_tool, BaseTool)
        assert lc_tool.description == definitions[name]["description"]
        assert lc_tool.args_schema == definitions[name]["input_schema"]
        assert lc_tool.response_format == "content_and_artifact"
    openai = convert_to_openai_tool(tools["total"])
    assert openai["function"]["name"] == "total"
    assert openai["function"]["parameters"]["properties"]["numbers"]["type"] == "array"
    assert openai["function"]["parameters"]["required"] == ["numbers"]


# -- calls -------------------------------------------------------------------------------------


def test_invoke_with_a_tool_call_runs_through_the_toolset(toolset: Toolset, trace: Trace) -> None:
    """A ToolCall gives a ToolMessage; the provider's id is the toolpacks call id."""
    message = by_name(toolset)["add"].invoke(call("add", {"a": 2, "b": 3}, "call_add"))
    assert isinstance(message, ToolMessage)
    assert (message.content, message.artifact, message.status) == ("5", 5, "success")
    assert message.tool_call_id == "call_add"
    assert trace.authorized == [("add", "call_add", {"a": 2, "b": 3})]
    assert trace.ran == ["add"]


def test_invoke_with_plain_arguments_returns_the_text(toolset: Toolset, trace: Trace) -> None:
    """Plain arguments (no ToolCall) give the text toolpacks renders."""
    assert by_name(toolset)["add"].invoke({"a": 1, "b": 1}) == "2"
    assert trace.ran == ["add"]


def test_structured_value_is_the_artifact(toolset: Toolset) -> None:
    """A model return value arrives as the artifact; the content is its JSON text."""
    message = by_name(toolset)["total"].invoke(call("total", {"numbers": [1, 2, 3]}))
    assert message.artifact == Total(total=6, count=3)
    assert message.content == '{"total":6,"count":3}'


def test_bad_arguments_are_an_error_message_with_toolpacks_text(
    toolset: Toolset, trace: Trace
) -> None:
    """Invalid arguments give status="error" and per-argument text; the tool never runs."""
    message = by_name(toolset)["add"].invoke(call("add", {"a": "two", "c": 1}))
    assert message.status == "error"
    assert "Invalid arguments for tool 'add'" in message.content
    assert "- a:" in message.content
    assert "- c: unexpected argument" in message.content
    assert "Fix the arguments and call the tool again." in message.content
    assert message.artifact is None
    assert trace.ran == []


def test_gate_rejects_what_langchain_lets_through(toolset: Toolset, trace: Trace) -> None:
    """Non-finite numbers and booleans-as-numbers pass langchain-core, not toolpacks' gate."""
    add = by_name(toolset)["add"]
    nan = add.invoke(call("add", {"a": float("nan"), "b": 1}))
    assert nan.status == "error"
    assert "- a: nan is not a finite number" in nan.content
    boolean = add.invoke(call("add", {"a": 1, "b": True}))
    assert boolean.status == "error"
    assert "- b:" in boolean.content
    assert trace.ran == []


def test_failing_tool_is_an_error_message(toolset: Toolset) -> None:
    """A tool that raises gives status="error" and toolpacks' (masked) message."""
    message = by_name(toolset)["explode"].invoke(call("explode", {"reason": "boom"}))
    assert message.status == "error"
    assert "explode" in message.content
    assert "internal detail" not in message.content  # toolpacks hides exception text


def test_approval_is_denied_without_a_handler(toolset: Toolset, trace: Trace) -> None:
    """A tool requiring approval is refused (no handler) and the model is told why."""
    message = by_name(toolset)["delete"].invoke(call("delete", {"path": "/tmp/x"}))
    assert message.status == "error"
    assert "requires approval" in message.content
    assert trace.ran == []


def test_approval_handler_decides(make_toolset: MakeToolset, trace: Trace) -> None:
    """The toolset's approval handler is asked, with the provider's call id."""
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.call_id)
        return True

    tools = by_name(make_toolset(approval=approve))
    message = tools["delete"].invoke(call("delete", {"path": "/tmp/x"}, "call_del"))
    assert (message.status, message.content) == ("success", "deleted /tmp/x")
    assert asked == ["call_del"]
    assert trace.ran == ["delete"]


def test_string_input_is_refused_clearly(toolset: Toolset) -> None:
    """A bare string is not arguments: langchain-core says so (dict schema)."""
    with pytest.raises(ValueError, match="String tool inputs are not allowed"):
        by_name(toolset)["add"].invoke("1 2")


# -- sync and async, inside and outside a loop -------------------------------------------------


def test_ainvoke_runs_through_the_toolset(toolset: Toolset, trace: Trace) -> None:
    """``await ainvoke`` gives the same ToolMessage, on the caller's loop."""
    add = by_name(toolset)["add"]
    message = asyncio.run(add.ainvoke(call("add", {"a": 4, "b": 5}, "call_async")))
    assert (message.content, message.artifact, message.tool_call_id) == ("9", 9, "call_async")
    assert trace.call_ids() == ["call_async"]


def test_ainvoke_errors_are_error_messages(toolset: Toolset) -> None:
    """Async errors use the same idiom as sync ones."""
    add = by_name(toolset)["add"]
    message = asyncio.run(add.ainvoke(call("add", {"a": 1})))
    assert message.status == "error"
    assert "b: missing required argument" in message.content


def test_sync_invoke_inside_a_running_loop(toolset: Toolset, trace: Trace) -> None:
    """Sync ``invoke`` from a coroutine (directly, and from a thread) works: no asyncio.run."""
    add = by_name(toolset)["add"]

    async def main() -> list[Any]:
        direct = add.invoke(call("add", {"a": 1, "b": 2}, "call_direct"))
        threaded = await asyncio.to_thread(add.invoke, call("add", {"a": 3, "b": 4}, "call_th"))
        awaited = await add.ainvoke(call("add", {"a": 5, "b": 6}, "call_await"))
        return [direct, threaded, awaited]

    messages = asyncio.run(main())
    assert [m.content for m in messages] == ["3", "7", "11"]
    assert [m.status for m in messages] == ["success"] * 3
    assert trace.call_ids() == ["call_direct", "call_th", "call_await"]


def test_concurrent_ainvoke_keeps_each_call_id(toolset: Toolset, trace: Trace) -> None:
    """Concurrent async calls each keep their own provider call id."""
    add = by_name(toolset)["add"]

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(add.ainvoke(call("add", {"a": i, "b": i}, f"call_{i}")) for i in range(5))
        )

    messages = asyncio.run(main())
    assert [m.content for m in messages] == [str(2 * i) for i in range(5)]
    assert sorted(trace.call_ids()) == [f"call_{i}" for i in range(5)]
    assert [m.tool_call_id for m in messages] == [f"call_{i}" for i in range(5)]


# -- optional import ---------------------------------------------------------------------------


def test_module_does_not_import_langchain_until_used() -> None:
    """Importing the adapter module leaves langchain-core unloaded."""
    code = (
        "import sys, toolpacks.integrations.langchain\n"
        "print(any(m.startswith('langchain') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_langchain_names_the_extra() -> None:
    """Without langchain-core, ``as_tools`` raises ImportError naming the extra."""
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None\n"
        "from toolpacks import Toolset\n"
        "from toolpacks.integrations.langchain import as_tools\n"
        "try:\n"
        "    as_tools(Toolset([]))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'toolpacks[langchain]'" in out.stdout
