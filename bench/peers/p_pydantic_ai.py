"""pydantic-ai: ``FunctionToolset`` / ``Tool``; the toolset path an agent run uses per call.

Per call: ``tool.args_validator.validate_python(args)`` (``validate_json`` for JSON text), then
``await toolset.call_tool(name, validated, ctx, tool)``, with the ``ToolsetTool`` obtained once
from ``await toolset.get_tools(ctx)``. This is the documented toolset API (validate, then call);
an agent's ``ToolManager`` adds retries and tracing around it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "pydantic-ai"
DIST = "pydantic-ai-slim"
PATHS = {
    "define": "Tool(fn).tool_def.parameters_json_schema",
    "invoke": "toolset tool: args_validator.validate_python(args) / .validate_json(text), then "
    "await FunctionToolset.call_tool(name, validated, ctx, tool)",
    "sync": "sync functions run in a worker thread (run_in_executor)",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from pydantic_ai import Tool

    return Tool(fn).tool_def.parameters_json_schema


def _context() -> Any:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


async def build() -> Adapter:
    from _defs import add, add_async
    from pydantic_ai import FunctionToolset

    toolset = FunctionToolset([add, add_async])
    ctx = _context()
    tools = await toolset.get_tools(ctx)
    t_async, t_sync = tools["add_async"], tools["add"]
    call_tool = toolset.call_tool

    def paths(name: str, tool: Any) -> tuple[Any, Any]:
        validate = tool.args_validator.validate_python
        validate_json = tool.args_validator.validate_json

        async def from_dict(args: dict[str, Any]) -> Any:
            return await call_tool(name, validate(args), ctx, tool)

        async def from_json(text: str) -> Any:
            return await call_tool(name, validate_json(text), ctx, tool)

        return from_dict, from_json

    a_dict, a_json = paths("add_async", t_async)
    s_dict, s_json = paths("add", t_sync)
    return Adapter(a_dict, a_json, s_dict, s_json, value=lambda r: r)
