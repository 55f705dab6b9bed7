"""The one-gate table's caps hold for tools whose gate is compiled (issue 36).

A tool made only of plain JSON types gets a compiled gate (``_gate_compiled``): length bounds
on every list, tuple and text, chosen so that whatever the schema admits fits the caps. These
tests send what the caps exist to stop — a huge array, text over the byte cap once its
non-ASCII characters are counted in UTF-8, a value deeper than the depth cap — to compiled
tools, with the default caps and with small ``[settings]`` caps, as a dict and as JSON text,
through ``Tool.invoke`` (the short path), the general path and a host's toolset. Each must be
refused before the tool runs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import ArgumentLimits, CallOptions, Host, Tool, ToolResult, tool
from toolpacks.core.call import _invoke
from toolpacks.core.call._plan import plan_of

ran: list[str] = []


@tool
def numbers(values: list[int]) -> int:
    """Count numbers."""
    ran.append("numbers")
    return len(values)


@tool
def pairs(values: tuple[int, ...]) -> int:
    """Count a tuple's numbers."""
    ran.append("pairs")
    return len(values)


@tool
def grid(rows: list[list[str]]) -> int:
    """Count a grid's rows."""
    ran.append("grid")
    return len(rows)


class Note(BaseModel):
    text: str


@tool
def notes(items: list[Note]) -> int:
    """Count notes."""
    ran.append("notes")
    return len(items)


class Pair(BaseModel):
    left: str
    right: str


@tool
def couples(items: list[Pair]) -> int:
    """Count pairs of texts."""
    ran.append("couples")
    return len(items)


@tool
def nested(cube: list[list[list[int]]]) -> int:
    """Count a cube's planes."""
    ran.append("nested")
    return len(cube)


COMPILED = (numbers, pairs, grid, notes, couples, nested)


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def test_every_tool_here_has_a_compiled_gate() -> None:
    """The tests below are about the compiled gate: each tool must actually have one."""
    for t in COMPILED:
        assert plan_of(t).gate is not None, t.name


def _short(t: Tool, arguments: Any, options: CallOptions | None) -> ToolResult:
    if options is None:
        return asyncio.run(t.invoke(arguments))
    return asyncio.run(_invoke.invoke(t, arguments, None, options))


def _general(t: Tool, arguments: Any, options: CallOptions | None) -> ToolResult:
    return asyncio.run(_invoke.invoke(t, arguments, None, options or CallOptions()))


def _host(t: Tool, arguments: Any, options: CallOptions | None) -> ToolResult:
    limits = options.limits if options is not None else ArgumentLimits()
    settings = {
        "max_argument_bytes": limits.max_bytes,
        "max_argument_depth": limits.max_depth,
    }
    host = Host(config={"settings": settings})

    class Pack:
        @staticmethod
        def register_tools(register: Any) -> None:
            register(t)

    from toolpacks import hookimpl

    Pack.register_tools = hookimpl(Pack.register_tools)  # type: ignore[method-assign]
    host.add_pack(Pack, name="p")
    return asyncio.run(host.toolset(packs=["p"]).call(t.name, arguments))


ROADS = {"short": _short, "general": _general, "host": _host}

DEFAULT = None
SMALL = CallOptions(limits=ArgumentLimits(max_bytes=64 * 1024))
SHALLOW = CallOptions(limits=ArgumentLimits(max_depth=2))
DEPTH_3 = CallOptions(limits=ArgumentLimits(max_depth=3))

# (tool, arguments, options) that every road must refuse
OVER = {
    "2,000,000-item list[int]": (numbers, {"values": [1] * 2_000_000}, DEFAULT),
    "2,000,000-item tuple[int, ...]": (pairs, {"values": [1] * 2_000_000}, DEFAULT),
    "1.6 MB of list[list[str]]": (grid, {"rows": [["x" * 200] * 8] * 1_000}, DEFAULT),
    "1.28 MB of emoji in a model list": (
        notes,
        {"items": [{"text": "\U0001f600" * 200}] * 1_600},
        DEFAULT,
    ),
    # 400,000 characters, 1.6 MB of UTF-8: within the item and text bounds that a gate
    # counting one byte a character would choose for two texts a model (1,000 and 256)
    "1.6 MB of emoji in 200 two-text models": (
        couples,
        {"items": [{"left": "\U0001f600" * 1_000, "right": "\U0001f600" * 1_000}] * 200},
        DEFAULT,
    ),
    "small byte cap: a 40,000-item list[int]": (numbers, {"values": [7] * 40_000}, SMALL),
    "small byte cap: non-ASCII text under the cap in characters": (
        notes,
        {"items": [{"text": "é" * 100}] * 400},
        SMALL,
    ),
    # {"rows": [["a"]]}: an object, a list, a list — three levels
    # 60,000 characters (under 64 Ki) but 240,000 UTF-8 bytes (over): within the list and
    # text bounds a compiled gate that counted characters as bytes would choose
    "small byte cap: 60 notes of 1,000 emoji": (
        notes,
        {"items": [{"text": "\U0001f600" * 1_000}] * 60},
        SMALL,
    ),
    "depth 3 under a depth cap of 2": (grid, {"rows": [["a"]]}, SHALLOW),
    "depth 4 under the default cap's small sibling (3)": (nested, {"cube": [[[1]]]}, DEPTH_3),
}


@pytest.mark.parametrize("road", sorted(ROADS))
@pytest.mark.parametrize("form", ["dict", "json"])
@pytest.mark.parametrize("case", sorted(OVER))
def test_over_the_caps_is_refused_by_a_compiled_tool(road: str, form: str, case: str) -> None:
    t, arguments, options = OVER[case]
    sent: Any = arguments if form == "dict" else json.dumps(arguments)
    result = ROADS[road](t, sent, options)
    assert result.is_error, f"{case}: reached the tool ({result.content[:200]})"
    assert result.error is not None
    assert result.error.kind == "invalid_arguments", result.content[:300]
    assert not ran, f"{case}: the tool ran"


@pytest.mark.parametrize("road", sorted(ROADS))
def test_just_under_the_small_caps_still_runs(road: str) -> None:
    """The caps refuse what is over them, not everything: the same shapes, small enough, run."""
    assert not ROADS[road](numbers, {"values": [7] * 1_000}, SMALL).is_error
    assert not ROADS[road](notes, {"items": [{"text": "é" * 10}] * 20}, SMALL).is_error
    deep_enough = ROADS[road](grid, {"rows": [["a", "b"]]}, DEPTH_3)
    assert not deep_enough.is_error, deep_enough.content
    assert not ROADS[road](nested, {"cube": []}, SHALLOW).is_error
