"""``ToolCall``, the provider-independent tool call, and helpers to read provider payloads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolpacks.export._formats import ToolCallParseError

__all__ = ["ToolCall", "arguments_of", "as_list", "as_mapping", "plain", "text_field"]


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
