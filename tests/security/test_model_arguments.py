"""Arguments from a model are hostile until validated: caps, strict JSON, no type confusion."""

from __future__ import annotations

import asyncio
import json
from enum import Enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from toolpacks import ArgumentLimits, CallOptions, Tool, tool


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool
def count(n: int, ratio: float = 1.0, flag: bool = False) -> str:
    """Count."""
    return f"{n} {ratio} {flag}"


def run(t: Tool, arguments: Any, options: CallOptions | None = None) -> Any:
    return asyncio.run(t.invoke(arguments, options=options))


def test_oversize_arguments_are_an_error_result() -> None:
    """JSON text over the size cap is refused before parsing, as an error result."""
    big = json.dumps({"text": "x" * 2048})
    result = run(echo, big, CallOptions(limits=ArgumentLimits(max_bytes=1024)))
    assert result.is_error
    assert result.error.kind == "invalid_arguments"
    assert "limit of 1024 bytes" in result.content


def test_default_size_cap_is_one_mebibyte() -> None:
    """The default cap refuses a 2 MiB argument text."""
    result = run(echo, json.dumps({"text": "y" * (2 * 1024 * 1024)}))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "limit" in result.content


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    """100,000 nested arrays give an error result naming the depth limit, never RecursionError."""
    deep = '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = run(echo, deep)
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "nested more than 64 levels" in result.content


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    """A string full of brackets is not mistaken for nesting."""
    result = run(echo, json.dumps({"text": "[" * 500}))
    assert result.value == "[" * 500


def test_duplicate_keys_are_refused() -> None:
    """`{"text": "a", "text": "/etc/passwd"}` is an error, not last-wins."""
    result = run(echo, '{"text": "a", "text": "/etc/passwd"}')
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "duplicate key 'text'" in result.content


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_invalid(literal: str) -> None:
    """NaN, Infinity and floats overflowing to infinity are invalid arguments."""
    result = run(count, f'{{"n": 1, "ratio": {literal}}}')
    assert result.is_error
    assert result.error.kind == "invalid_arguments"


def test_absurdly_long_integers_are_invalid() -> None:
    """An integer literal of 10,000 digits is refused before int() parses it."""
    result = run(count, '{"n": ' + "9" * 10_000 + "}")
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "too long" in result.content


def test_numeric_strings_are_accepted_for_numbers() -> None:
    """Models often quote numbers: "3" becomes 3 and "0.5" becomes 0.5."""
    assert run(count, {"n": "3", "ratio": "0.5"}).value == "3 0.5 False"


@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_refused_for_numbers(value: bool) -> None:
    """true/false is not an integer or a number."""
    for arguments in ({"n": value}, {"n": 1, "ratio": value}):
        result = run(count, arguments)
        assert result.error is not None
        assert result.error.kind == "invalid_arguments"


@pytest.mark.parametrize("value", [0, 1])
def test_integers_are_refused_for_booleans(value: int) -> None:
    """0/1 is not a boolean."""
    result = run(count, {"n": 1, "flag": value})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "flag" in result.content


def test_unknown_keys_error_lists_the_allowed_keys() -> None:
    """An unknown argument is named, with the arguments the tool does accept."""
    result = run(count, {"n": 1, "nn": 2})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "nn" in result.content
    assert "allowed arguments are: flag, n, ratio" in result.content


def test_pattern_is_enforced_by_the_linear_time_engine() -> None:
    """A catastrophic-backtracking pattern on hostile input finishes at once (linear engine)."""
    from typing import Annotated

    from pydantic import Field

    @tool
    def check(word: Annotated[str, Field(pattern=r"^(a+)+$")]) -> str:
        """Check a word."""
        return word

    result = run(check, {"word": "a" * 5000 + "!"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "word" in result.content


def test_uncompilable_pattern_fails_at_definition() -> None:
    """A pattern that does not compile is a definition error, not a call-time surprise."""
    from typing import Annotated

    from pydantic import Field

    from toolpacks import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="pattern"):

        @tool
        def bad(word: Annotated[str, Field(pattern=r"(unclosed")]) -> str:
            """Bad."""
            return word


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int


@tool
def everything(
    s: str,
    i: int,
    f: float,
    b: bool,
    lit: Literal["a", "b"],
    color: Color,
    items: list[int],
    mapping: dict[str, float],
    point: Point,
    maybe: str | None = None,
) -> str:
    """A tool with every kind of parameter."""
    return "ok"


def test_fuzzed_arguments_always_give_a_result() -> None:
    """Arbitrary JSON values for every parameter kind never raise out of invoke() or call()."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from toolpacks import ToolResult, Toolset

    toolset = Toolset([everything, count, echo])

    json_values = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=True)
        | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=8), children, max_size=4)
        ),
        max_leaves=12,
    )
    names = st.sampled_from(
        ["s", "i", "f", "b", "lit", "color", "items", "mapping", "point", "maybe", "zz"]
    )
    arguments = st.dictionaries(names, json_values, max_size=10) | json_values

    @settings(
        max_examples=300,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(arguments, st.booleans(), st.sampled_from(["everything", "count", "echo", "nope"]))
    def check(args: Any, as_text: bool, name: str) -> None:
        payload: Any = args
        if as_text:
            try:
                payload = json.dumps(args)
            except ValueError:
                payload = str(args)
        result = run(everything, payload)
        assert isinstance(result, ToolResult)
        assert isinstance(result.content, str)
        # ``everything`` returns "ok" for any valid arguments: its only failure is a refusal.
        if result.is_error:
            assert result.error is not None
            assert result.error.kind == "invalid_arguments", result
        else:
            assert result.value == "ok"
        called = asyncio.run(toolset.call(name, payload))
        assert isinstance(called, ToolResult)
        assert isinstance(called.content, str)
        if name == "nope":
            assert called.error is not None
            assert called.error.kind == "not_found"
        elif called.is_error:
            assert called.error is not None
            assert called.error.kind == "invalid_arguments", called

    check()


@pytest.mark.parametrize(
    "text",
    [
        '{"text": "a", "text" : "b"}',
        '{"text": "a\\":", "text": "b"}',
        '{"text": "a",\n  "text"\t:\t"b"}',
        '{"outer": {"k": 1, "k": 2}, "text": "x"}',
    ],
)
def test_duplicate_keys_are_caught_whatever_the_spacing_or_decoys(text: str) -> None:
    """The fast parser's duplicate-key proof holds with whitespace and decoy strings."""
    result = run(echo, text)
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "duplicate key" in result.content


def test_schema_only_tools_refuse_bool_number_confusion_too() -> None:
    """File, MCP and hand-built tools (validated from a schema) get the same type checks."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "flag": {"type": ["boolean", "null"]}},
        "required": ["n"],
    }
    hand = Tool(lambda **kw: kw, name="hand", description="Hand-built.", input_schema=schema)
    for arguments in ({"n": True}, {"n": 1, "flag": 0}):
        result = run(hand, arguments)
        assert result.error is not None
        assert result.error.kind == "invalid_arguments"
    assert run(hand, {"n": "2", "flag": True}).value == {"n": 2, "flag": True}


def test_schema_defaults_are_not_shared_between_calls() -> None:
    """A list default handed to one call and mutated there does not leak into the next."""
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "default": []}},
    }

    def grow(**kwargs):  # type: ignore[no-untyped-def]  # untyped: validated from the schema
        kwargs["items"].append(1)
        return len(kwargs["items"])

    hand = Tool(grow, name="grow", description="Appends.", input_schema=schema)
    assert run(hand, {}).value == 1
    assert run(hand, {}).value == 1
