"""The public functions: definitions, result rendering and tool-call parsing, per format."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from toolpacks.exceptions import ExportError
from toolpacks.export import _anthropic, _bedrock, _gemini, _mcp, _neutral, _openai
from toolpacks.export._base import full_description
from toolpacks.export._calls import ToolCall, check_call
from toolpacks.export._formats import (
    ExportFormat,
    StrictMode,
    check_format,
    check_name,
    check_strict,
)
from toolpacks.export._protocol import ExportableResult, ExportableTool
from toolpacks.export._strict import NotStrictError

__all__ = ["definition", "definitions", "parse_tool_calls", "render_result"]


@dataclass(frozen=True, slots=True)
class _Format:
    define: Callable[[ExportableTool, str, str, StrictMode], dict[str, Any]]
    render: Callable[[ExportableResult, ToolCall | None], dict[str, Any]]
    parse: Callable[[Any], list[ToolCall]]


_FORMATS: dict[ExportFormat, _Format] = {
    "neutral": _Format(_neutral.define, _neutral.render, _neutral.parse),
    "openai": _Format(_openai.define_chat, _openai.render_chat, _openai.parse_chat),
    "openai-responses": _Format(
        _openai.define_responses, _openai.render_responses, _openai.parse_responses
    ),
    "anthropic": _Format(_anthropic.define, _anthropic.render, _anthropic.parse),
    "gemini": _Format(_gemini.define, _gemini.render, _gemini.parse),
    "bedrock": _Format(_bedrock.define, _bedrock.render, _bedrock.parse),
    "mcp": _Format(_mcp.define, _mcp.render, _mcp.parse),
}


def definition(
    tool: ExportableTool,
    format: ExportFormat,
    *,
    name: str | None = None,
    strict: StrictMode = False,
    include_instructions: bool = True,
) -> dict[str, Any]:
    """One tool's definition in a provider's request format.

    Schemas are deep copies: the tool's own are never modified. Only MCP (and ``neutral``)
    carry the output schema; the other providers have no place for it.

    Args:
        tool: The tool (anything with the ``ExportableTool`` attributes).
        format: ``openai``, ``openai-responses``, ``anthropic``, ``gemini``, ``bedrock``,
            ``mcp`` or ``neutral``.
        name: The name exposed to the model (the toolset decides it); the tool's own name
            by default. It is checked against the format's rule, never rewritten.
        strict: Strict mode, where the provider guarantees arguments that match the schema:
            ``openai``, ``openai-responses``, ``anthropic`` and ``bedrock`` get
            ``strict: true`` and the schema rewritten into the provider's strict subset
            (``gemini``, ``mcp`` and ``neutral`` have no strict mode and ignore it). With
            ``True``, a tool that cannot be strict without losing meaning is an
            ``ExportError`` naming the tool and every reason; with ``"best_effort"`` it is
            exported with ``strict: false``, its schema unchanged, and an ``ExportWarning``
            saying why.
        include_instructions: Append the tool's ``instructions`` to the description,
            after a blank line.

    Returns:
        A JSON-able dict.

    Raises:
        ExportError: Unknown format, a name the format does not accept, an input schema
            that is not an object, a ``$ref`` that cannot be resolved, a ``strict`` value
            other than ``True``, ``False`` and ``"best_effort"``, or ``strict=True`` for a
            tool that cannot be strict.
    """
    fmt = check_format(format)
    mode = check_strict(strict)
    exposed = tool.name if name is None else name
    check_name(exposed, fmt, tool.name)
    description = full_description(tool, include_instructions)
    return _FORMATS[fmt].define(tool, exposed, description, mode)


def definitions(
    pairs: Iterable[tuple[str, ExportableTool]],
    format: ExportFormat,
    *,
    strict: StrictMode = False,
    include_instructions: bool = True,
) -> list[dict[str, Any]]:
    """The definitions of several tools, each under its exposed name, in order.

    Args:
        pairs: ``(exposed name, tool)`` pairs, as a toolset provides them.
        format: The provider format (see ``definition``).
        strict: Strict mode (see ``definition``).
        include_instructions: Append each tool's instructions to its description.

    Raises:
        ExportError: As ``definition``, or when two tools share an exposed name. With
            ``strict=True``, one error names every tool that cannot be strict.
    """
    fmt = check_format(format)
    mode = check_strict(strict)
    out: list[dict[str, Any]] = []
    not_strict: list[str] = []
    seen: dict[str, str] = {}
    for exposed, tool in pairs:
        if exposed in seen:
            raise ExportError(
                f"two tools are exposed as {exposed!r} ({seen[exposed]!r} and {tool.name!r}); "
                "exposed names must be unique in a toolset"
            )
        seen[exposed] = tool.name
        try:
            out.append(
                definition(
                    tool, fmt, name=exposed, strict=mode, include_instructions=include_instructions
                )
            )
        except NotStrictError as exc:
            not_strict.append(str(exc))
    if len(not_strict) == 1:
        raise NotStrictError(not_strict[0])
    if not_strict:
        raise NotStrictError(
            f"{len(not_strict)} tools cannot be exported with strict=True:\n- "
            + "\n- ".join(not_strict)
        )
    return out


def render_result(
    result: ExportableResult, format: ExportFormat, *, call: ToolCall | None = None
) -> dict[str, Any]:
    """A tool result as the provider expects it back in the conversation.

    Pass the ``ToolCall`` the result answers (from ``parse_tool_calls``) as ``call``: the
    answer then carries that call's id (and, for Gemini, its name), whatever id the toolset
    gave the run. Without it, the result's ``call_id`` is used.

    - ``openai``: a ``{"role": "tool", "tool_call_id", "content"}`` message;
    - ``openai-responses``: a ``function_call_output`` input item;
    - ``anthropic``: a ``tool_result`` content block (``is_error`` only when true);
    - ``bedrock``: a ``toolResult`` content block (JSON content for a structured success,
      text otherwise; ``status`` success or error);
    - ``gemini``: a ``functionResponse`` part (``{"output": ...}`` or ``{"error": text}``),
      with an ``id`` only when Gemini sent one: the call's id when ``call`` is given; else
      the result's, unless it is one a toolset made up (``tscall_N``) for a call without;
    - ``mcp``: a ``CallToolResult`` (``structuredContent`` for a structured success);
    - ``neutral``: call id, name, error flag, text and structured value.

    Raises:
        ExportError: Unknown format, or ``call`` is not a ``ToolCall``.
    """
    return _FORMATS[check_format(format)].render(result, check_call(call))


def parse_tool_calls(payload: Any, format: ExportFormat) -> list[ToolCall]:
    """The tool calls in a provider response, in order (an empty list when there are none).

    Accepted payloads (dicts, or SDK objects with ``model_dump()``):

    - ``openai``: a chat completion with one choice, its message, or the ``tool_calls``
      list; arguments stay the JSON text the model sent;
    - ``openai-responses``: a response, its ``output`` list, or a ``function_call`` item
      (other items are skipped); the id is the item's ``call_id``;
    - ``anthropic``: a message, its ``content`` list, or a ``tool_use`` block;
    - ``bedrock``: a Converse response, its ``message``, or a content list (``toolUse``);
    - ``gemini``: a response with one candidate, a content, or a parts list
      (``functionCall``; the id is "" when Gemini gave none, and ``render_result`` with
      ``call=`` then sends no id back);
    - ``mcp``: a ``tools/call`` request or its ``params``;
    - ``neutral``: ``ToolCall`` objects or mappings with ``name``, ``arguments``, ``id``.

    Raises:
        ToolCallParseError: The payload does not have the expected shape (the message says
            what was expected); a subclass of ``ExportError`` and ``ValueError``.
        ExportError: Unknown format.
    """
    return _FORMATS[check_format(format)].parse(payload)
