"""The gate compiled into a validator: nested arguments checked in pydantic-core, not in Python.

A tool whose parameters are all plain JSON types (text, numbers, booleans, literals, lists,
dicts of text keys, models, typed dicts) gets, on its first call, a second validator of the
same arguments that also holds every gate check (``_gate_compiled``): booleans refused for
numbers, numbers and text refused for booleans, non-finite and over-long numbers, text that is
not valid Unicode, unknown nested fields, and static bounds on size and depth. A call it takes
walks no value in Python; a call it refuses goes to the general path, which words the error as
before. These tests pin both halves: nothing is walked for a valid call, and everything the
old gate refused is still refused, with the same message, on every road.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from toolpacks import Tool, ToolResult, Toolset, tool
from toolpacks.core import _jsonargs
from toolpacks.core.call import _invoke
from toolpacks.core.call._plan import plan_of
from toolpacks.core.define import _nested_extra

received: list[dict[str, Any]] = []


class Address(BaseModel):
    street: str
    city: str
    zip_code: str = Field(pattern=r"^[0-9]{5}$")
    country: Literal["US", "CA"] = "US"


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1)
    unit_price: float
    gift: bool = False
    level: Literal[1, 2, 3] = 1


class Parcel(BaseModel):
    weight_kg: float
    to: Address


@tool
async def order(
    customer: str,
    lines: list[Line],
    parcels: list[Parcel],
    billing: Address,
    coupons: list[str] | None = None,
    priority: int = 0,
    express: bool = False,
    notes: dict[str, str] | None = None,
) -> int:
    """Place an order."""
    received.append({"lines": lines, "parcels": parcels, "billing": billing, "notes": notes})
    return len(lines)


ADDRESS = {"street": "1 Main St", "city": "Springfield", "zip_code": "12345"}


def _args() -> dict[str, Any]:
    return {
        "customer": "Ada",
        "lines": [
            {"sku": "A", "quantity": 1, "unit_price": 2.5, "gift": True},
            {"sku": "B", "quantity": 2, "unit_price": 3},
        ],
        "parcels": [{"weight_kg": 1.5, "to": dict(ADDRESS)}],
        "billing": dict(ADDRESS),
        "notes": {"door": "ring"},
        "express": False,
    }


def _general(t: Tool, arguments: Any) -> ToolResult:
    return asyncio.run(_invoke.invoke(t, arguments, None, None))


def _short(t: Tool, arguments: Any) -> ToolResult:
    return asyncio.run(t.invoke(arguments))


def _toolset(t: Tool, arguments: Any) -> ToolResult:
    return asyncio.run(Toolset([t]).call(t.name, arguments))


ROADS = {"short": _short, "general": _general, "toolset": _toolset}


@pytest.fixture(autouse=True)
def _clear() -> None:
    received.clear()


@pytest.fixture
def no_walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every Python walk over argument values a call makes."""
    walked: list[str] = []

    def spy(module: Any, name: str) -> None:
        real = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            walked.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    spy(_jsonargs, "_scan")
    spy(_jsonargs, "count_keys")
    spy(_nested_extra, "unknown_fields")
    plan = plan_of(order)
    if plan.kinds is not None:
        real_kinds = plan.kinds

        def kinds(value: Any) -> None:
            walked.append("kinds")
            real_kinds(value)

        monkeypatch.setattr(plan, "kinds", kinds)
    return walked


# -- a valid call walks nothing ---------------------------------------------------------------


@pytest.mark.parametrize("road", sorted(ROADS))
@pytest.mark.parametrize("form", ["dict", "json"])
def test_a_valid_nested_call_walks_no_value_in_python(
    no_walks: list[str], road: str, form: str
) -> None:
    arguments: Any = _args() if form == "dict" else json.dumps(_args())
    result = ROADS[road](order, arguments)
    assert not result.is_error, result.content
    assert result.value == 2
    assert no_walks == [], f"walked in Python: {no_walks}"


def test_the_compiled_gate_gives_the_same_arguments_as_the_tool_validator() -> None:
    plan = plan_of(order)
    assert plan.gate is not None
    assert plan.gate(_args()) == plan.validate(_args())
    asyncio.run(order.invoke(_args()))
    (seen,) = received
    assert type(seen["lines"][0]) is Line
    assert type(seen["parcels"][0].to) is Address
    assert seen["lines"][1].unit_price == 3.0
    assert type(seen["lines"][1].unit_price) is float


def test_compiling_leaves_the_model_classes_as_they_were() -> None:
    before = {cls: cls.__pydantic_validator__ for cls in (Address, Line, Parcel)}
    plan_of(order)
    for cls, validator in before.items():
        assert cls.__dict__["__pydantic_complete__"] is True
        assert cls.__pydantic_validator__ is validator
    # a model's own rule for unknown fields is untouched (it ignores them, as it says)
    assert Address.model_validate({**ADDRESS, "extra": 1}).city == "Springfield"


# -- everything the gate refused is still refused, with the same words -------------------------


def _with(path: tuple[Any, ...], value: Any, delete: bool = False) -> dict[str, Any]:
    arguments = _args()
    node: Any = arguments
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return arguments


BAD = {
    "bool for an int in a list of models": (("lines", 0, "quantity"), True),
    "bool for a float two models down": (("parcels", 0, "weight_kg"), False),
    "bool for an int literal": (("lines", 0, "level"), True),
    "number for a bool": (("lines", 1, "gift"), 1),
    "text for a bool": (("express",), "true"),
    "nan": (("lines", 0, "unit_price"), float("nan")),
    "infinity": (("parcels", 0, "weight_kg"), float("inf")),
    "integer of 101 digits": (("priority",), 10**100),
    "integer of 101 digits for a float": (("lines", 0, "unit_price"), -(10**100)),
    "text that is not a finite number": (("lines", 0, "unit_price"), "1e999"),
    "over-long numeric text": (("lines", 0, "unit_price"), "1" * 101),
    "lone surrogate in nested text": (("parcels", 0, "to", "city"), "a\ud800b"),
    "lone surrogate in a dict key": (("notes", "\udc00"), "x"),
    "unknown field of a nested model": (("parcels", 0, "to", "planet"), "Mars"),
    "unknown field in a list of models": (("lines", 1, "colour"), "red"),
    "too large": (("notes", "big"), "é" * 600_000),
}


@pytest.mark.parametrize("road", sorted(ROADS))
@pytest.mark.parametrize("case", sorted(BAD))
def test_every_check_still_refuses_on_every_road(road: str, case: str) -> None:
    path, value = BAD[case]
    arguments = _with(path, value)
    result = ROADS[road](order, arguments)
    assert result.is_error, case
    assert result.error is not None
    assert result.error.kind == "invalid_arguments", result.content
    assert not received, "the tool ran"
    # the same words as the general path, which does not use the compiled gate for errors
    assert result.content == _general(order, arguments).content


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_compiled_gate_itself_refuses(case: str) -> None:
    path, value = BAD[case]
    gate = plan_of(order).gate
    assert gate is not None
    with pytest.raises(ValueError):
        gate(_with(path, value))


def test_a_long_list_the_static_bound_does_not_cover_still_passes() -> None:
    many = [{"sku": str(i), "quantity": 1, "unit_price": 1.0} for i in range(2_000)]
    result = _short(order, _with(("lines",), many))
    assert not result.is_error, result.content
    assert result.value == 2_000


def test_lax_values_the_gate_does_not_take_still_reach_the_tool() -> None:
    # "3" for an int and 2.0 for an int are lax pydantic's; the compiled gate sends them on
    arguments = _with(("priority",), "3")
    arguments["lines"][0]["quantity"] = 2.0
    result = _short(order, arguments)
    assert not result.is_error, result.content
    assert received[0]["lines"][0].quantity == 2


@pytest.mark.parametrize("road", sorted(ROADS))
def test_a_duplicate_key_in_nested_json_text_is_refused(road: str) -> None:
    text = json.dumps(_args()).replace('"gift": true', '"gift": true, "gift": false')
    assert text.count('"gift"') == 2
    result = ROADS[road](order, text)
    assert result.is_error, result.content
    assert "duplicate key 'gift'" in result.content, result.content
    assert not received


# -- what is not compiled keeps the walk --------------------------------------------------------


class Loose(BaseModel):
    anything: Any

    @field_validator("anything", mode="before")
    @classmethod
    def keep(cls, value: Any) -> Any:
        return value


@tool
def loose(data: dict[str, Any], item: Loose) -> str:
    """Take anything."""
    return "ok"


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


@tool
def cyclic(tree: Tree) -> str:
    """Take a tree."""
    return "ok"


def test_values_the_schema_cannot_bound_are_still_walked() -> None:
    t = loose
    assert plan_of(t).gate is None
    result = _short(t, {"data": {"x": float("nan")}, "item": {"anything": 1}})
    assert result.is_error, result.content
    assert "not a finite number" in result.content, result.content
    result = _short(t, {"data": {}, "item": {"anything": [True, "a\ud800"]}})
    assert result.is_error, result.content
    assert "not valid Unicode" in result.content, result.content


def test_a_recursive_model_keeps_the_walk() -> None:
    assert plan_of(cyclic).gate is None
    deep: dict[str, Any] = {"label": "leaf"}
    for _ in range(70):
        deep = {"label": "node", "children": [deep]}
    result = _short(cyclic, {"tree": deep})
    assert result.is_error, result.content
    assert "nested more than 64 levels" in result.content, result.content
    result = _short(cyclic, {"tree": {"label": "a", "children": [{"label": 1.5, "x": 1}]}})
    assert result.is_error, result.content
