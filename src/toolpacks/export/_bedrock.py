"""Amazon Bedrock Converse API: ``toolSpec`` definitions, ``toolResult`` and ``toolUse`` blocks."""

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
from toolpacks.export._strict import ANTHROPIC, apply_strict

__all__ = ["define", "parse", "render"]

_FMT = "bedrock"


def define(tool: ExportableTool, name: str, description: str, strict: StrictMode) -> dict[str, Any]:
    """``{"toolSpec": {"name", "description", "inputSchema": {"json": ...}}}``.

    ``description`` is left out when empty (Converse requires at least one character).
    With strict mode, ``strict`` is set and the schema is rewritten into the same subset as
    Anthropic's strict tool use (Converse documents the same limits).
    """
    place = where(tool, name, _FMT)
    schema, is_strict = apply_strict(input_schema(tool, place), place, strict, ANTHROPIC)
    spec: dict[str, Any] = {"name": name}
    if description:
        spec["description"] = description
    spec["inputSchema"] = {"json": schema}
    if strict is not False:
        spec["strict"] = is_strict
    return {"toolSpec": spec}


def render(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A ``toolResult`` block: JSON content for a structured success, else text.

    ``status`` is always set; Converse documents it as honoured by Amazon Nova and Anthropic
    Claude models.
    """
    structured = None if result.is_error else result.structured
    content = [{"json": structured}] if structured is not None else [{"text": result.content}]
    return {
        "toolResult": {
            "toolUseId": answer_id(result, call),
            "content": content,
            "status": "error" if result.is_error else "success",
        }
    }


def _blocks(data: Any) -> Any:
    if not isinstance(data, Mapping):
        return data
    if "output" in data:
        output = as_mapping(data["output"], "'output'", _FMT)
        data = as_mapping(output.get("message"), "'output.message'", _FMT)
    elif "message" in data:
        data = as_mapping(data["message"], "'message'", _FMT)
    elif "toolUse" in data:
        return [data]
    if "content" not in data:
        raise ToolCallParseError(
            f"{_FMT}: expected a Converse response ('output.message.content'), a message with "
            f"'content', or a list of content blocks; got an object with keys {sorted(data)}"
        )
    return data["content"]


def parse(payload: Any) -> list[ToolCall]:
    """``toolUse`` blocks of a Converse response, its message, or a content list."""
    calls: list[ToolCall] = []
    for index, raw in enumerate(as_list(_blocks(plain(payload)), "the content blocks", _FMT)):
        block = as_mapping(raw, f"content block {index}", _FMT)
        if "toolUse" not in block:
            continue
        what = f"toolUse block {index}"
        use = as_mapping(block["toolUse"], what, _FMT)
        if "input" not in use:
            raise ToolCallParseError(f"{_FMT}: expected {what} to have an 'input' object")
        calls.append(
            ToolCall(
                id=text_field(use, "toolUseId", what, _FMT),
                name=text_field(use, "name", what, _FMT),
                arguments=arguments_of(use["input"], what, _FMT),
            )
        )
    return calls
