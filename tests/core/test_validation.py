"""Validating model-supplied arguments: coercion, strictness, messages a model can act on."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolpacks import ArgumentError, CallOptions, Tool, ToolResult, tool

FIX = "Fix the arguments and call the tool again."


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Query(BaseModel):
    """A query."""

    text: str
    limit: int = 10


class Point(TypedDict):
    """A point."""

    x: int
    y: int


@dataclasses.dataclass
class Window:
    """A window."""

    width: int


def _error(result: ToolResult) -> tuple[str, tuple[ArgumentError, ...]]:
    assert result.is_error, result
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    return result.content, result.error.details


def test_malformed_json_is_an_error_result(run: Any, add: Tool) -> None:
    """Broken JSON gives an invalid-arguments result saying where it broke."""
    content, details = _error(run(add.invoke('{"a": 1,')))
    assert content == (
        "Invalid arguments for tool 'add':\n"
        "- (arguments): arguments are not valid JSON: Expecting property name enclosed in "
        f"double quotes at line 1 column 9\n{FIX}"
    )
    assert details[0].argument == ""


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "list"), ('"x"', "str"), ("3", "int")])
def test_json_that_is_not_an_object_is_refused(run: Any, add: Tool, text: str, kind: str) -> None:
    """A JSON array, string or number is not an arguments object."""
    content, _ = _error(run(add.invoke(text)))
    assert f"arguments must be a JSON object, got {kind}" in content


def test_non_mapping_arguments_are_refused(run: Any, add: Tool) -> None:
    """A Python list passed as arguments is an error result, not an exception."""
    content, _ = _error(run(add.invoke([1, 2])))  # type: ignore[arg-type]
    assert "arguments must be a JSON object, got list" in content


def test_wrong_type_names_the_argument_and_the_value(run: Any, add: Tool) -> None:
    """A wrong type says which argument, what was expected and what was sent."""
    content, details = _error(run(add.invoke({"a": "ten"})))
    assert content == (
        "Invalid arguments for tool 'add':\n"
        "- a: Input should be a valid integer, unable to parse string as an integer "
        f"(got 'ten')\n{FIX}"
    )
    assert details == (
        ArgumentError(
            "a", "Input should be a valid integer, unable to parse string as an integer (got 'ten')"
        ),
    )


def test_missing_required_argument(run: Any, add: Tool) -> None:
    """A missing required argument is named."""
    content, details = _error(run(add.invoke({"b": 1})))
    assert content == f"Invalid arguments for tool 'add':\n- a: missing required argument\n{FIX}"
    assert [d.argument for d in details] == ["a"]


def test_every_problem_is_listed(run: Any, add: Tool) -> None:
    """Several bad arguments give one line each."""
    _, details = _error(run(add.invoke({"a": "x", "b": "y"})))
    assert [d.argument for d in details] == ["a", "b"]


def test_unknown_arguments_are_rejected_listing_the_allowed_keys(run: Any, add: Tool) -> None:
    """An undeclared argument is refused by default; the message lists the allowed ones."""
    content, details = _error(run(add.invoke({"a": 1, "c": 2})))
    assert content == (
        "Invalid arguments for tool 'add':\n"
        f"- c: unexpected argument; allowed arguments are: a, b\n{FIX}"
    )
    assert details == (ArgumentError("c", "unexpected argument; allowed arguments are: a, b"),)


def test_extra_args_ignore_drops_unknown_arguments(run: Any) -> None:
    """``extra_args="ignore"`` forwards only the declared arguments."""

    @tool(extra_args="ignore")
    def echo(text: str) -> str:
        """Echo."""
        return text

    assert run(echo.invoke({"text": "hi", "junk": 1})).value == "hi"


def test_call_options_can_ignore_extras_of_a_rejecting_tool(run: Any, add: Tool) -> None:
    """A host's ``extra_args="ignore"`` drops extras of a tool that rejects them."""
    ignore = CallOptions(extra_args="ignore")
    assert run(add.invoke({"a": 1, "zzz": 2}, options=ignore)).value == 3


def test_call_options_ignore_extras_of_a_tool_without_parameters(run: Any) -> None:
    """The host's ignore policy also applies to a tool that takes no arguments."""

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    result = run(ping.invoke({"junk": 1}, options=CallOptions(extra_args="ignore")))
    assert result.value == "pong"
    assert run(ping.invoke({"junk": 1})).is_error


def test_var_keyword_receives_extra_arguments(run: Any) -> None:
    """A ``**kwargs`` tool gets undeclared arguments passed through."""

    @tool
    def collect(a: int, **rest: Any) -> dict[str, Any]:
        """Collect."""
        return {"a": a, **rest}

    assert run(collect.invoke({"a": "1", "b": 2})).value == {"a": 1, "b": 2}


def test_lax_mode_coerces_strings_to_numbers(run: Any) -> None:
    """By default ``"3"`` becomes the int 3 (pydantic lax mode)."""
    seen: list[Any] = []

    @tool
    def f(n: int, x: float) -> str:
        """F."""
        seen.extend([n, x])
        return ""

    run(f.invoke({"n": "3", "x": "1.5"}))
    assert seen == [3, 1.5]
    assert type(seen[0]) is int


def test_strict_mode_refuses_strings_for_numbers(run: Any) -> None:
    """With ``strict=True`` ``"3"`` is not accepted for an int."""

    @tool(strict=True)
    def f(n: int) -> int:
        """F."""
        return n

    content, _ = _error(run(f.invoke({"n": "3"})))
    assert "- n: Input should be a valid integer (got '3')" in content
    assert run(f.invoke({"n": 3})).value == 3


def test_strict_mode_accepts_what_json_can_send(run: Any) -> None:
    """Strict mode still takes an enum value, an ISO date, an array for a tuple, an int float."""
    seen: list[Any] = []

    @tool(strict=True)
    def f(color: Color, day: datetime.date, pair: tuple[int, int], x: float, q: Query) -> str:
        """F."""
        seen.extend([color, day, pair, x, q])
        return ""

    args = {"color": "red", "day": "2024-02-29", "pair": [1, 2], "x": 1, "q": {"text": "t"}}
    result = run(f.invoke(args))
    assert not result.is_error, result.content
    assert seen == [Color.RED, datetime.date(2024, 2, 29), (1, 2), 1.0, Query(text="t")]


@pytest.mark.parametrize(
    ("annotation", "value", "message"),
    [
        (int, True, "expected a number, got boolean True"),
        (float, False, "expected a number, got boolean False"),
        (bool, 1, "expected true or false, got number 1"),
        (bool, 0, "expected true or false, got number 0"),
    ],
)
def test_bool_and_int_are_not_confused(
    run: Any, annotation: type, value: Any, message: str
) -> None:
    """``true`` is not 1 and 1 is not ``true``, even in lax mode."""

    def f(v: Any) -> str:
        """F."""
        return ""

    f.__annotations__["v"] = annotation
    t = tool(f)
    _, details = _error(run(t.invoke({"v": value})))
    assert details == (ArgumentError("v", message),)


def test_model_parameter_is_received_as_a_model_instance(run: Any) -> None:
    """A pydantic model parameter arrives as an instance, not a dict."""
    seen: list[Any] = []

    @tool
    def search(query: Query) -> str:
        """Search."""
        seen.append(query)
        return query.text

    assert run(search.invoke({"query": {"text": "cats"}})).value == "cats"
    assert seen == [Query(text="cats", limit=10)]


def test_nested_model_errors_name_the_path(run: Any) -> None:
    """A bad field inside a model is reported with its dotted path."""

    @tool
    def search(query: Query) -> str:
        """Search."""
        return query.text

    _, details = _error(run(search.invoke({"query": {"text": "x", "limit": "many"}})))
    assert [d.argument for d in details] == ["query.limit"]


def test_structured_parameters_are_converted(run: Any) -> None:
    """TypedDict, dataclass, Enum, Literal, Optional, list and dict parameters validate."""
    seen: dict[str, Any] = {}

    @tool
    def f(
        point: Point,
        window: Window,
        color: Color,
        mode: Literal["fast", "slow"],
        ids: list[int],
        weights: dict[str, float],
        note: str | None = None,
    ) -> str:
        """F."""
        seen.update(locals())
        return ""

    args = {
        "point": {"x": 1, "y": "2"},
        "window": {"width": 3},
        "color": "blue",
        "mode": "slow",
        "ids": ["1", 2],
        "weights": {"a": 1},
        "note": None,
    }
    result = run(f.invoke(args))
    assert not result.is_error, result.content
    assert seen["point"] == {"x": 1, "y": 2}
    assert seen["window"] == Window(width=3)
    assert seen["color"] is Color.BLUE
    assert seen["mode"] == "slow"
    assert seen["ids"] == [1, 2]
    assert seen["weights"] == {"a": 1.0}
    assert seen["note"] is None


def test_literal_outside_its_values_is_refused(run: Any) -> None:
    """A value outside a Literal is named with the allowed values."""

    @tool
    def f(mode: Literal["fast", "slow"]) -> str:
        """F."""
        return mode

    content, _ = _error(run(f.invoke({"mode": "medium"})))
    assert "- mode: Input should be 'fast' or 'slow' (got 'medium')" in content


def test_field_constraints_are_enforced(run: Any) -> None:
    """``Annotated[int, Field(ge=1, le=5)]`` refuses 9 with the bound in the message."""

    @tool
    def rate(stars: Annotated[int, Field(description="Stars", ge=1, le=5)]) -> int:
        """Rate."""
        return stars

    content, _ = _error(run(rate.invoke({"stars": 9})))
    assert "- stars: Input should be less than or equal to 5 (got 9)" in content
    assert run(rate.invoke({"stars": 5})).value == 5


def test_defaults_are_left_to_the_function(run: Any) -> None:
    """An omitted optional argument takes the function's own default."""

    @tool
    def f(a: int, b: list[int] | None = None) -> str:
        """F."""
        return repr(b)

    assert run(f.invoke({"a": 1})).value == "None"


def test_secret_values_are_not_echoed(run: Any) -> None:
    """A password-format parameter's bad value is not repeated in the message."""
    from pydantic import SecretStr

    @tool
    def login(password: Annotated[SecretStr, Field(min_length=8)]) -> str:
        """Log in."""
        return "ok"

    content, _ = _error(run(login.invoke({"password": "short"})))
    assert "short" not in content
    assert "(value redacted)" in content


def test_validation_happens_before_hooks(run: Any, add: Tool) -> None:
    """Invalid arguments never reach the before_invoke hooks or the function."""
    calls: list[Any] = []
    add.before_invoke(lambda **kw: calls.append(kw))
    run(add.invoke({"a": "x"}))
    assert calls == []


# -- hand-built tools (validated by their schema) ----------------------------------------------


@pytest.fixture
def fake_search() -> Tool:
    """A hand-built tool from a lambda and a JSON Schema with a default."""
    return Tool(
        name="fake_search",
        func=lambda q, n: f"{q}:{n}",
        description="Fake search.",
        parameters={
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "n": {"type": "integer", "default": 7},
            },
            "required": ["q"],
        },
    )


def test_hand_built_tool_fills_defaults_from_its_schema(run: Any, fake_search: Tool) -> None:
    """Schema defaults are filled in for omitted arguments."""
    assert run(fake_search.invoke({"q": "x"})).value == "x:7"


def test_hand_built_tool_coerces_and_checks_types(run: Any, fake_search: Tool) -> None:
    """Types from the schema coerce in lax mode and refuse what does not fit."""
    assert run(fake_search.invoke({"q": "x", "n": "3"})).value == "x:3"
    content, _ = _error(run(fake_search.invoke({"q": 1})))
    assert "- q: Input should be a valid string (got 1)" in content


def test_hand_built_tool_requires_and_rejects(run: Any, fake_search: Tool) -> None:
    """Required properties are enforced and unknown ones refused (listing the allowed)."""
    content, _ = _error(run(fake_search.invoke({})))
    assert "- q: missing required argument" in content
    content, _ = _error(run(fake_search.invoke({"q": "x", "z": 1})))
    assert "- z: unexpected argument; allowed arguments are: n, q" in content


def test_hand_built_enum_is_enforced(run: Any) -> None:
    """A schema ``enum`` accepts only its values."""
    t = Tool(
        name="rate",
        func=lambda stars: stars,
        description="Rate.",
        parameters={"type": "object", "properties": {"stars": {"enum": [1, 2, 3]}}},
    )
    assert run(t.invoke({"stars": 2})).value == 2
    assert run(t.invoke({"stars": 9})).is_error


def test_open_schema_passes_arguments_through(run: Any) -> None:
    """A schema without properties accepts any object."""
    t = Tool(
        name="any", func=lambda **kw: sorted(kw), description="Any.", parameters={"type": "object"}
    )
    assert run(t.invoke({"b": 1, "a": 2})).value == ["a", "b"]


def test_hand_built_tool_honours_strict(run: Any) -> None:
    """A schema-only tool with ``strict=True`` refuses ``"3"`` for an integer."""
    t = Tool(
        name="count",
        func=lambda n: n,
        description="Count.",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
        strict=True,
    )
    content, _ = _error(run(t.invoke({"n": "3"})))
    assert "- n: Input should be a valid integer (got '3')" in content
    assert run(t.invoke({"n": 3})).value == 3
