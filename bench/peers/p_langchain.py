"""langchain-core: ``@tool`` (``StructuredTool``); ``await tool.ainvoke(args)``.

``ainvoke`` is the Runnable path every langchain agent uses (callbacks, config, input
validation against the generated pydantic model). Sync functions run in an executor.
From JSON text the adapter parses with ``json.loads`` first (langchain chat models hand tools
parsed ``args``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "langchain-core"
DIST = "langchain-core"
PATHS = {
    "define": "langchain_core.tools.tool(fn).tool_call_schema.model_json_schema()",
    "invoke": "await t.ainvoke(args); JSON text: json.loads first",
    "sync": "sync functions run in an executor (run_in_executor)",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from langchain_core.tools import tool

    return tool(fn).tool_call_schema.model_json_schema()


async def build() -> Adapter:
    from _defs import add, add_async
    from langchain_core.tools import tool

    t_async, t_sync = tool(add_async), tool(add)
    loads = json.loads

    def paths(t: Any) -> tuple[Any, Any]:
        ainvoke = t.ainvoke

        async def from_json(text: str) -> Any:
            return await ainvoke(loads(text))

        return ainvoke, from_json

    a_dict, a_json = paths(t_async)
    s_dict, s_json = paths(t_sync)
    return Adapter(a_dict, a_json, s_dict, s_json, value=lambda r: r)
