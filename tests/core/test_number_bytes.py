"""The 1 MiB argument cap counts numbers as their JSON text (issue 37).

A number counted as 2 bytes on the dict road let 8 MB of numbers reach a tool. Each road a
dict takes is tried: the compiled gate (nested lists of floats fit its item bounds), the
walk (a list longer than those bounds, an ``Any``), and a schema-only tool.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolpacks import Tool, ToolResult, Toolset, tool

ran: list[int] = []


@tool
def floats(values: list[float]) -> int:
    """Sum floats."""
    ran.append(1)
    return len(values)


@tool
def grid(rows: list[list[float]]) -> int:
    """Sum a grid of floats."""
    ran.append(1)
    return len(rows)


@tool
def ints(values: list[int]) -> int:
    """Count integers."""
    ran.append(1)
    return len(values)


@tool
def anything(values: Any) -> int:
    """Take anything."""
    ran.append(1)
    return 0


def _schema_only(**arguments: Any) -> int:
    ran.append(1)
    return 0


SCHEMA_ONLY = Tool(
    _schema_only,
    name="schema_only",
    description="A remote tool.",
    input_schema={"type": "object", "properties": {"values": {"type": "array"}}},
)

BIG_FLOATS = [1.2345678901234567] * 100_000  # 1.9 MB of JSON text
BIG_GRID = [[0.12345678901234567] * 250 for _ in range(250)]  # 1.3 MB
BIG_INTS = [123456789012345678] * 100_000  # 1.9 MB


def _call(t: Tool, arguments: dict[str, Any]) -> ToolResult:
    ran.clear()
    return asyncio.run(Toolset([t]).call(t.name, arguments))


@pytest.mark.parametrize(
    ("t", "arguments"),
    [
        (floats, {"values": BIG_FLOATS}),
        (grid, {"rows": BIG_GRID}),
        (ints, {"values": BIG_INTS}),
        (anything, {"values": BIG_FLOATS}),
        (SCHEMA_ONLY, {"values": BIG_INTS}),
    ],
    ids=["floats", "grid", "ints", "any", "schema-only"],
)
def test_numbers_over_the_cap_never_reach_the_tool(t: Tool, arguments: dict[str, Any]) -> None:
    assert len(json.dumps(arguments)) > 1024 * 1024
    result = _call(t, arguments)
    assert result.error is not None
    assert "larger than the limit of 1048576 bytes" in result.error.message
    assert ran == []
    direct = asyncio.run(t.invoke(arguments))
    assert direct.is_error
    assert ran == []


def test_numbers_under_the_cap_still_pass() -> None:
    values = [1.2345678901234567] * 50_000  # 0.95 MB
    assert len(json.dumps({"values": values})) < 1024 * 1024
    assert _call(floats, {"values": values}).value == 50_000
    assert _call(ints, {"values": [12345] * 100_000}).value == 100_000
    assert _call(grid, {"rows": [[0.5] * 200 for _ in range(200)]}).value == 200
