"""strands-agents: ``@tool``; the decorated tool's ``stream(tool_use, invocation_state)``.

That async generator is what an agent's tool executor drives for each model tool call: it
validates ``tool_use["input"]`` (a dict; strands models hand tools parsed input), calls the
function (sync functions through ``asyncio.to_thread``) and yields a ``ToolResultEvent`` last.
From JSON text the adapter parses with ``json.loads`` first, as a strands model provider does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "strands-agents"
DIST = "strands-agents"
PATHS = {
    "define": "strands.tool(fn).tool_spec['inputSchema']['json']",
    "invoke": "async for event in t.stream({'toolUseId', 'name', 'input': args}, {}) (last event "
    "is the ToolResultEvent); JSON text: json.loads first",
    "sync": "sync functions run through asyncio.to_thread",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from strands import tool

    return tool(fn).tool_spec["inputSchema"]["json"]


async def build() -> Adapter:
    from _defs import add, add_async
    from strands import tool

    t_async, t_sync = tool(add_async), tool(add)
    loads = json.loads

    def paths(t: Any) -> tuple[Any, Any]:
        stream = t.stream
        name = t.tool_name

        async def from_dict(args: dict[str, Any]) -> Any:
            last = None
            async for event in stream({"toolUseId": "call_1", "name": name, "input": args}, {}):
                last = event
            return last

        async def from_json(text: str) -> Any:
            return await from_dict(loads(text))

        return from_dict, from_json

    def value(event: Any) -> Any:
        result = event["tool_result"]
        if result["status"] != "success":
            return result
        return json.loads(result["content"][0]["text"])

    a_dict, a_json = paths(t_async)
    s_dict, s_json = paths(t_sync)
    return Adapter(a_dict, a_json, s_dict, s_json, value=value)
