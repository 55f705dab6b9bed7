"""The argument gate's edges that hand-made mutants showed no test pinned (issue 27).

Each test names the road it takes: the short path (``Tool.invoke`` of a plain tool, which
``start`` sends to ``_fast_invoke``) or the general path (``_invoke.invoke``, as a toolset with
hooks or approval calls it). A value the gate must refuse never reaches the tool on either.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolpacks import Tool, ToolContext, ToolDefinitionError, ToolResult, tool
from toolpacks.core._jsonargs import ArgumentsParseError, check_arguments, parse_arguments
from toolpacks.core.call import _invoke
from toolpacks.core.call._plan import plan_of

received: list[Any] = []
"""What the tools below were called with, most recent last."""


def _general(t: Tool, arguments: Any) -> ToolResult:
    """A call through the general path (what a toolset with hooks or approval takes)."""
    return asyncio.run(_invoke.invoke(t, arguments, None, None))


def _short(t: Tool, arguments: Any) -> ToolResult:
    """A call through ``Tool.invoke``; the tool must be one the short path takes."""
    assert plan_of(t).fast, "this tool must take the short path"
    return asyncio.run(t.invoke(arguments))


ROADS = {"short": _short, "general": _general}


def _refused(result: ToolResult, argument: str = "") -> str:
    """The error message of a refused call; asserts it was refused before the tool ran."""
    assert result.is_error, result.value
    assert result.error is not None
    assert result.error.kind == "invalid_arguments", result.content
    if argument:
        assert any(d.argument == argument for d in result.error.details), result.content
    assert not received, f"the tool ran with {received[-1]!r}"
    return result.content


@pytest.fixture(autouse=True)
def _clear() -> None:
    received.clear()


# -- typed **kwargs ---------------------------------------------------------------------------


@tool
def tally(label: str, **counts: int) -> str:
    """Record counts under a label."""
    received.append(counts)
    return f"{label}: {sum(counts.values())}"


def test_typed_kwargs_appear_in_the_schema() -> None:
    """``**counts: int`` is described as integer additional properties, not anything."""
    assert tally.input_schema["additionalProperties"] == {"type": "integer"}


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("value", [True, False, "hello", 1.5, [1], {"n": 1}, None])
def test_typed_kwargs_values_are_validated(road: str, value: Any) -> None:
    """A boolean, text, a fraction, a list, an object or null for ``**counts: int`` is refused."""
    _refused(ROADS[road](tally, {"label": "x", "apples": value}), "apples")


@pytest.mark.parametrize("road", ROADS)
def test_typed_kwargs_values_are_validated_from_json_text(road: str) -> None:
    """The same holds when the arguments arrive as JSON text."""
    _refused(ROADS[road](tally, '{"label": "x", "apples": true}'), "apples")


@pytest.mark.parametrize("road", ROADS)
def test_typed_kwargs_accept_what_the_type_accepts(road: str) -> None:
    """Integers (and numeric text, as for any int parameter) reach the tool as integers."""
    result = ROADS[road](tally, {"label": "x", "apples": 2, "pears": "3"})
    assert result.value == "x: 5"
    assert received == [{"apples": 2, "pears": 3}]


def test_untyped_and_any_kwargs_still_take_anything() -> None:
    """``**kwargs: Any`` keeps passing values through as they are."""

    @tool
    def loose(**options: Any) -> str:
        """Take options."""
        received.append(options)
        return "ok"

    assert loose.input_schema["additionalProperties"] is True
    assert loose.invoke_sync({"a": True, "b": "x"}).value == "ok"
    assert received == [{"a": True, "b": "x"}]


# -- lone surrogates and the size cap in UTF-8 bytes ------------------------------------------


@tool
def echo(text: str) -> str:
    """Echo a text."""
    received.append(text)
    return f"{len(text)}"


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("text", ["\ud800", "ok \udfff", "x" * 5 + "\ud800" + "é" * 2000])
def test_a_lone_surrogate_never_reaches_the_tool(road: str, text: str) -> None:
    """Text holding a lone surrogate is refused, short or long, as a dict or as JSON text."""
    _refused(ROADS[road](echo, {"text": text}), "text")
    _refused(ROADS[road](echo, '{"text": "' + text + '"}'))


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize(("char", "count"), [("é", 700_000), ("😀", 300_000), ("中", 400_000)])
def test_the_size_cap_counts_utf8_bytes_not_characters(road: str, char: str, count: int) -> None:
    """1.2-1.4 MB of non-ASCII text in fewer than 1 Mi characters passes no road's 1 MiB cap."""
    text = char * count
    assert count < 1024 * 1024 < len(text.encode())
    assert "larger than the limit" in _refused(ROADS[road](echo, {"text": text}))
    as_json = json.dumps({"text": text}, ensure_ascii=False)
    assert "larger than the limit" in _refused(ROADS[road](echo, as_json))


def test_non_ascii_text_under_the_cap_in_bytes_passes() -> None:
    """The byte count does not over-refuse: 800 kB of two-byte characters is within 1 MiB."""
    assert echo.invoke_sync({"text": "é" * 400_000}).value == "400000"


def test_check_arguments_counts_bytes_of_keys_and_nested_text() -> None:
    """The parsed-value walk counts UTF-8 bytes in keys and in nested strings too."""
    with pytest.raises(ArgumentsParseError, match="larger than the limit"):
        check_arguments({"k": ["é" * 300_000, "é" * 300_000]})
    with pytest.raises(ArgumentsParseError, match="larger than the limit"):
        check_arguments({"é" * 600_000: 1})
    assert check_arguments({"k": ["é" * 200_000, "é" * 200_000]}) == 1


# -- numeric text: the 100-digit cap ------------------------------------------------------------


@tool
def scale(x: float) -> str:
    """Scale a number."""
    received.append(x)
    return "ok"


@tool
def count(n: int) -> str:
    """Count to n."""
    received.append(n)
    return "ok"


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("t", [scale, count], ids=["float", "int"])
@pytest.mark.parametrize("text", ["9" * 100, "-" + "9" * 100, "+" + "9" * 100])
def test_numeric_text_of_100_digits_is_accepted(road: str, t: Tool, text: str) -> None:
    """Text of exactly 100 digits (a sign not counted) is a number, as the promise says."""
    assert ROADS[road](t, {"n" if t is count else "x": text}).value == "ok"
    assert received == [int(text) if t is count else float(text)]


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize("t", [scale, count], ids=["float", "int"])
@pytest.mark.parametrize("text", ["9" * 101, "-" + "9" * 101, "1" + "0" * 100])
def test_numeric_text_of_101_digits_is_refused(road: str, t: Tool, text: str) -> None:
    """Text of 101 digits where a number is expected is refused before it is converted."""
    name = "n" if t is count else "x"
    assert "too long (limit 100)" in _refused(ROADS[road](t, {name: text}), name)


def test_a_100_digit_integer_is_accepted_as_a_number_too() -> None:
    """The JSON number of 100 digits passes and of 101 is refused: text matches numbers."""
    assert count.invoke_sync(json.dumps({"n": int("9" * 100)})).value == "ok"
    received.clear()
    assert "101 digits" in _refused(count.invoke_sync(json.dumps({"n": int("1" + "0" * 100)})))
    assert parse_arguments('{"n": "' + "9" * 100 + '"}') == {"n": "9" * 100}


# -- tuples: each position kind-checked --------------------------------------------------------


@tool
def pair(p: tuple[int, str]) -> str:
    """Take an int and a text."""
    received.append(p)
    return "ok"


@tool
def switch(p: tuple[str, bool]) -> str:
    """Take a text and a flag."""
    received.append(p)
    return "ok"


@tool
def rows(r: list[tuple[bool, float]]) -> str:
    """Take rows of a flag and a number."""
    received.append(r)
    return "ok"


@tool
def numbers(v: tuple[int, ...]) -> str:
    """Take any number of integers."""
    received.append(v)
    return "ok"


@pytest.mark.parametrize("road", ROADS)
@pytest.mark.parametrize(
    ("t", "arguments", "where"),
    [
        (pair, {"p": [True, "a"]}, "p.0"),
        (switch, {"p": ["a", 1]}, "p.1"),
        (switch, {"p": ["a", "true"]}, "p.1"),
        (rows, {"r": [[True, 1.0], [1, 2.0]]}, "r.1.0"),
        (rows, {"r": [[True, False]]}, "r.0.1"),
        (numbers, {"v": [1, 2, False]}, "v.2"),
    ],
    ids=["bool-for-int", "int-for-bool", "text-for-bool", "nested", "bool-for-float", "variadic"],
)
def test_each_tuple_position_is_kind_checked(
    road: str, t: Tool, arguments: dict[str, Any], where: str
) -> None:
    """A wrong kind at a tuple position is refused, with the position in the path."""
    _refused(ROADS[road](t, arguments), where)


@pytest.mark.parametrize("road", ROADS)
def test_right_kinds_at_tuple_positions_pass(road: str) -> None:
    """Each position takes its own kind."""
    assert ROADS[road](pair, {"p": [1, "a"]}).value == "ok"
    assert ROADS[road](switch, {"p": ["a", True]}).value == "ok"
    assert received == [(1, "a"), ("a", True)]


# -- context=True ------------------------------------------------------------------------------


def test_context_true_injects_into_the_tool_context_parameter() -> None:
    """``context=True`` asks for a context: the parameter named ``tool_context`` gets it."""

    @tool(context=True)
    def whoami(tool_context: ToolContext) -> str:
        """Say who calls."""
        return f"{tool_context.agent_id}:{tool_context.tool_name}"

    assert "tool_context" not in whoami.input_schema["properties"]
    result = whoami.invoke_sync({}, ToolContext(agent_id="ann"))
    assert result.value == "ann:whoami"


def test_context_true_with_an_annotated_parameter_uses_that_parameter() -> None:
    """``context=True`` with a parameter annotated ``ToolContext`` injects into it."""

    @tool(context=True)
    def whoami(ctx: ToolContext, greeting: str = "hi") -> str:
        """Say who calls."""
        return f"{greeting} {ctx.agent_id}"

    assert list(whoami.input_schema["properties"]) == ["greeting"]
    assert whoami.invoke_sync({}, ToolContext(agent_id="bob")).value == "hi bob"


def test_context_true_without_a_context_parameter_says_what_to_write() -> None:
    """The error names the parameter to add, not ``True``."""
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(context=True)
        def plain(x: int) -> int:
            """Return x."""
            return x

    message = str(caught.value)
    assert "`True" not in message
    assert "add a parameter `tool_context: ToolContext`" in message


@pytest.mark.parametrize("bad", [1, 2.5, ["ctx"]])
def test_context_of_another_type_is_a_definition_error(bad: Any) -> None:
    """``context=`` takes a parameter name or True; anything else is refused clearly."""
    with pytest.raises(ToolDefinitionError, match="context="):

        @tool(context=bad)
        def plain(ctx: ToolContext) -> str:
            """Return nothing."""
            return ""


def test_context_false_is_no_explicit_name() -> None:
    """``context=False`` is the default: the context is still found by its annotation."""

    @tool(context=False)
    def whoami(ctx: ToolContext) -> str:
        """Say who calls."""
        return f"{ctx.agent_id}"

    assert whoami.invoke_sync({}, ToolContext(agent_id="cy")).value == "cy"
