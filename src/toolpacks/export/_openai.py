"""OpenAI: Chat Completions (``openai``) and Responses (``openai-responses``).

Definitions are function tools. With ``strict=True`` the parameters are rewritten for
Structured Outputs (see ``_strict``); a tool that cannot be strict without losing meaning is
an ``ExportError``, or with ``strict="best_effort"`` is exported with ``"strict": false`` and
its schema unchanged, with an ``ExportWarning``. Responses definitions always carry
``strict`` (the Responses API makes an omitted ``strict`` strict and normalizes the schema
itself); Chat Completions definitions carry it only when strict mode was asked for.
"""

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
from toolpacks.export._rich import parts, responses_output
from toolpacks.export._strict import OPENAI, apply_strict

__all__ = [
    "define_chat",
    "define_responses",
    "parse_chat",
    "parse_responses",
    "render_chat",
    "render_responses",
]


def _parameters(
    tool: ExportableTool, name: str, fmt: str, strict: StrictMode
) -> tuple[dict[str, Any], bool]:
    place = where(tool, name, fmt)
    return apply_strict(input_schema(tool, place), place, strict, OPENAI)


def define_chat(
    tool: ExportableTool, name: str, description: str, strict: StrictMode
) -> dict[str, Any]:
    """A Chat Completions function tool: ``{"type": "function", "function": {...}}``."""
    parameters, is_strict = _parameters(tool, name, "openai", strict)
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters
    if strict is not False:
        function["strict"] = is_strict
    return {"type": "function", "function": function}


def define_responses(
    tool: ExportableTool, name: str, description: str, strict: StrictMode
) -> dict[str, Any]:
    """A Responses API function tool: ``{"type": "function", "name", ..., "strict"}``."""
    parameters, is_strict = _parameters(tool, name, "openai-responses", strict)
    out: dict[str, Any] = {"type": "function", "name": name}
    if description:
        out["description"] = description
    out["parameters"] = parameters
    out["strict"] = is_strict
    return out


def render_chat(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A Chat Completions tool message (errors are told in the text; the API has no flag)."""
    return {"role": "tool", "tool_call_id": answer_id(result, call), "content": result.content}


def render_responses(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A Responses ``function_call_output`` input item (images as ``input_image`` items)."""
    blocks = parts(result)
    return {
        "type": "function_call_output",
        "call_id": answer_id(result, call),
        "output": result.content if blocks is None else responses_output(blocks),
    }


def parse_chat(payload: Any) -> list[ToolCall]:
    """Tool calls of a chat completion, its message, or the message's ``tool_calls`` list."""
    fmt = "openai"
    data = plain(payload)
    if isinstance(data, Mapping) and "choices" in data:
        choices = as_list(data["choices"], "'choices'", fmt)
        if len(choices) != 1:
            raise ToolCallParseError(
                f"{fmt}: the completion has {len(choices)} choices; pass the message of the "
                "one to run"
            )
        data = as_mapping(as_mapping(choices[0], "a choice", fmt).get("message"), "'message'", fmt)
    if isinstance(data, Mapping) and "function" in data and "tool_calls" not in data:
        data = [data]
    if isinstance(data, Mapping):
        if "tool_calls" not in data and "content" not in data:
            raise ToolCallParseError(
                f"{fmt}: expected a chat completion, an assistant message with 'tool_calls', "
                f"or a list of tool calls; got an object with keys {sorted(data)}"
            )
        data = data.get("tool_calls")
    calls: list[ToolCall] = []
    for index, raw in enumerate(as_list(data, "'tool_calls'", fmt)):
        what = f"tool call {index}"
        item = as_mapping(raw, what, fmt)
        kind = item.get("type", "function")
        if kind != "function":
            raise ToolCallParseError(
                f"{fmt}: {what} has type {kind!r}; only 'function' tool calls can be run"
            )
        function = as_mapping(item.get("function"), f"the 'function' of {what}", fmt)
        calls.append(
            ToolCall(
                id=text_field(item, "id", what, fmt),
                name=text_field(function, "name", what, fmt),
                arguments=arguments_of(function.get("arguments"), what, fmt),
            )
        )
    return calls


def parse_responses(payload: Any) -> list[ToolCall]:
    """``function_call`` items of a Responses response, its ``output`` list, or one item."""
    fmt = "openai-responses"
    data = plain(payload)
    if isinstance(data, Mapping):
        if "output" in data:
            data = data["output"]
        elif data.get("type") == "function_call":
            data = [data]
        else:
            raise ToolCallParseError(
                f"{fmt}: expected a response with 'output', a list of output items, or a "
                f"'function_call' item; got an object with keys {sorted(data)}"
            )
    calls: list[ToolCall] = []
    for index, raw in enumerate(as_list(data, "the output items", fmt)):
        item = as_mapping(raw, f"output item {index}", fmt)
        if item.get("type") != "function_call":
            continue
        what = f"function_call item {index}"
        calls.append(
            ToolCall(
                id=text_field(item, "call_id", what, fmt),
                name=text_field(item, "name", what, fmt),
                arguments=arguments_of(item.get("arguments"), what, fmt),
            )
        )
    return calls
