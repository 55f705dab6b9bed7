"""Lone surrogates are refused for tools whose gate is not compiled (issue 36, turn-3 survivors).

A tool with an ``Any`` parameter, or a parameter with a validator that runs before pydantic's
(``BeforeValidator``), keeps the gate's Python walk. Text holding a lone surrogate must be
refused on that walk too, on the short path (a small dict, the road most calls take) and the
general one, as a dict and as JSON text, at the top level and nested.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest
from pydantic import BeforeValidator

from toolpacks import CallOptions, Tool, ToolResult, tool
from toolpacks.core.call import _invoke
from toolpacks.core.call._plan import plan_of

received: list[Any] = []


@tool
def anything(value: Any) -> str:
    """Take anything."""
    received.append(value)
    return "ok"


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


@tool
def stripped(text: Annotated[str, BeforeValidator(_strip)]) -> str:
    """Take a text, stripped first."""
    received.append(text)
    return text


@pytest.fixture(autouse=True)
def _clear() -> None:
    received.clear()


def test_neither_tool_has_a_compiled_gate() -> None:
    """The point of these tests: both tools take the Python walk."""
    assert plan_of(anything).gate is None
    assert plan_of(stripped).gate is None


def _short(t: Tool, arguments: Any) -> ToolResult:
    return asyncio.run(t.invoke(arguments))


def _general(t: Tool, arguments: Any) -> ToolResult:
    return asyncio.run(_invoke.invoke(t, arguments, None, CallOptions()))


ROADS = {"short": _short, "general": _general}

CASES = {
    "Any, top level": (anything, {"value": "a\ud800b"}),
    "Any, nested in a list": (anything, {"value": ["ok", "\udfff"]}),
    "Any, a dict key": (anything, {"value": {"\ud800": 1}}),
    "BeforeValidator": (stripped, {"text": " x\ud800 "}),
}


@pytest.mark.parametrize("road", sorted(ROADS))
@pytest.mark.parametrize("form", ["dict", "json"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_lone_surrogate_never_reaches_an_uncompiled_tool(road: str, form: str, case: str) -> None:
    t, arguments = CASES[case]
    sent: Any = arguments if form == "dict" else json.dumps(arguments)
    result = ROADS[road](t, sent)
    assert result.is_error, f"{case}: reached the tool"
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "not valid Unicode" in result.content
    assert not received


@pytest.mark.parametrize("road", sorted(ROADS))
def test_valid_text_still_reaches_an_uncompiled_tool(road: str) -> None:
    assert ROADS[road](anything, {"value": ["h\u00e9llo", {"k": "\u2603"}]}).value == "ok"
    assert ROADS[road](stripped, {"text": "  x  "}).value == "x"
