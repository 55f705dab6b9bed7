"""The ``search_tools`` meta tool refuses what a model should not get (issue 36).

A model chooses the arguments of ``search_tools``: a ``limit`` of 100,000 must not hand it
every deferred definition (the cap is 20), a blank query or a boolean limit is an error
result it can act on, and the answer only ever carries deferred tools (what it already has
up front is not repeated). Checked through ``Toolset.execute`` in the chat-completions format,
and over MCP stdio with the official client.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Toolset, tool
from toolpacks.host._toolset import ToolEntry

CAP = 20


def _tools() -> list[ToolEntry]:
    entries = []
    for i in range(60):

        def report(customer_id: str) -> str:
            return customer_id

        report.__doc__ = f"Customer report number {i}: invoices and orders of a customer."
        t = tool(name=f"report_{i}")(report)
        entries.append(ToolEntry(t.name, f"crm.{t.name}", "crm", t, deferred=True))

    @tool
    def customer_overview(customer_id: str) -> str:
        """An overview of a customer: invoices, orders, reports."""
        return customer_id

    entries.append(
        ToolEntry("customer_overview", "crm.customer_overview", "crm", customer_overview)
    )
    return entries


def _search(arguments: Any) -> dict[str, Any]:
    call = {
        "id": "s1",
        "type": "function",
        "function": {"name": "search_tools", "arguments": json.dumps(arguments)},
    }
    [answer] = asyncio.run(Toolset(_tools()).execute([call], "openai"))
    return answer  # type: ignore[no-any-return]


def _found(answer: dict[str, Any]) -> list[str]:
    return [d["function"]["name"] for d in json.loads(answer["content"])["tools"]]


def test_a_huge_limit_is_capped() -> None:
    """``limit = 100000`` gets at most the cap, never every deferred definition."""
    found = _found(_search({"query": "customer invoices report", "limit": 100_000}))
    assert len(found) == CAP


def test_the_limit_is_honoured_below_the_cap() -> None:
    assert len(_found(_search({"query": "customer invoices report", "limit": 3}))) == 3


def test_the_answer_holds_only_deferred_tools() -> None:
    """A tool sent up front (matching the query best) is never in a search's answer."""
    found = _found(_search({"query": "customer overview invoices orders reports", "limit": 20}))
    assert found
    assert "customer_overview" not in found
    assert all(name.startswith("report_") for name in found)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_blank_query_is_an_error_result(query: str) -> None:
    answer = _search({"query": query})
    assert "non-empty" in answer["content"]
    assert "tools" not in answer["content"]


@pytest.mark.parametrize("limit", [True, False, "5", 2.5])
def test_a_limit_that_is_not_an_integer_is_an_error_result(limit: Any) -> None:
    answer = _search({"query": "customer", "limit": limit})
    assert "'limit' must be an integer" in answer["content"]


SERVE = """
from toolpacks import Host, hookimpl, tool
from toolpacks.mcp import serve_stdio


class Crm:
    @hookimpl
    def register_tools(self, register):
        for i in range(60):
            def report(customer_id: str) -> str:
                return customer_id
            report.__doc__ = f"Customer report number {i}: invoices and orders of a customer."
            register(tool(name=f"report_{i}")(report))


host = Host({"agents": {"a": {"packs": ["crm"], "defer": ["crm"]}}}, discover=False)
host.add_pack(Crm(), name="crm")
serve_stdio(host.toolset("a"), name="crm")
"""


def test_over_mcp_stdio_the_limit_is_capped_and_bad_arguments_are_errors(
    tmp_path: Path,
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent(SERVE), encoding="utf-8")

    async def go() -> tuple[Any, Any, Any]:
        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            huge = await client.call_tool("search_tools", {"query": "report", "limit": 100_000})
            blank = await client.call_tool("search_tools", {"query": "  "})
            boolean = await client.call_tool("search_tools", {"query": "report", "limit": True})
            return huge, blank, boolean

    huge, blank, boolean = asyncio.run(asyncio.wait_for(go(), 120))
    assert not huge.is_error
    found = huge.structured_content or json.loads(huge.content[0].text)
    assert len(found["tools"]) == CAP
    assert blank.is_error
    assert boolean.is_error
