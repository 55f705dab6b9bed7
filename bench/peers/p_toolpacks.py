"""toolpacks: ``@tool`` / ``tool(fn)``; ``await t.invoke(dict | json_str)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from peers import Adapter

LABEL = "toolpacks"
DIST = "toolpacks"
PATHS = {
    "define": "tool(fn).input_schema",
    "invoke": "await t.invoke(args) with a dict or the JSON text (parsed by toolpacks)",
    "sync": "sync tools run in the default executor (run_in_executor)",
}


def define(fn: Callable[..., Any]) -> dict[str, Any]:
    from toolpacks import tool

    return tool(fn).input_schema


async def build() -> Adapter:
    from _defs import add, add_async

    from toolpacks import tool

    t_async, t_sync = tool(add_async), tool(add)
    # The JSON text path measured is the one that refuses duplicate keys: prove it still does.
    refused = await t_async.invoke('{"a": 1, "a": 2, "b": 2}')
    if not refused.is_error or "duplicate key" not in refused.content:
        raise AssertionError("duplicate keys were not refused on the JSON text path")
    return Adapter(
        async_dict=t_async.invoke,
        async_json=t_async.invoke,
        sync_dict=t_sync.invoke,
        sync_json=t_sync.invoke,
        value=lambda r: r.value if not r.is_error else r,
    )
