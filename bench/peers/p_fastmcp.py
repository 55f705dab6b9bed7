"""fastmcp: ``Tool.from_function(fn)``; ``await tool.run(args)`` (returns a ``ToolResult``).

``run`` is what a FastMCP server calls for ``tools/call`` after the protocol layer: it
validates the arguments, calls the function (sync functions in a worker thread by default)
and converts the return value to MCP content (and structured content). From JSON text the
adapter parses with ``json.loads`` first (MCP hands servers parsed arguments).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "fastmcp"
DIST = "fastmcp"
PATHS = {
    "define": "fastmcp.tools.Tool.from_function(fn).parameters",
    "invoke": "await t.run(args); JSON text: json.loads first",
    "sync": "sync functions run in a worker thread (run_in_thread=True, the default)",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from fastmcp.tools import Tool

    return Tool.from_function(fn).parameters


async def build() -> Adapter:
    from _defs import add, add_async
    from fastmcp.tools import Tool

    t_async, t_sync = Tool.from_function(add_async), Tool.from_function(add)
    loads = json.loads

    def paths(t: Any) -> tuple[Any, Any]:
        run = t.run

        async def from_json(text: str) -> Any:
            return await run(loads(text))

        return run, from_json

    def value(result: Any) -> Any:
        structured = getattr(result, "structured_content", None)
        if structured and "result" in structured:
            return structured["result"]
        return int(result.content[0].text)

    a_dict, a_json = paths(t_async)
    s_dict, s_json = paths(t_sync)
    return Adapter(a_dict, a_json, s_dict, s_json, value=value)
