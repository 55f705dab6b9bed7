"""Deferred tools in the framework adapters.

pydantic-ai has deferred loading of its own: deferred tools become ``defer_loading`` tool
definitions. openai-agents and langchain have static tool lists: they get a ``search_tools``
tool (its result carries the found tools' definitions) and every deferred tool, callable by
name.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolpacks import Toolset, tool
from toolpacks.host._toolset import ToolEntry


@tool
def get_customer(customer_id: str) -> str:
    """Look up a customer record in the CRM by its id."""
    return f"customer {customer_id}: Ada"


@tool
def now() -> str:
    """The current time."""
    return "noon"


def _toolset() -> Toolset:
    return Toolset(
        [
            ToolEntry("get_customer", "crm.get_customer", "crm", get_customer, deferred=True),
            ToolEntry("now", "clock.now", "clock", now),
        ]
    )


def test_pydantic_ai_maps_deferred_tools_to_defer_loading() -> None:
    from toolpacks.integrations.pydantic_ai import as_toolset

    definitions = {d.name: d for d in as_toolset(_toolset()).tool_definitions()}
    assert set(definitions) == {"get_customer", "now"}
    assert definitions["get_customer"].defer_loading is True
    assert definitions["now"].defer_loading is False


def test_openai_agents_get_search_tools_and_the_deferred_tool_by_name() -> None:
    from agents import RunContextWrapper
    from agents.tool_context import ToolContext

    from toolpacks.integrations.openai_agents import as_tools

    tools = {t.name: t for t in as_tools(_toolset())}
    assert set(tools) == {"get_customer", "now", "search_tools"}

    def invoke(name: str, args: dict[str, Any]) -> Any:
        ctx = ToolContext(
            context=None, tool_name=name, tool_call_id="c1", tool_arguments=json.dumps(args)
        )
        assert isinstance(ctx, RunContextWrapper)
        return asyncio.run(tools[name].on_invoke_tool(ctx, json.dumps(args)))

    found = invoke("search_tools", {"query": "customer record"})
    assert json.loads(str(found))["tools"][0]["name"] == "get_customer"
    assert invoke("get_customer", {"customer_id": "c7"}) == "customer c7: Ada"


def test_langchain_gets_search_tools_and_the_deferred_tool_by_name() -> None:
    from toolpacks.integrations.langchain import as_tools

    tools = {t.name: t for t in as_tools(_toolset())}
    assert set(tools) == {"get_customer", "now", "search_tools"}
    found = tools["search_tools"].invoke({"query": "customer record"})
    assert json.loads(str(found))["tools"][0]["name"] == "get_customer"
    assert tools["get_customer"].invoke({"customer_id": "c7"}) == "customer c7: Ada"
