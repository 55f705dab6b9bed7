"""MCP: ``Tool`` objects, ``CallToolResult`` objects, and ``tools/call`` requests."""

from __future__ import annotations

from typing import Any

from toolpacks.export._base import input_schema, where
from toolpacks.export._calls import ToolCall, arguments_of, as_mapping, plain, text_field
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._refs import copy_schema

__all__ = ["define", "parse", "render"]

_FMT = "mcp"


def define(tool: ExportableTool, name: str, description: str, strict: bool) -> dict[str, Any]:
    """An MCP ``Tool``: name, title, description, input and output schemas, annotations.

    Annotations come from the hints and the title; a hint that is ``None`` is left out, so
    clients apply the protocol's default. ``outputSchema`` is included when declared.
    """
    out: dict[str, Any] = {"name": name}
    if tool.title:
        out["title"] = tool.title
    if description:
        out["description"] = description
    out["inputSchema"] = input_schema(tool, where(tool, name, _FMT))
    if tool.output_schema is not None:
        out["outputSchema"] = copy_schema(tool.output_schema)
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


def render(result: ExportableResult) -> dict[str, Any]:
    """A ``CallToolResult``: the text, ``structuredContent`` for a structured success."""
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
