"""``ToolCall``, the provider-independent tool call, and helpers to read provider payloads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolpacks.exceptions import ExportError
from toolpacks.export._formats import ToolCallParseError
from toolpacks.export._protocol import ExportableResult

__all__ = [
    "GENERATED_ID",
    "ToolCall",
    "answer_id",
    "arguments_of",
    "as_list",
    "as_mapping",
    "check_call",
    "plain",
    "text_field",
]

GENERATED_ID = re.compile(r"tscall_[0-9]+(?:\.[0-9]+)*")
"""The ids a ``Toolset`` gives calls that came without one (``tscall_7``, ``tscall_7.0`` in a
batch): no provider sent them, so a format whose ids are optional (Gemini) leaves them out."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asked for, read from a provider payload."""

    id: str
    """The provider's call id, to send back with the result ("" when the provider has none)."""
    name: str
    """The exposed tool name the model called."""
    arguments: dict[str, Any] | str
    """The arguments: a dict, or the JSON text exactly as the model sent it (OpenAI), left
    for the core's safe JSON parser."""


def check_call(call: object) -> ToolCall | None:
    """``call`` when it is a ``ToolCall`` or ``None``; anything else is an ``ExportError``."""
    if call is None or isinstance(call, ToolCall):
        return call
    raise ExportError(
        f"call must be the ToolCall the result answers (from parse_tool_calls), "
        f"got {type(call).__name__}"
    )


def answer_id(result: ExportableResult, call: ToolCall | None) -> str:
    """The call id to send back: the call's when given, else the result's ("" for none)."""
    if call is not None:
        return call.id
    return result.call_id or ""


def plain(value: Any) -> Any:
    """SDK objects (pydantic models with ``model_dump``) as plain dicts; anything else as is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump()
    return value


def as_mapping(value: Any, what: str, fmt: str) -> Mapping[str, Any]:
    """``value`` (or its ``model_dump()``) as a mapping, or a ``ToolCallParseError``."""
    value = plain(value)
    if not isinstance(value, Mapping):
        raise ToolCallParseError(
            f"{fmt}: expected {what} to be an object, got {type(value).__name__}"
        )
    return value


def as_list(value: Any, what: str, fmt: str) -> list[Any]:
    """``value`` as a list (``None`` as an empty one), or a ``ToolCallParseError``."""
    value = plain(value)
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise ToolCallParseError(f"{fmt}: expected {what} to be a list, got {type(value).__name__}")
    return list(value)


def text_field(item: Mapping[str, Any], key: str, what: str, fmt: str) -> str:
    """A required non-empty string field of a payload item."""
    value = item.get(key)
    if not isinstance(value, str) or not value:
        got = "nothing" if value is None else repr(value)
        raise ToolCallParseError(f"{fmt}: expected {what} to have a string {key!r}, got {got}")
    return value


def arguments_of(value: Any, what: str, fmt: str, *, missing: bool = False) -> dict[str, Any] | str:
    """Arguments as a dict (a copy) or JSON text; ``missing=True`` reads ``None`` as ``{}``."""
    value = plain(value)
    if value is None and missing:
        return {}
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    raise ToolCallParseError(
        f"{fmt}: expected the arguments of {what} to be an object or JSON text, "
        f"got {type(value).__name__}"
    )
