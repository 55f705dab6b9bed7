"""MCP: ``Tool`` objects, ``CallToolResult`` objects, and ``tools/call`` requests.

The definitions are exactly what ``toolpacks serve`` lists: MCP requires an ``outputSchema``
of type ``object``, so a tool whose declared output is anything else (``-> int``,
``-> list[Item]``) gets ``{"type": "object", "properties": {"result": <schema>},
"required": ["result"]}``, with ``$defs`` kept at the root, and the server sends its value as
``{"result": value}``; a tool without a declared output has no ``outputSchema``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolpacks.core._content import mcp_blocks
from toolpacks.export._base import input_schema, where
from toolpacks.export._calls import ToolCall, arguments_of, as_mapping, plain, text_field
from toolpacks.export._formats import StrictMode
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._refs import copy_schema
from toolpacks.export._rich import parts

__all__ = ["define", "output_schema", "parse", "render", "wraps_output"]

_FMT = "mcp"


def define(tool: ExportableTool, name: str, description: str, strict: StrictMode) -> dict[str, Any]:
    """An MCP ``Tool``: name, title, description, input and output schemas, annotations.

    Annotations come from the hints and the title; a hint that is ``None`` is left out, so
    clients apply the protocol's default. ``outputSchema`` is included when declared
    (wrapped when it is not an object; see ``output_schema``).
    """
    out: dict[str, Any] = {"name": name}
    if tool.title:
        out["title"] = tool.title
    if description:
        out["description"] = description
    out["inputSchema"] = input_schema(tool, where(tool, name, _FMT))
    if tool.output_schema is not None:
        out["outputSchema"] = output_schema(tool.output_schema)
    hints = tool.hints
    annotations = {
        key: value
        for key, value in (
            ("title", tool.title),
            ("readOnlyHint", hints.read_only),
            ("destructiveHint", hints.destructive),
            ("idempotentHint", hints.idempotent),
            ("openWorldHint", hints.open_world),
        )
        if value is not None
    }
    if annotations:
        out["annotations"] = annotations
    return out


def wraps_output(schema: Mapping[str, Any] | None) -> bool:
    """Whether a declared output schema is not an object, so values go out as ``{"result": v}``.

    Args:
        schema: The tool's output schema (``None`` when it declares none).
    """
    return schema is not None and schema.get("type") != "object"


def output_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``outputSchema`` for a declared output schema (a copy; wrapped when not an object).

    Args:
        schema: The tool's output schema.
    """
    inner = copy_schema(schema)
    if not wraps_output(inner):
        return inner
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def render(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A ``CallToolResult``: the text, ``structuredContent`` for a structured success.

    A result holding images, audio or resources gets one content block each.
    """
    blocks = parts(result)
    if blocks is not None:
        return {"content": mcp_blocks(blocks), "isError": False}
    out: dict[str, Any] = {"content": [{"type": "text", "text": result.content}]}
    structured = None if result.is_error else result.structured
    if structured is not None:
        out["structuredContent"] = structured
    out["isError"] = result.is_error
    return out


def parse(payload: Any) -> list[ToolCall]:
    """The call of a ``tools/call`` request (JSON-RPC message or its ``params``)."""
    data = as_mapping(payload, "a tools/call request or its params", _FMT)
    request_id = ""
    if "params" in data:
        request_id = "" if data.get("id") is None else str(data["id"])
        data = as_mapping(plain(data["params"]), "'params'", _FMT)
    what = "the tools/call params"
    arguments = data.get("arguments")
    return [
        ToolCall(
            id=request_id,
            name=text_field(data, "name", what, _FMT),
            arguments=arguments_of(arguments, what, _FMT, missing=True),
        )
    ]
