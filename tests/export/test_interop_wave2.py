"""Interop fixes found with the real SDKs: Gemini call ids and dict values, MCP output schemas.

- a Gemini ``functionResponse`` carries an id only when the model sent one;
- Gemini keeps a dict parameter's value type (``additionalProperties``);
- ``definitions("mcp")`` is exactly what ``toolpacks serve`` lists.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import Host, ToolContext, Toolset, tool
from toolpacks.exceptions import ExportError
from toolpacks.export import ExportWarning, ToolCall, definition, parse_tool_calls, render_result
from toolpacks.export._calls import GENERATED_ID
from toolpacks.export._mcp import output_schema, wraps_output

from ._fakes import FakeTool


@tool
def weather(city: str) -> dict[str, Any]:
    """Weather for a city."""
    return {"city": city, "t": 21}


def gemini_parts(*calls: dict[str, Any]) -> dict[str, Any]:
    """A Gemini response whose one candidate asks for ``calls``."""
    parts = [{"functionCall": call} for call in calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def genai_part(rendered: dict[str, Any]) -> Any:
    from google.genai import types as genai
    return genai.Part.model_validate(rendered)


# -- Gemini: no invented ids -----------------------------------------------------------------


def test_gemini_execute_sends_back_only_ids_the_model_sent() -> None:
    """``execute``: a call without an id is answered without one; one with an id keeps it."""
    payload = gemini_parts(
        {"name": "weather", "args": {"city": "Oslo"}},
        {"id": "fc_7", "name": "weather", "args": {"city": "Rome"}},
    )
    plain, with_id = asyncio.run(Toolset([weather]).execute(payload, "gemini"))
    assert plain == {
        "functionResponse": {
            "name": "weather",
            "response": {"output": {"city": "Oslo", "t": 21}},
        }
    }
    assert with_id["functionResponse"]["id"] == "fc_7"
    assert genai_part(plain).function_response.id is None
    assert genai_part(with_id).function_response.id == "fc_7"


def test_gemini_manual_loop_with_and_without_the_call() -> None:
    """Parse, call, render: with ``call=`` the call decides; without it no made-up id leaks."""
    toolset = Toolset([weather])
    (call,) = parse_tool_calls(
        gemini_parts({"name": "weather", "args": {"city": "Oslo"}}), "gemini"
    )
    assert call.id == ""
    result = asyncio.run(toolset.call(call.name, call.arguments, call_id=call.id or None))
    assert GENERATED_ID.fullmatch(result.call_id)  # the toolset gave the run an id of its own
    for rendered in (
        render_result(result, "gemini", call=call),
        render_result(result, "gemini"),
    ):
        assert "id" not in rendered["functionResponse"]
        genai_part(rendered)


def test_gemini_keeps_an_id_the_caller_chose() -> None:
    """An id that is not toolpacks' own pattern is sent back (the caller got it from Gemini)."""
    result = asyncio.run(Toolset([weather]).call("weather", {"city": "Oslo"}, call_id="abc-1"))
    assert render_result(result, "gemini")["functionResponse"]["id"] == "abc-1"
    other = ToolCall("", "weather", {})
    assert "id" not in render_result(result, "gemini", call=other)["functionResponse"]


def test_generated_id_pattern_matches_the_ids_toolsets_make() -> None:
    """``GENERATED_ID`` recognises the toolset's ids, single and batched, and nothing else."""
    toolset = Toolset([weather])
    single = asyncio.run(toolset.call("weather", {"city": "a"}))
    batch = asyncio.run(toolset.call_many([("weather", {"city": "b"}), ("weather", {"city": "c"})]))
    in_context = asyncio.run(toolset.call("weather", {"city": "d"}, ToolContext(agent_id="x")))
    made_up = [single.call_id, in_context.call_id, *(r.call_id for r in batch)]
    assert all(GENERATED_ID.fullmatch(i) for i in made_up), made_up
    for real in ("fc_7", "call_1", "tscall_", "tscall_x", "my-tscall_1", "toolu_01"):
        assert not GENERATED_ID.fullmatch(real), real


@pytest.mark.parametrize(
    ("fmt", "path"),
    [
        ("openai", ("tool_call_id",)),
        ("openai-responses", ("call_id",)),
        ("anthropic", ("tool_use_id",)),
        ("bedrock", ("toolResult", "toolUseId")),
        ("gemini", ("functionResponse", "id")),
        ("neutral", ("call_id",)),
    ],
)
def test_render_with_the_call_answers_that_call(fmt: str, path: tuple[str, ...]) -> None:
    """Every format sends back the id of the call given, not the one the run got."""
    result = asyncio.run(Toolset([weather]).call("weather", {"city": "a"}, call_id="run_1"))
    rendered: Any = render_result(result, fmt, call=ToolCall("prov_9", "weather", {}))  # type: ignore[arg-type]
    for key in path:
        rendered = rendered[key]
    assert rendered == "prov_9"


def test_render_refuses_a_call_that_is_not_a_tool_call() -> None:
    """``call=`` must be the parsed ``ToolCall``; a dict or an id is an ``ExportError``."""
    result = asyncio.run(Toolset([weather]).call("weather", {"city": "a"}))
    for bad in ({"id": "fc_1", "name": "weather"}, "fc_1"):
        with pytest.raises(ExportError, match="call must be the ToolCall"):
            render_result(result, "gemini", call=bad)  # type: ignore[arg-type]


# -- Gemini: dict values keep their type -----------------------------------------------------


class Limit(BaseModel):
    max: int
    unit: str | None = None


class Query(BaseModel):
    counts: dict[str, int]
    limits: dict[str, Limit] = {}
    extra: dict[str, Any] = {}
    closed: Limit | None = None


def test_gemini_keeps_the_value_type_of_dict_parameters() -> None:
    """``additionalProperties`` survives, rewritten like any schema (refs inlined, nulls)."""
    from google.genai import types as genai
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExportWarning)
        d = definition(FakeTool("q", "Query.", Query.model_json_schema()), "gemini")
    props = d["parameters"]["properties"]
    assert props["counts"]["additionalProperties"] == {"type": "integer"}
    limit = props["limits"]["additionalProperties"]
    assert limit["type"] == "object"
    assert limit["properties"]["unit"] == {
        "title": "Unit",
        "type": "string",
        "nullable": True,
        "default": None,
    }
    assert limit["required"] == ["max"]
    assert props["extra"]["additionalProperties"] is True
    assert "additionalProperties" not in props["closed"]  # false adds nothing: dropped
    declaration = genai.FunctionDeclaration.model_validate(d)
    dumped = declaration.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["parameters"]["properties"]["counts"]["additionalProperties"] == {
        "type": "integer"
    }


def test_gemini_reports_an_additional_properties_value_it_cannot_use() -> None:
    """A value that is neither a boolean nor a schema is removed, with a warning."""
    schema = {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": 3}}}
    with pytest.warns(ExportWarning, match="additionalProperties"):
        d = definition(FakeTool("m", "d", schema), "gemini")
    assert d["parameters"]["properties"]["m"] == {"type": "object"}


# -- MCP: the output schema the server sends -------------------------------------------------


class Item(BaseModel):
    name: str


def test_mcp_output_schema_is_an_object_or_wrapped() -> None:
    """Objects go as they are; anything else is ``{"result": ...}`` with ``$defs`` at the root."""
    import mcp_types

    obj = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert output_schema(obj) == obj
    assert output_schema({"type": "integer"}) == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    items = output_schema({"type": "array", "items": {"$ref": "#/$defs/Item"}, "$defs": {"I": {}}})
    assert items["$defs"] == {"I": {}}
    assert items["properties"]["result"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    assert (wraps_output(None), wraps_output(obj), wraps_output({"type": "string"})) == (
        False,
        False,
        True,
    )
    for schema in (obj, {"type": "integer"}):
        d = definition(FakeTool("t", "d", {"type": "object"}, output_schema=schema), "mcp")
        assert mcp_types.Tool.model_validate(d).output_schema == output_schema(schema)
    assert "outputSchema" not in definition(FakeTool("t", "d", {"type": "object"}), "mcp")


PACK = '''
from dataclasses import dataclass

from pydantic import BaseModel

from toolpacks import hookimpl, tool


class Item(BaseModel):
    name: str


@dataclass
class Point:
    x: int
    y: int


@tool(read_only=True, title="Add")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def point(x: int) -> Point:
    """A point."""
    return Point(x, x)


@tool
def items(n: int) -> list[Item]:
    """Some items."""
    return [Item(name=str(i)) for i in range(n)]


@tool
def nothing() -> None:
    """Return nothing."""


@hookimpl
def register_tools(register):
    for t in (add, point, items, nothing):
        register(t)
'''


def write_pack(directory: Path) -> Path:
    """The pack (importable and discoverable from ``directory``) and a config serving it."""
    (directory / "interop_pack.py").write_text(textwrap.dedent(PACK))
    dist = directory / "toolpacks_interop-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-interop\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\ninterop = interop_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text('[agents.a]\npacks = ["interop"]\n')
    return config


def served_tools(directory: Path, config: Path) -> list[dict[str, Any]]:
    """What ``toolpacks serve --agent a`` answers to ``tools/list``, as raw JSON."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "interop-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(directory),
        "TOOLPACKS_CACHE_DIR": str(directory / "cache"),
        "TOOLPACKS_TRUST_FILE": str(directory / "trusted.json"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "toolpacks", "serve", "--agent", "a", "--config", str(config)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        cwd=directory,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = [a for a in answers if a.get("id") == 2]
    assert listed, (done.stdout, done.stderr[-2000:])
    assert "result" in listed[0], listed[0]
    tools: list[dict[str, Any]] = listed[0]["result"]["tools"]
    return tools


def test_mcp_definitions_are_what_serve_lists(tmp_path: Path) -> None:
    """``definitions("mcp")`` equals the ``tools/list`` answer of a real ``toolpacks serve``."""
    config = write_pack(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        import interop_pack  # type: ignore[import-not-found]

        with Host(config, discover=False) as host:
            host.add_pack(interop_pack, name="interop")
            exported = host.toolset("a").definitions("mcp")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("interop_pack", None)
    served = served_tools(tmp_path, config)
    assert sorted(served, key=lambda t: t["name"]) == sorted(exported, key=lambda t: t["name"])
    by_name = {d["name"]: d for d in exported}
    assert by_name["add"]["outputSchema"]["required"] == ["result"]
    assert by_name["items"]["outputSchema"]["properties"]["result"]["type"] == "array"
    assert "$defs" in by_name["items"]["outputSchema"]
    assert set(by_name["point"]["outputSchema"]["properties"]) == {"x", "y"}
    assert "outputSchema" not in by_name["nothing"]
