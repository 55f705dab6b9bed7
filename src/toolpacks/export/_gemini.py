"""Gemini API: function declarations, ``functionResponse`` parts, ``functionCall`` parts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolpacks.export._base import input_schema, warn, where
from toolpacks.export._calls import (
    GENERATED_ID,
    ToolCall,
    arguments_of,
    as_list,
    as_mapping,
    plain,
    text_field,
)
from toolpacks.export._formats import StrictMode, ToolCallParseError
from toolpacks.export._gemini_schema import to_gemini
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._rich import gemini_parts, parts

__all__ = ["define", "parse", "render"]

_FMT = "gemini"


def define(tool: ExportableTool, name: str, description: str, strict: StrictMode) -> dict[str, Any]:
    """A ``FunctionDeclaration``: ``{"name", "description", "parameters"}``.

    ``parameters`` is Gemini's schema subset (see ``_gemini_schema``); it is left out for a
    tool without parameters, as Gemini documents. One ``ExportWarning`` per tool lists what
    had to be removed or cut.
    """
    place = where(tool, name, _FMT)
    rewrite = to_gemini(input_schema(tool, place), place)
    problems: list[str] = []
    if rewrite.removed:
        problems.append(f"removed unsupported keywords: {', '.join(rewrite.removed)}")
    if rewrite.cut:
        problems.append(f"cut recursive references after one level: {', '.join(rewrite.cut)}")
    if problems:
        warn(f"{place}: Gemini's schema subset forced changes; {'; '.join(problems)}")
    out: dict[str, Any] = {"name": name}
    if description:
        out["description"] = description
    if rewrite.result.get("properties"):
        out["parameters"] = rewrite.result
    return out


def render(result: ExportableResult, call: ToolCall | None) -> dict[str, Any]:
    """A ``functionResponse`` part: ``{"output": ...}`` on success, ``{"error": text}`` on error.

    The output is the structured value when there is one, else the text. ``id`` is sent only
    when Gemini gave the function call one: with ``call``, when the call has an id (and its
    name is the one answered); without it, when the result's call id is not one a toolset made
    up for a call that came without an id (see ``GENERATED_ID``).
    """
    blocks = parts(result)
    inline: list[dict[str, Any]] = []
    if result.is_error:
        response: dict[str, Any] = {"error": result.content}
    elif blocks is not None:  # images and audio go as inline data parts
        text, inline = gemini_parts(blocks)
        response = {"output": text}
    else:
        structured = result.structured
        response = {"output": structured if structured is not None else result.content}
    if call is not None:
        name, call_id = call.name, call.id
    else:
        name, call_id = result.tool_name, result.call_id or ""
        if GENERATED_ID.fullmatch(call_id):
            call_id = ""
    out: dict[str, Any] = {"name": name}
    if call_id:
        out["id"] = call_id
    out["response"] = response
    if inline:
        out["parts"] = inline
    return {"functionResponse": out}


def _parts(data: Any) -> Any:
    if not isinstance(data, Mapping):
        return data
    if "candidates" in data:
        candidates = as_list(data["candidates"], "'candidates'", _FMT)
        if len(candidates) != 1:
            raise ToolCallParseError(
                f"{_FMT}: the response has {len(candidates)} candidates; pass the content of "
                "the one to run"
            )
        data = as_mapping(
            as_mapping(candidates[0], "a candidate", _FMT).get("content"),
            "the candidate's 'content'",
            _FMT,
        )
    elif "content" in data:
        data = as_mapping(data["content"], "'content'", _FMT)
    elif "functionCall" in data or "function_call" in data:
        return [data]
    if "parts" not in data:
        raise ToolCallParseError(
            f"{_FMT}: expected a response with 'candidates', a content with 'parts', or a "
            f"list of parts; got an object with keys {sorted(data)}"
        )
    return data["parts"]


def parse(payload: Any) -> list[ToolCall]:
    """``functionCall`` parts of a response, its content, or a parts list (SDK objects too)."""
    calls: list[ToolCall] = []
    for index, raw in enumerate(as_list(_parts(plain(payload)), "the parts", _FMT)):
        part = as_mapping(raw, f"part {index}", _FMT)
        call = part.get("functionCall", part.get("function_call"))
        if call is None:
            continue
        what = f"functionCall part {index}"
        call = as_mapping(call, what, _FMT)
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else "",
                name=text_field(call, "name", what, _FMT),
                arguments=arguments_of(call.get("args"), what, _FMT, missing=True),
            )
        )
    return calls
