"""Nested arguments: toolpacks' per-call time against pydantic-ai's, the issue's rich call.

The rich call (issue 24): an async tool of 8 parameters, two of them lists of models (order
lines and parcels), one a model, one a dict of text, the rest scalars, called with a realistic
value (5 order lines, 2 parcels with nested addresses). Measured per call, interleaved and
shuffled over ``--repeats`` rounds, median and spread:

* toolpacks, ``await tool.invoke(args)`` (the short path) and ``await toolset.call(name, args)``
  (a ``Toolset`` of that tool), each with a dict and with the JSON text;
* pydantic-ai, its toolset path: ``tool.args_validator.validate_python(args)`` (or
  ``validate_json(text)``) then ``await FunctionToolset.call_tool(name, validated, ctx, tool)``;
* the floor: the same ``TypedDict`` validated by pydantic (``validate_python`` /
  ``validate_json``) and the function awaited.

The target is toolpacks <= 1.0x pydantic-ai's per call, ratios taken per round. Every result is
checked once before timing (the same value from every path), so a path that silently refuses
is not measured as fast.

Usage: ``python bench/nested_args.py [--repeats N] [--quick]``; writes
``bench/results/nested_args.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Literal, NotRequired, Required

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    calibrate_async,
    figure,
    interleave_async,
    machine_info,
    table,
    write_json,
)
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

from toolpacks import Toolset, tool


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    zip_code: str = Field(pattern=r"^[0-9]{5}$")
    country: Literal["US", "CA", "MX"] = "US"


class Line(BaseModel):
    """One order line."""

    sku: str
    quantity: int = Field(ge=1)
    unit_price: float
    gift: bool = False


class Parcel(BaseModel):
    """A parcel and where it goes."""

    weight_kg: float
    to: Address
    fragile: bool = False


async def place_order(
    customer: str,
    lines: list[Line],
    parcels: list[Parcel],
    billing: Address,
    coupons: list[str] | None = None,
    priority: int = 0,
    express: bool = False,
    notes: dict[str, str] | None = None,
) -> int:
    """Place an order.

    Args:
        customer: Who orders.
        lines: What is ordered.
        parcels: How it is shipped.
        billing: Where the invoice goes.
        coupons: Discount codes.
        priority: Handling priority.
        express: Ship express.
        notes: Free-form notes.
    """
    return sum(line.quantity for line in lines) + len(parcels)


ADDRESS = {"street": "12 St James's Square", "city": "London", "zip_code": "12345"}
ARGS: dict[str, Any] = {
    "customer": "Ada Lovelace",
    "lines": [
        {"sku": f"SKU-{i:04d}", "quantity": i + 1, "unit_price": 9.99 + i, "gift": i % 2 == 0}
        for i in range(5)
    ],
    "parcels": [
        {"weight_kg": 1.5, "to": ADDRESS, "fragile": True},
        {"weight_kg": 0.4, "to": {**ADDRESS, "city": "Paris", "country": "CA"}},
    ],
    "billing": ADDRESS,
    "coupons": ["WELCOME", "SPRING"],
    "priority": 2,
    "express": True,
    "notes": {"door": "ring twice", "gift_message": "Happy birthday"},
}
TEXT = json.dumps(ARGS)
EXPECTED = 15 + 2

_make: Any = TypedDict
FLOOR = TypeAdapter(
    _make(
        "PlaceOrder",
        {
            "customer": Required[str],
            "lines": Required[list[Line]],
            "parcels": Required[list[Parcel]],
            "billing": Required[Address],
            "coupons": NotRequired[list[str] | None],
            "priority": NotRequired[int],
            "express": NotRequired[bool],
            "notes": NotRequired[dict[str, str] | None],
        },
        total=False,
    )
)


async def build() -> dict[str, Any]:
    """Every case as ``async batch(n)``, after checking each path's value once."""
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    t = tool(place_order)
    toolset = Toolset([t])
    pa_toolset = FunctionToolset([place_order])
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    pa_tool = (await pa_toolset.get_tools(ctx))["place_order"]
    pa_call = pa_toolset.call_tool
    pa_validate = pa_tool.args_validator.validate_python
    pa_validate_json = pa_tool.args_validator.validate_json
    floor_validate = FLOOR.validate_python
    floor_validate_json = FLOOR.validate_json
    invoke = t.invoke
    call = toolset.call

    for value in (ARGS, TEXT):
        for result in (await invoke(value), await call("place_order", value)):
            assert not result.is_error, result.content
            assert result.value == EXPECTED, result.value
    assert await pa_call("place_order", pa_validate(ARGS), ctx, pa_tool) == EXPECTED
    assert await pa_call("place_order", pa_validate_json(TEXT), ctx, pa_tool) == EXPECTED

    def toolpacks_case(fn: Any, value: Any) -> Any:
        async def batch(n: int) -> None:
            for _ in range(n):
                await fn(value)

        return batch

    def toolset_case(value: Any) -> Any:
        async def batch(n: int) -> None:
            for _ in range(n):
                await call("place_order", value)

        return batch

    def pydantic_ai_case(validate: Any, value: Any) -> Any:
        async def batch(n: int) -> None:
            for _ in range(n):
                await pa_call("place_order", validate(value), ctx, pa_tool)

        return batch

    def floor_case(validate: Any, value: Any) -> Any:
        async def batch(n: int) -> None:
            for _ in range(n):
                await place_order(**validate(value))

        return batch

    return {
        "dict": {
            "toolpacks Tool.invoke": toolpacks_case(invoke, ARGS),
            "toolpacks Toolset.call": toolset_case(ARGS),
            "pydantic-ai call_tool": pydantic_ai_case(pa_validate, ARGS),
            "floor (TypeAdapter + call)": floor_case(floor_validate, ARGS),
        },
        "json": {
            "toolpacks Tool.invoke": toolpacks_case(invoke, TEXT),
            "toolpacks Toolset.call": toolset_case(TEXT),
            "pydantic-ai call_tool": pydantic_ai_case(pa_validate_json, TEXT),
            "floor (TypeAdapter + call)": floor_case(floor_validate_json, TEXT),
        },
    }


def _ratio(ratio: dict[str, float]) -> str:
    return f"{ratio['median']:.2f}x ({ratio['min']:.2f}-{ratio['max']:.2f})"


async def main(repeats: int, target_s: float) -> dict[str, Any]:
    cases = await build()
    out: dict[str, Any] = {"machine": machine_info(("toolpacks", "pydantic", "pydantic-ai-slim"))}
    for form, group in cases.items():
        numbers = {name: await calibrate_async(batch, target_s) for name, batch in group.items()}
        samples = await interleave_async(group, repeats=repeats, numbers=numbers, seed=len(form))
        peer = samples["pydantic-ai call_tool"]
        out[form] = {name: figure(s, peer) for name, s in samples.items()}
        rows = [
            [
                name,
                f"{fig['median']:.2f} ({fig['min']:.2f}-{fig['max']:.2f})",
                _ratio(fig["ratio"]),
            ]
            for name, fig in out[form].items()
        ]
        print(f"\n{form} arguments, {repeats} shuffled rounds, per call")
        print(table(["case", "µs median (min-max)", "x pydantic-ai (min-max)"], rows))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="3 rounds of short batches")
    args = parser.parse_args()
    repeats, target = (3, 0.01) if args.quick else (args.repeats, 0.05)
    data = asyncio.run(main(repeats, target))
    data["case"] = {"arguments": ARGS, "rounds": repeats}
    write_json("nested_args.json", data)
