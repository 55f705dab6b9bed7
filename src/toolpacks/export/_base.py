"""What every format module shares: the description, the input schema check, warnings."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from toolpacks.exceptions import ExportError
from toolpacks.export._formats import ExportWarning
from toolpacks.export._protocol import ExportableTool
from toolpacks.export._refs import copy_schema, resolve_ref

__all__ = ["full_description", "input_schema", "warn", "where"]


def where(tool: ExportableTool, name: str, format: str) -> str:
    """``tool 'x' (exposed as 'y') for format``, for messages."""
    exposed = "" if name == tool.name else f" (exposed as {name!r})"
    return f"tool {tool.name!r}{exposed} for {format}"


def full_description(tool: ExportableTool, include_instructions: bool) -> str:
    """The description, followed by the instructions after a blank line when asked."""
    text = (tool.description or "").strip()
    extra = (tool.instructions or "").strip() if include_instructions else ""
    if extra:
        return f"{text}\n\n{extra}" if text else extra
    return text


def input_schema(tool: ExportableTool, place: str) -> dict[str, Any]:
    """A deep copy of the tool's input schema, whose root must be an object.

    A root that is only a ``$ref`` (pydantic's schema of a recursive model) is replaced by
    the schema it points to, keeping ``$defs``: providers want an object at the root.
    """
    schema = tool.input_schema
    if isinstance(schema, dict) and "$ref" in schema and "type" not in schema:
        target = resolve_ref(schema, schema["$ref"], place)
        schema = {**{k: v for k, v in schema.items() if k != "$ref"}, **target}
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ExportError(
            f"{place}: the input schema must be a JSON Schema of type 'object', got {schema!r:.80}"
        )
    return copy_schema(schema)


def warn(message: str) -> None:
    """Emit an ``ExportWarning`` attributed to the first caller outside this package."""
    level = 2
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(__package__):
        frame = frame.f_back
        level += 1
    warnings.warn(message, ExportWarning, stacklevel=level)
