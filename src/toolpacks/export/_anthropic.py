"""Anthropic Messages API: tool definitions, ``tool_result`` blocks, ``tool_use`` blocks."""

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
from toolpacks.export._formats import StrictMode, ToolCallParseError
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._rich import anthropic_content, parts
from toolpacks.export._strict import ANTHROPIC, apply_strict

__all__ = ["define", "parse", "render"]

_FMT = "anthropic"


def define(tool: ExportableTool, name: str, description: str, strict: StrictMode) -> dict[str, Any]:
    """``{"name", "description", "input_schema"}``, and ``strict`` when strict mode was asked.

    Without strict mode the schema goes out unchanged; with it, the schema is rewritten into
    Anthropic's strict subset (see ``_strict.ANTHROPIC``). There is no output schema.
    """
    place = where(tool, name, _FMT)
    schema, is_strict = apply_strict(input_schema(tool, place), place, strict, ANTHROPIC)
    out: dict[str, Any] = {"name": name}
    if description:
        out["description"] = description
    out["input_schema"] = schema
    if strict is not False:
        out["strict"] = is_strict
    return out


def render(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A ``tool_result`` content block; ``is_error`` is sent only when true, as documented.

    A result holding images gets a list of text and image blocks (``_rich``).
    """
    blocks = parts(result)
    out: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": answer_id(result, call),
        "content": result.content if blocks is None else anthropic_content(blocks),
    }
    if result.is_error:
        out["is_error"] = True
    return out


def parse(payload: Any) -> list[ToolCall]:
    """``tool_use`` blocks of a message (object or dict), its content list, or one block."""
    data = plain(payload)
    if isinstance(data, Mapping):
        if "content" in data:
            data = data["content"]
            if isinstance(data, str):  # a text-only message
                return []
        elif data.get("type") == "tool_use":
            data = [data]
        else:
            raise ToolCallParseError(
                f"{_FMT}: expected a message with 'content', a list of content blocks, or a "
                f"'tool_use' block; got an object with keys {sorted(data)}"
            )
    calls: list[ToolCall] = []
    for index, raw in enumerate(as_list(data, "the content blocks", _FMT)):
        block = as_mapping(raw, f"content block {index}", _FMT)
        if block.get("type") != "tool_use":
            continue
        what = f"tool_use block {index}"
        if "input" not in block:
            raise ToolCallParseError(f"{_FMT}: expected {what} to have an 'input' object")
        calls.append(
            ToolCall(
                id=text_field(block, "id", what, _FMT),
                name=text_field(block, "name", what, _FMT),
                arguments=arguments_of(block["input"], what, _FMT),
            )
        )
    return calls
