"""Running file tools: handle(arguments, context), sync and async, validation and results."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolpacks import CallOptions, Tool, ToolContext, ToolResult

Load = Callable[[], tuple[dict[str, Tool], list[str]]]
Call = Callable[..., ToolResult]

PARAMS = """
description: Search.
parameters:
  query: {type: string, required: true}
  limit: {type: integer, default: 500}
  order: {enum: [asc, desc], default: asc}
"""


def one(load: Load) -> Tool:
    tools, problems = load()
    assert problems == []
    (tool,) = tools.values()
    return tool


def test_all_arguments_arrive_in_one_dict_with_defaults_filled(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """`handle` gets every parameter in one dict; omitted ones hold their defaults."""
    make_tool("search", PARAMS)
    result = call(one(load), {"query": "cats"})
    assert result.value == {"query": "cats", "limit": 500, "order": "asc"}


def test_sync_handle_runs_in_a_worker_thread(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """A sync `handle` does not run on the main (event loop) thread."""
    make_tool(
        "where",
        "description: W.",
        """
        import threading

        def handle(arguments, context):
            return threading.current_thread() is threading.main_thread()
        """,
    )
    assert call(one(load), {}).value is False


def test_async_handle_is_awaited(make_tool: Callable[..., Path], load: Load, call: Call) -> None:
    """An async `handle` is awaited on the event loop thread."""
    make_tool(
        "later",
        "description: L.\nparameters:\n  n: {type: integer}",
        """
        import asyncio
        import threading

        async def handle(arguments, context):
            await asyncio.sleep(0)
            return f"{arguments['n'] * 2} {threading.current_thread() is threading.main_thread()}"
        """,
    )
    tool = one(load)
    assert tool.kind == "coroutine"
    assert call(tool, {"n": 21}).value == "42 True"


def test_context_is_passed_to_handle(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """`handle` receives the call's ToolContext (call id, agent, caller, metadata)."""
    make_tool(
        "who",
        "description: W.",
        """
        def handle(arguments, context):
            return [context.execution_id, context.agent_id, context.caller_identity,
                    dict(context.metadata), context.tool_name]
        """,
    )
    context = ToolContext(call_id="c1", agent_id="ann", caller_identity="u7", metadata={"k": 1})
    result = call(one(load), {}, context)
    assert result.value == ["c1", "ann", "u7", {"k": 1}, "who"]


def test_invalid_arguments_are_an_error_result_and_handle_does_not_run(
    make_tool: Callable[..., Path], load: Load, call: Call, tmp_path: Path
) -> None:
    """Bad types, missing, enum-violating and extra arguments are reported; handle never runs."""
    marker = tmp_path / "ran"
    make_tool(
        "search",
        PARAMS,
        f"""
        from pathlib import Path

        def handle(arguments, context):
            Path({str(marker)!r}).write_text("ran")
        """,
    )
    tool = one(load)
    result = call(tool, {"query": "x", "limit": "many", "order": "up", "colour": "red"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    problems = {d.argument: d.message for d in result.error.details}
    assert set(problems) == {"limit", "order", "colour"}
    assert "allowed arguments are: limit, order, query" in problems["colour"]
    missing = call(tool, {})
    assert missing.error is not None
    assert missing.error.details[0].argument == "query"
    assert not marker.exists()


def test_json_text_arguments_are_accepted(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """Arguments as a model sends them (JSON text) are parsed, validated and coerced."""
    make_tool("search", PARAMS)
    result = call(one(load), '{"query": "q", "limit": "7"}')
    assert result.value == {"query": "q", "limit": 7, "order": "asc"}


def test_non_string_results_are_rendered_as_json(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """A dict becomes JSON text for the model, a number its text; `value` keeps the raw value."""
    make_tool(
        "as_dict", "description: D.", "def handle(arguments, context):\n    return {'a': [1]}\n"
    )
    make_tool("as_int", "description: I.", "def handle(arguments, context):\n    return 42\n")
    make_tool("as_str", "description: S.", "def handle(arguments, context):\n    return 'hi'\n")
    tools, _ = load()
    result = call(tools["as_dict"], {})
    assert result.value == {"a": [1]}
    assert json.loads(result.content) == {"a": [1]}
    assert call(tools["as_int"], {}).content == "42"
    assert call(tools["as_str"], {}).content == "hi"


def test_a_failing_handle_is_an_error_result(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """An exception in `handle` gives a tool_error result naming the tool, not a crash."""
    make_tool(
        "boom", "description: B.", "def handle(arguments, context):\n    raise KeyError('x')\n"
    )
    result = call(one(load), {})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "boom" in result.content
    assert "KeyError" in result.content


def test_mutable_defaults_are_fresh_for_every_call(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """A handler that changes a list default does not change the next call's default."""
    make_tool(
        "grow",
        "description: G.\nparameters:\n  items: {type: array, default: []}",
        """
        def handle(arguments, context):
            arguments["items"].append(1)
            return len(arguments["items"])
        """,
    )
    tool = one(load)
    assert [call(tool, {}).value for _ in range(3)] == [1, 1, 1]
    assert tool.input_schema["properties"]["items"]["default"] == []


def test_before_invoke_hooks_see_the_arguments_without_the_context(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """Per-tool hooks get the validated arguments (defaults included), not the context."""
    make_tool("search", PARAMS)
    tool = one(load)
    seen: list[dict[str, Any]] = []
    tool.before_invoke(lambda **kwargs: seen.append(kwargs))
    call(tool, {"query": "q"})
    assert seen == [{"query": "q", "limit": 500, "order": "asc"}]


def test_host_wide_ignore_drops_extra_arguments(make_tool: Callable[..., Path], load: Load) -> None:
    """With `extra_args="ignore"` from the host, undeclared arguments are dropped, not refused."""
    make_tool("search", PARAMS)
    options = CallOptions(extra_args="ignore")
    result = asyncio.run(one(load).invoke({"query": "q", "colour": "red"}, options=options))
    assert result.value == {"query": "q", "limit": 500, "order": "asc"}


def test_async_callable_handle_is_awaited(
    make_tool: Callable[..., Path], load: Load, call: Call
) -> None:
    """A `handle` that is a partial of a coroutine function is recognised as async."""
    make_tool(
        "partial",
        "description: P.",
        """
        import functools

        async def _run(prefix, arguments, context):
            return prefix + "done"

        handle = functools.partial(_run, "all ")
        """,
    )
    tool = one(load)
    assert tool.kind == "coroutine"
    assert call(tool, {}).value == "all done"
