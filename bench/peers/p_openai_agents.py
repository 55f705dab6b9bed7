"""openai-agents: ``function_tool``; ``await t.on_invoke_tool(ToolContext, json_text)``.

``on_invoke_tool`` takes the model's raw arguments text (what the Responses API sends); it
parses, validates against the generated pydantic model, and calls the function (sync functions
through ``asyncio.to_thread``). From a dict the adapter serialises with ``json.dumps`` first:
that is the only documented entry point.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "openai-agents"
DIST = "openai-agents"
PATHS = {
    "define": "agents.function_tool(fn).params_json_schema",
    "invoke": "await t.on_invoke_tool(ToolContext(...), json_text); dict: json.dumps first",
    "sync": "sync functions run through asyncio.to_thread",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from agents import function_tool

    return function_tool(fn).params_json_schema


async def build() -> Adapter:
    from _defs import add, add_async
    from agents import function_tool
    from agents.tool_context import ToolContext

    t_async, t_sync = function_tool(add_async), function_tool(add)
    dumps = json.dumps

    def paths(t: Any) -> tuple[Any, Any]:
        on_invoke = t.on_invoke_tool
        name = t.name

        async def from_json(text: str) -> Any:
            # A fresh context per call, as the runner builds one per tool call.
            ctx = ToolContext(None, tool_name=name, tool_call_id="call_1", tool_arguments=text)
            return await on_invoke(ctx, text)

        async def from_dict(args: dict[str, Any]) -> Any:
            return await from_json(dumps(args))

        return from_dict, from_json

    a_dict, a_json = paths(t_async)
    s_dict, s_json = paths(t_sync)
    return Adapter(a_dict, a_json, s_dict, s_json, value=lambda r: r)
