"""One extra-field rule all the way down: the tool's ``extra_args`` governs nested objects too.

With ``extra_args="reject"`` (the default) an unknown field inside a nested model, dataclass
or TypedDict is refused with its path, as an unknown top-level argument is; with ``"ignore"``
it is dropped. A model that sets ``model_config = ConfigDict(extra=...)`` keeps its own rule.
The exported schemas say the same: ``additionalProperties: false`` on nested objects exactly
when they are refused, in plain and strict exports.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from toolpacks import Tool, ToolResult, Toolset, tool


class Inner(BaseModel):
    """A leaf."""

    x: int


class Outer(BaseModel):
    """A branch holding leaves."""

    inner: Inner
    items: list[Inner] = []


class Open(BaseModel):
    """A model that takes any extra field: its own rule."""

    model_config = ConfigDict(extra="allow")
    y: int


class Closed(BaseModel):
    """A model that refuses extra fields: its own rule."""

    model_config = ConfigDict(extra="forbid")
    z: int


@dataclasses.dataclass
class Box:
    """A dataclass."""

    w: int


class Point(TypedDict):
    """A TypedDict."""

    px: int


def _seen(o: Outer) -> dict[str, Any]:
    return o.model_dump()


@tool
def strict_tool(o: Outer, own: Open | None = None) -> dict[str, Any]:
    """Take nested models; extra fields refused."""
    return {"o": _seen(o), "own": own.model_dump() if own else None}


@tool
def branch(o: Outer) -> dict[str, Any]:
    """Take a nested model (a schema strict mode can express)."""
    return _seen(o)


@tool(extra_args="ignore")
def lenient_tool(o: Outer, closed: Closed | None = None) -> dict[str, Any]:
    """Take nested models; extra fields dropped."""
    return {"o": _seen(o), "closed": closed.model_dump() if closed else None}


@tool
def shapes(box: Box, point: Point) -> str:
    """Take a dataclass and a TypedDict."""
    return f"{box.w},{point['px']}"


BAD = {"o": {"inner": {"x": 1, "zz": 2}, "items": [{"x": 2}, {"x": 3, "yy": 4}]}}


def _call(t: Tool, arguments: dict[str, Any]) -> ToolResult:
    return asyncio.run(t.invoke(arguments))


def _paths(result: ToolResult) -> list[str]:
    assert result.is_error, result
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    return [d.argument for d in result.error.details]


# -- validation ----------------------------------------------------------------------------------


def test_reject_refuses_unknown_nested_fields_with_their_path() -> None:
    """Each unknown nested field is named by its full path, list indices included."""
    result = _call(strict_tool, BAD)
    assert sorted(_paths(result)) == ["o.inner.zz", "o.items.1.yy"]
    assert "unexpected field" in result.content
    assert "x" in result.content  # the fields the object does take


def test_ignore_drops_unknown_nested_fields() -> None:
    """``extra_args="ignore"``: the call runs, without the unknown fields."""
    result = _call(lenient_tool, BAD)
    assert not result.is_error, result
    assert result.structured == {
        "o": {"inner": {"x": 1}, "items": [{"x": 2}, {"x": 3}]},
        "closed": None,
    }


def test_a_model_with_its_own_extra_rule_keeps_it() -> None:
    """``extra="allow"`` under reject keeps extras; ``extra="forbid"`` under ignore refuses."""
    ok = _call(strict_tool, {"o": {"inner": {"x": 1}}, "own": {"y": 1, "k": 2}})
    assert not ok.is_error, ok
    assert ok.structured["own"] == {"y": 1, "k": 2}
    refused = _call(lenient_tool, {"o": {"inner": {"x": 1}}, "closed": {"z": 1, "k": 2}})
    assert _paths(refused) == ["closed.k"]


def test_dataclasses_and_typed_dicts_follow_the_tool_too() -> None:
    """Not only models: a nested dataclass and TypedDict refuse unknown fields."""
    result = _call(shapes, {"box": {"w": 1, "q": 1}, "point": {"px": 2, "q": 2}})
    assert sorted(_paths(result)) == ["box.q", "point.q"]


def test_the_models_themselves_are_unchanged() -> None:
    """Closing nested objects for a tool does not change the model's own validation."""
    assert Inner.model_validate({"x": 1, "zz": 2}).model_dump() == {"x": 1}


# -- schemas -------------------------------------------------------------------------------------


def _objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object schema with properties, anywhere in ``schema``."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _objects(value)


def _by_first_property(schema: Any) -> dict[str, Any]:
    return {next(iter(o["properties"])): o.get("additionalProperties") for o in _objects(schema)}


def test_the_input_schema_closes_exactly_the_refused_objects() -> None:
    """reject: ``false`` on nested objects (``true`` where the model allows); ignore: none."""
    assert _by_first_property(strict_tool.input_schema) == {
        "o": False,
        "x": False,
        "inner": False,
        "y": True,
    }
    assert _by_first_property(lenient_tool.input_schema) == {
        "o": None,
        "x": None,
        "inner": None,
        "z": False,
    }
    assert _by_first_property(shapes.input_schema) == {"box": False, "w": False, "px": False}


FORMATS = ["neutral", "openai", "openai-responses", "anthropic", "bedrock", "mcp"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_says_the_same(fmt: str) -> None:
    """Plain exports keep the rule on every nested object."""
    ts = Toolset([strict_tool, lenient_tool])
    definitions = {json.dumps(d, sort_keys=True) for d in ts.definitions(fmt)}
    text = " ".join(definitions)
    strict_defn, lenient_defn = sorted(
        (json.loads(d) for d in definitions), key=lambda d: "lenient_tool" in json.dumps(d)
    )
    assert "strict_tool" in json.dumps(strict_defn)
    assert "lenient_tool" in text
    for obj in _objects(strict_defn):
        first = next(iter(obj["properties"]))
        assert obj.get("additionalProperties") is (first == "y"), (first, obj)
    for obj in _objects(lenient_defn):
        first = next(iter(obj["properties"]))
        assert obj.get("additionalProperties") is (False if first == "z" else None), obj


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "bedrock"])
def test_strict_exports_close_every_nested_object(fmt: str) -> None:
    """Strict exports: every object closed (the strict subset requires it)."""
    ts = Toolset([lenient_tool, shapes])
    for definition in ts.definitions(fmt, strict=True):
        objects = list(_objects(definition))
        assert objects
        assert all(o.get("additionalProperties") is False for o in objects), definition


# -- every road ----------------------------------------------------------------------------------


def test_toolset_call_and_execute_refuse_the_same() -> None:
    """``Toolset.call`` and ``Toolset.execute`` go through the same gate."""
    ts = Toolset([strict_tool, lenient_tool])
    result = asyncio.run(ts.call("strict_tool", BAD))
    assert sorted(_paths(result)) == ["o.inner.zz", "o.items.1.yy"]
    assert not asyncio.run(ts.call("lenient_tool", BAD)).is_error
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "strict_tool", "arguments": json.dumps(BAD)},
    }
    (message,) = asyncio.run(ts.execute({"tool_calls": [call]}, format="openai"))
    assert "o.inner.zz" in json.dumps(message)


def test_served_over_mcp_the_same() -> None:
    """Over MCP (an in-memory session with the real server): refused, and dropped."""
    from mcp.client import Client

    from toolpacks.mcp._server import build_server

    async def run() -> tuple[Any, Any]:
        async with Client(build_server(Toolset([strict_tool, lenient_tool]))) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["strict_tool"].input_schema["$defs"]["Inner"][
                "additionalProperties"
            ] is False
            return (
                await client.call_tool("strict_tool", BAD),
                await client.call_tool("lenient_tool", BAD),
            )

    refused, dropped = asyncio.run(run())
    assert refused.is_error
    assert "o.inner.zz" in refused.content[0].text
    assert not dropped.is_error
    assert dropped.structured_content == {
        "o": {"inner": {"x": 1}, "items": [{"x": 2}, {"x": 3}]},
        "closed": None,
    }


@pytest.mark.parametrize("framework", ["pydantic_ai", "openai_agents", "langchain", "llm"])
def test_every_adapter_refuses_the_same(framework: str) -> None:
    """Each framework adapter hands the arguments to the gate: refused with the path."""
    from tests.integrations import test_one_gate_adapters as roads

    refuse = getattr(roads, f"_{framework}")
    message = refuse(Toolset([branch]), "branch", BAD)
    assert "o.inner.zz: unexpected field" in message
    assert "o.items.1.yy: unexpected field" in message


def test_a_host_that_ignores_extra_arguments_ignores_them_all_the_way_down() -> None:
    """``[settings] extra_args = "ignore"`` drops unknown nested fields of a reject tool too."""
    from toolpacks import CallOptions

    result = asyncio.run(branch.invoke(BAD, options=CallOptions(extra_args="ignore")))
    assert not result.is_error, result
    assert result.structured == {"inner": {"x": 1}, "items": [{"x": 2}, {"x": 3}]}
    assert BAD["o"]["inner"] == {"x": 1, "zz": 2}  # the caller's arguments are not changed
