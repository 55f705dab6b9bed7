"""``neutral``: toolpacks' own provider-independent shape (used by the CLI and for tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolpacks.export._base import input_schema, where
from toolpacks.export._calls import (
    ToolCall,
    answer_id,
    arguments_of,
    as_list,
    as_mapping,
    plain,
    text_field,
)
from toolpacks.export._formats import StrictMode
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._refs import copy_schema

__all__ = ["define", "parse", "render"]

_FMT = "neutral"


def define(tool: ExportableTool, name: str, description: str, strict: StrictMode) -> dict[str, Any]:
    """``name``, ``title``, ``description``, ``input_schema``, ``output_schema``, ``hints``.

    Every key is always present (``None`` where there is nothing); schemas are copies.
    """
    hints = tool.hints
    output = tool.output_schema
    return {
        "name": name,
        "title": tool.title,
        "description": description,
        "input_schema": input_schema(tool, where(tool, name, _FMT)),
        "output_schema": None if output is None else copy_schema(output),
        "hints": {
            "read_only": hints.read_only,
            "destructive": hints.destructive,
            "idempotent": hints.idempotent,
            "open_world": hints.open_world,
        },
    }


def render(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """``call_id``, ``name``, ``is_error``, ``content`` and ``structured``."""
    return {
        "call_id": answer_id(result, call),
        "name": result.tool_name,
        "is_error": result.is_error,
        "content": result.content,
        "structured": None if result.is_error else result.structured,
    }


def parse(payload: Any) -> list[ToolCall]:
    """Calls given as ``ToolCall``s or mappings with ``name``, ``arguments`` and ``id``."""
    data = plain(payload)
    items = [data] if isinstance(data, Mapping | ToolCall) else as_list(data, "the calls", _FMT)
    calls: list[ToolCall] = []
    for index, raw in enumerate(items):
        if isinstance(raw, ToolCall):
            calls.append(raw)
            continue
        what = f"call {index}"
        item = as_mapping(raw, what, _FMT)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else "",
                name=text_field(item, "name", what, _FMT),
                arguments=arguments_of(item.get("arguments"), what, _FMT, missing=True),
            )
        )
    return calls
