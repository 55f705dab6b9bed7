"""One gate: every road a call can take passes the same argument checks before tool code runs.

The roads: ``Tool.invoke`` with a dict and with JSON text, ``Toolset.call``, ``call_many``,
and ``execute`` with an OpenAI payload (arguments as text) and an Anthropic one (arguments
as a parsed object). The served road (``toolpacks serve``) is in
``tests/mcp/test_served_gate.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import ToolResult, Toolset, tool

calls: list[str] = []


class Point(BaseModel):
    """A point whose coordinates are numbers."""

    x: float
    visible: bool = True


@tool
def take(
    n: int = 0,
    ratio: float = 0.0,
    flag: bool = False,
    ints: list[int] | None = None,
    points: list[Point] | None = None,
    table: dict[str, int] | None = None,
    anything: Any = None,
    text: str = "",
) -> str:
    """Take arguments of every kind and record that the tool ran."""
    calls.append("ran")
    return "ran"


Road = Callable[[Any], Coroutine[Any, Any, ToolResult]]


async def _dict(arguments: Any) -> ToolResult:
    return await take.invoke(arguments)


async def _text(arguments: Any) -> ToolResult:
    return await take.invoke(_as_text(arguments))


async def _toolset(arguments: Any) -> ToolResult:
    return await Toolset([take]).call("take", arguments)


async def _call_many(arguments: Any) -> ToolResult:
    (result,) = await Toolset([take]).call_many([("take", arguments)])
    return result


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


async def _openai(arguments: Any) -> ToolResult:
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "take", "arguments": _as_text(arguments)},
            }
        ],
    }
    (reply,) = await Toolset([take]).execute(message, "openai")
    return _reply(reply["content"])


async def _anthropic(arguments: Any) -> ToolResult:
    if isinstance(arguments, str):
        pytest.skip("Anthropic sends arguments as a parsed object")
    message = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "c1", "name": "take", "input": arguments}],
    }
    (block,) = await Toolset([take]).execute(message, "anthropic")
    content = block["content"]
    if not isinstance(content, str):
        content = "".join(part.get("text", "") for part in content)
    return _reply(content)


def _reply(content: str) -> ToolResult:
    """Provider replies carry only text: an error is any reply whose tool did not run."""
    return ToolResult(content, is_error=content != "ran", content=content)


ROADS: dict[str, Road] = {
    "dict": _dict,
    "json-text": _text,
    "toolset": _toolset,
    "call_many": _call_many,
    "openai-execute": _openai,
    "anthropic-execute": _anthropic,
}

_deep: dict[str, Any] = {"x": 1}
for _ in range(100):
    _deep = {"x": _deep}

HOSTILE: dict[str, tuple[Any, str]] = {
    "nan literal": ({"ratio": float("nan")}, "finite"),
    "infinity": ({"ratio": float("inf")}, "finite"),
    "nan as text": ({"ratio": "nan"}, "finite"),
    "Infinity as text": ({"ratio": "Infinity"}, "finite"),
    "1e999 as text": ({"ratio": "1e999"}, "finite"),
    "nan inside Any": ({"anything": [1, {"v": float("nan")}]}, "finite"),
    "4000-digit integer": ({"n": 10**4000}, "too long"),
    "4000-digit integer as text": ({"n": "9" * 4000}, "too long"),
    "2 MB string": ({"text": "x" * (2 << 20)}, "limit"),
    "million-element array": ({"ints": [0] * 1_000_000}, "limit"),
    "depth 100": ({"anything": _deep}, "nested"),
    "true for int": ({"n": True}, "got boolean"),
    "false for float": ({"ratio": False}, "got boolean"),
    "true inside list[int]": ({"ints": [1, True]}, "got boolean"),
    "true inside dict[str, int]": ({"table": {"a": True}}, "got boolean"),
    "true inside a model": ({"points": [{"x": True}]}, "got boolean"),
    "1 for bool": ({"flag": 1}, "got number"),
    "'true' for bool": ({"flag": "true"}, "got string"),
    "1 for a model's bool": ({"points": [{"x": 1, "visible": 1}]}, "got number"),
    "lone surrogate": ({"text": "a\ud800b"}, "Unicode"),
    "lone surrogate key": ({"anything": {"\udc00": 1}}, "Unicode"),
}


def _arguments_for(road: str, arguments: Any) -> Any:
    if road in ("json-text", "openai-execute"):
        try:
            return json.dumps(arguments)  # NaN and Infinity become literals, as models send
        except (ValueError, UnicodeEncodeError):  # pragma: no cover
            pytest.skip("not representable as text")
    return arguments


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_arguments_never_reach_the_tool(road: str, case: str) -> None:
    """Each hostile value is an error result on every road, and the tool never runs."""
    arguments, words = HOSTILE[case]
    calls.clear()
    result = asyncio.run(ROADS[road](_arguments_for(road, arguments)))
    assert result.is_error, (road, case, result.content[:200])
    assert calls == [], (road, case)
    assert words.lower() in result.content.lower(), (road, case, result.content[:300])


@pytest.mark.parametrize("road", ["json-text", "openai-execute"])
def test_duplicate_keys_in_text_are_refused(road: str) -> None:
    """Duplicate keys exist only in text; every road that receives text refuses them."""
    calls.clear()
    for text in ('{"n": 1, "n": 2}', '{"points": [{"x": 1, "x": 2}]}'):
        result = asyncio.run(ROADS[road](text))
        assert result.is_error
        assert "duplicate key" in result.content
    assert calls == []


@pytest.mark.parametrize("road", ROADS)
def test_valid_arguments_pass_every_road(road: str) -> None:
    """The gate refuses what it must and nothing else: lax coercions models rely on pass."""
    arguments = {
        "n": "3",
        "ratio": 2,
        "flag": False,
        "ints": [1, 2],
        "points": [{"x": "1.5", "visible": True}],
        "table": {"a": 1},
        "anything": {"nested": [1.5, "nan", None, True]},
        "text": 'héllo: {not: json} "quoted"',
    }
    calls.clear()
    result = asyncio.run(ROADS[road](_arguments_for(road, arguments)))
    assert not result.is_error, result.content
    assert calls == ["ran"]


def test_error_names_the_path_of_a_nested_value() -> None:
    """The model is told where the bad value is, not only what is wrong."""
    result = asyncio.run(take.invoke({"points": [{"x": 1}, {"x": True}]}))
    assert result.error is not None
    assert [d.argument for d in result.error.details] == ["points.1.x"]
    result = asyncio.run(take.invoke({"anything": {"a": [0, float("inf")]}}))
    assert result.error is not None
    assert [d.argument for d in result.error.details] == ["anything.a.1"]


def test_schema_only_tools_pass_the_same_gate() -> None:
    """A tool known only by its JSON Schema (file tool, MCP tool) gets the same checks."""
    from toolpacks import Tool

    def handler(**kwargs: Any) -> str:
        calls.append("ran")
        return "ran"

    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "on": {"type": "boolean"},
            "rows": {
                "type": "array",
                "items": {"type": "object", "properties": {"w": {"type": "number"}}},
            },
        },
    }
    t = Tool(handler, name="schema_only", description="d", parameters=schema)
    calls.clear()
    for bad in (
        {"count": True},
        {"on": "yes"},
        {"rows": [{"w": "Infinity"}]},
        {"rows": [{"w": False}]},
    ):
        assert asyncio.run(t.invoke(bad)).is_error, bad
    assert calls == []
    assert not asyncio.run(t.invoke({"count": 2, "on": True, "rows": [{"w": 1.5}]})).is_error


def test_a_tool_raising_base_exceptions_gives_error_results() -> None:
    """SystemExit, KeyboardInterrupt and custom BaseExceptions become results, every road."""

    class Custom(BaseException):
        pass

    def make(exc: BaseException, asynchronous: bool) -> Any:
        if asynchronous:

            async def boom_async() -> str:
                """Raise."""
                raise exc

            return tool(boom_async, name="boom")

        def boom() -> str:
            """Raise."""
            raise exc

        return tool(boom)

    for exc in (SystemExit(3), KeyboardInterrupt(), Custom()):
        for asynchronous in (False, True):
            t = make(exc, asynchronous)
            for result in (
                asyncio.run(t.invoke({})),
                asyncio.run(t.invoke("{}")),
                asyncio.run(Toolset([t]).call("boom", {})),
            ):
                assert result.is_error
                assert type(exc).__name__ in result.content


def test_cancellation_still_propagates() -> None:
    """Only ``asyncio.CancelledError`` escapes: a cancelled call is cancelled."""

    @tool
    async def forever() -> str:
        """Wait forever."""
        await asyncio.Event().wait()
        return "never"

    async def main() -> None:
        task = asyncio.create_task(forever.invoke({}))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
