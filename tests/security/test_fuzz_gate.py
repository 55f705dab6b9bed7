"""Fuzzing the argument gate with parsed values, not only JSON text.

Arbitrary JSON-like values (huge integers, NaN and infinities, text with lone surrogates,
deep nesting, numbers and booleans in each other's places) are given as a dict to a typed
tool and to a tool known only by its JSON Schema, through ``Tool.invoke`` and
``Toolset.call``. Whatever comes in, a call gives a ``ToolResult`` with text that encodes as
UTF-8; a call that succeeds handed the tool nothing the gate promises to refuse; and the
same arguments sent as JSON text get the same outcome. The served road is fuzzed in
``tests/mcp/test_fuzz_served.py``.

Runs are derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from toolpacks import Tool, ToolResult, Toolset, tool

MAX_DIGITS = 100
"""The default ``ArgumentLimits.max_int_digits``."""
FUZZ = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

received: list[dict[str, Any]] = []
"""What the fuzzed tools were called with, most recent last."""


class Inner(BaseModel):
    """A nested model: a number, a boolean and a list of integers."""

    x: float
    visible: bool = True
    tags: list[int] = []


@tool
def typed(
    n: int = 0,
    x: float = 0.0,
    flag: bool = False,
    ints: list[int] | None = None,
    point: Inner | None = None,
    table: dict[str, int] | None = None,
    maybe: int | None = None,
    either: int | str = 0,
    some: float | list[int] = 0.0,
    anything: Any = None,
    text: str = "",
) -> dict[str, Any]:
    """Take arguments of every kind and echo them back."""
    kwargs = {
        "n": n,
        "x": x,
        "flag": flag,
        "ints": ints,
        "point": point,
        "table": table,
        "maybe": maybe,
        "either": either,
        "some": some,
        "anything": anything,
        "text": text,
    }
    received.append(kwargs)
    return {**kwargs, "point": point.model_dump() if point is not None else None}


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "ints": {"type": "array", "items": {"type": "integer"}},
        "point": {
            "type": "object",
            "properties": {
                "x": {"type": "number"},
                "visible": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "integer"}},
            },
        },
        "table": {"type": "object", "additionalProperties": {"type": "integer"}},
        "maybe": {"type": ["integer", "null"]},
        "either": {"type": ["integer", "string"]},
        "some": {"anyOf": [{"type": "number"}, {"type": "array", "items": {"type": "integer"}}]},
        "anything": {},
        "text": {"type": "string"},
    },
    "additionalProperties": False,
}


def _handler(**kwargs: Any) -> dict[str, Any]:
    received.append(kwargs)
    return kwargs


schema_only = Tool(
    _handler, name="schema_only", description="Echo schema-checked arguments.", parameters=SCHEMA
)
TOOLS = {"typed": typed, "schema_only": schema_only}
TOOLSET = Toolset([typed, schema_only])

# Where each tool promises a number or a boolean: "int", "float", "bool"; a list is "each
# item", a dict with "*" is "each value", another dict is "these keys"; a tuple is a union
# (no boolean unless one of its kinds is "bool"; a list value follows its list kind).
KINDS: dict[str, Any] = {
    "either": ("int", "str"),
    "some": ("float", ["int"]),
    "n": "int",
    "x": "float",
    "flag": "bool",
    "ints": ["int"],
    "point": {"x": "float", "visible": "bool", "tags": ["int"]},
    "table": {"*": "int"},
    "maybe": "int",
}

# -- strategies ------------------------------------------------------------------------------

ANY_CHAR = st.characters(exclude_categories=())  # surrogates included
SPECIAL_CHARS = st.sampled_from(["\ud800", "\udfff", "\udc00", "\x00", "é", '"', "\\", ":", "{"])
texts = st.text(alphabet=ANY_CHAR | SPECIAL_CHARS, max_size=12)
NUMERIC_TEXTS = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "+inf",
    "Infinity",
    "-Infinity",
    " infinity ",
    "1e999",
    "-1e309",
    "1e308",
    "0x10",
    "1_000",
    "1.5",
    " 7 ",
    "9" * MAX_DIGITS,
    "9" * (MAX_DIGITS + 1),
    "true",
    "false",
    "1",
    "0",
    "",
]
numeric_texts = st.sampled_from(NUMERIC_TEXTS)
BOUND = 10**MAX_DIGITS
huge_ints = st.sampled_from([BOUND - 1, BOUND, -(BOUND - 1), -BOUND, 10**400, 2**63, -(2**63) - 1])
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**120), max_value=10**120)
    | huge_ints
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 5e-324])
    | texts
    | numeric_texts
)
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=16,
)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# Nesting around the 64-level cap (the arguments object is level 1).
deep = st.integers(min_value=60, max_value=66).map(_nested)
hostile = json_values | deep

# Values each parameter accepts, so that many calls get past the gate.
ints_ok = st.integers(min_value=-(BOUND - 1), max_value=BOUND - 1)
floats_ok = st.floats(allow_nan=False, allow_infinity=False)
valid: dict[str, st.SearchStrategy[Any]] = {
    "n": ints_ok | st.integers(-5, 5).map(str),
    "x": floats_ok | st.integers(-5, 5) | st.sampled_from(["1.5", "1e308", " 7 "]),
    "flag": st.booleans(),
    "ints": st.lists(ints_ok, max_size=4),
    "point": st.fixed_dictionaries(
        {"x": floats_ok}, optional={"visible": st.booleans(), "tags": st.lists(ints_ok)}
    ),
    "table": st.dictionaries(st.text(max_size=4), ints_ok, max_size=3),
    "maybe": st.none() | ints_ok,
    "either": ints_ok | st.text(max_size=5),
    "some": floats_ok | st.lists(ints_ok, max_size=3),
    "anything": st.recursive(
        st.none() | st.booleans() | ints_ok | floats_ok | st.text(max_size=8),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children),
        max_leaves=8,
    ),
    "text": st.text(max_size=12),
}
NAMES = [*valid, "unknown"]


@st.composite
def arguments(draw: st.DrawFn) -> Any:
    """Arguments near the valid ones with some hostile values, or anything at all."""
    choice = draw(st.sampled_from(["mutated"] * 4 + ["random", "random", "not an object"]))
    if choice == "not an object":
        return draw(json_values)
    if choice == "random":
        return draw(st.dictionaries(st.sampled_from(NAMES) | texts, hostile, max_size=6))
    args = draw(st.fixed_dictionaries({}, optional=valid))
    for name in draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True)):
        args[name] = draw(hostile | _wrong_shape(name))
    return args


def _wrong_shape(name: str) -> st.SearchStrategy[Any]:
    """A valid container for ``name`` with one hostile item inside: bool/number at depth."""
    if name in ("ints", "anything", "some"):
        return st.lists(leaves, min_size=1, max_size=3)
    if name == "point":
        return st.fixed_dictionaries({"x": leaves}, optional={"visible": leaves, "tags": leaves})
    if name == "table":
        return st.dictionaries(texts, leaves, min_size=1, max_size=2)
    return leaves


# -- the properties --------------------------------------------------------------------------


def _forbidden(value: Any, where: str = "") -> str | None:
    """Why ``value`` must never reach a tool (non-finite, lone surrogate, too long), or None."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, BaseModel):
            item = item.model_dump()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{at}: non-finite {item!r}"
        if isinstance(item, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in item):
            return f"{at}: lone surrogate in {item!r}"
        if type(item) is int and not -BOUND < item < BOUND:
            return f"{at}: integer of more than {MAX_DIGITS} digits"
        if isinstance(item, dict):
            for key, sub in item.items():
                stack.append((key, f"{at}.[key]"))
                stack.append((sub, f"{at}.{key}"))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((sub, f"{at}.{i}") for i, sub in enumerate(item))
    return None


def _wrong_kind(value: Any, kind: Any, exact: bool, at: str) -> str | None:
    """Why ``value`` breaks the promised ``kind`` (a bool for a number, ...), or None."""
    if value is None:
        return None
    if isinstance(kind, tuple):
        if isinstance(value, bool) and "bool" not in kind:
            return f"{at}: boolean {value!r} where {' or '.join(map(str, kind))} is promised"
        lists = [k for k in kind if isinstance(k, list)]
        if isinstance(value, list | tuple) and lists:
            return _wrong_kind(value, lists[0], exact, at)
        return None
    if isinstance(kind, list):
        if not isinstance(value, list | tuple):
            return f"{at}: {value!r} is not a list" if exact else None
        for i, item in enumerate(value):
            if problem := _wrong_kind(item, kind[0], exact, f"{at}.{i}"):
                return problem
        return None
    if isinstance(kind, dict):
        if isinstance(value, BaseModel):
            value = value.model_dump()
        if not isinstance(value, dict):
            return f"{at}: {value!r} is not an object" if exact else None
        for key, item in value.items():
            sub = kind.get("*", kind.get(key))
            if sub is not None and (problem := _wrong_kind(item, sub, exact, f"{at}.{key}")):
                return problem
        return None
    if kind in ("int", "float") and isinstance(value, bool):
        return f"{at}: boolean {value!r} where a number is promised"
    if kind == "bool" and not isinstance(value, bool) and (exact or type(value) in (int, float)):
        return f"{at}: {value!r} where a boolean is promised"
    if exact and kind == "int" and type(value) is not int:
        return f"{at}: {type(value).__name__} where an int is promised"
    if exact and kind == "float" and type(value) is not float:
        return f"{at}: {type(value).__name__} where a float is promised"
    return None


def _check_result(result: Any, name: str) -> None:
    assert isinstance(result, ToolResult), result
    assert isinstance(result.content, str)
    result.content.encode("utf-8")  # valid Unicode: no lone surrogate in what a model reads
    if result.is_error:
        assert result.error is not None
        assert result.error.kind == "invalid_arguments", result.content
        return
    assert received, "a successful call that never reached the tool"
    got = received[-1]
    assert (problem := _forbidden(got)) is None, problem
    for key, kind in KINDS.items():
        problem = _wrong_kind(got.get(key), kind, name == "typed", key)
        assert problem is None, problem


def _outcome(result: ToolResult) -> tuple[bool, str | None]:
    return result.is_error, result.error.kind if result.error is not None else None


def _as_text(args: Any, ascii_only: bool) -> str | None:
    try:
        return json.dumps(args, ensure_ascii=ascii_only)
    except ValueError:  # an integer too long for str(): no JSON text to send
        return None


@FUZZ
@given(args=arguments(), name=st.sampled_from(sorted(TOOLS)))
def test_fuzzed_dicts_give_a_result_and_reach_the_tool_only_when_clean(
    args: Any, name: str
) -> None:
    """invoke() and Toolset.call() with any dict: a result; on success, clean values only."""
    for call in (
        lambda: TOOLS[name].invoke(args),
        lambda: TOOLSET.call(name, args),
    ):
        received.clear()
        _check_result(asyncio.run(call()), name)


@FUZZ
@given(args=arguments(), name=st.sampled_from(sorted(TOOLS)), ascii_only=st.booleans())
def test_fuzzed_text_gets_the_outcome_of_the_dict(args: Any, name: str, ascii_only: bool) -> None:
    """``json.dumps(args)`` through invoke() succeeds or fails as the dict itself does."""
    text = _as_text(args, ascii_only)
    if text is None or args is None:  # None from Python means "no arguments"; null is not
        return
    received.clear()
    from_dict = asyncio.run(TOOLS[name].invoke(args))
    received.clear()
    from_text = asyncio.run(TOOLS[name].invoke(text))
    _check_result(from_text, name)
    assert _outcome(from_text) == _outcome(from_dict), (from_dict.content, from_text.content)
    if not from_dict.is_error:
        assert from_text.content == from_dict.content
    # The same text as UTF-8 bytes (a lone surrogate cannot be encoded: those are refused).
    data = text.encode("utf-8", "surrogatepass")
    received.clear()
    from_bytes = asyncio.run(TOOLS[name].invoke(data))
    _check_result(from_bytes, name)
    assert _outcome(from_bytes) == _outcome(from_dict), (from_dict.content, from_bytes.content)


def test_the_fuzzed_tools_accept_clean_arguments() -> None:
    """The strategies' valid values are valid: the fuzzers test success paths too."""
    args = {
        "n": "3",
        "x": 2,
        "flag": True,
        "ints": [1, 10**99],
        "point": {"x": 1.5, "visible": False, "tags": [1]},
        "table": {"a": 1},
        "maybe": None,
        "either": "nan",
        "some": [1, 2],
        "anything": {"k": [1.5, "nan", None, True, "\u00e9"]},
        "text": "h\u00e9llo",
    }
    for name, t in TOOLS.items():
        received.clear()
        result = asyncio.run(t.invoke(args))
        assert not result.is_error, result.content
        _check_result(result, name)


# -- what the fuzzers found ------------------------------------------------------------------


@tool
def unions(u: int | str = 0, g: list[int] | int = 0, f: float | list[int] = 0.0) -> str:
    """Take parameters whose types are unions of different kinds."""
    received.append({"u": u, "g": g, "f": f})
    return "ran"


@pytest.mark.parametrize(
    "arguments",
    [{"u": True}, {"g": True}, {"g": [True]}, {"f": True}, {"f": "nan"}, {"f": [1, True]}],
    ids=repr,
)
def test_unions_of_different_kinds_refuse_booleans_and_non_finite_numbers(
    arguments: dict[str, Any],
) -> None:
    """``int | str`` given ``true``, ``float | list[int]`` given ``"nan"``: refused too.

    Found by the fuzzer: such unions once had no check, and pydantic's lax mode turned
    ``true`` into 1 and ``"nan"`` into a NaN float.
    """
    received.clear()
    result = asyncio.run(unions.invoke(arguments))
    assert result.error is not None, received
    assert result.error.kind == "invalid_arguments"
    assert received == []


def test_unions_of_different_kinds_still_take_each_kind() -> None:
    """The check refuses only what no branch takes: text, numbers and lists still pass."""
    for arguments, expected in (
        ({"u": "nan", "g": [1, 2], "f": [3]}, {"u": "nan", "g": [1, 2], "f": [3]}),
        ({"u": 4, "g": 5, "f": 1.5}, {"u": 4, "g": 5, "f": 1.5}),
    ):
        received.clear()
        result = asyncio.run(unions.invoke(arguments))
        assert result.value == "ran", result.content
        assert received == [expected]
