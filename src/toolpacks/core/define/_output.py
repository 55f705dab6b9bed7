"""A tool's output: its type, its JSON Schema and a validator, built once per type."""

from __future__ import annotations

import copy
import inspect
import sys
from typing import Any, get_args

from pydantic import TypeAdapter

from toolpacks.core.define._hints import reason
from toolpacks.core.define._jsonschema import drop_titles
from toolpacks.exceptions import ToolDefinitionError

__all__ = ["output_of", "output_type_of"]


def output_type_of(return_annotation: Any, *, generator: bool) -> Any:
    """The type of what a tool produces: the return type, or a generator's item type."""
    if not generator or return_annotation is inspect.Parameter.empty:
        return return_annotation
    args = get_args(return_annotation)
    return args[0] if args else inspect.Parameter.empty


def output_of(
    label: str, output_type: Any
) -> tuple[dict[str, Any] | None, TypeAdapter[Any] | None]:
    """The JSON Schema of a tool's output type and a validator for it, built once.

    Both are None when the output is not typed (no annotation, ``Any``, ``None``).

    Raises:
        ToolDefinitionError: The type has no JSON Schema.
    """
    if output_type is inspect.Parameter.empty or output_type is Any:
        return None, None
    if output_type is None or output_type is type(None):
        return None, None
    if _mentions_content(output_type):  # images and resources go as content, not JSON
        return None, None
    try:
        hash(output_type)
    except TypeError:
        return _build_output(label, output_type)
    cached = _OUTPUTS.get(output_type)
    if cached is None:
        if len(_OUTPUTS) >= 512:  # bounded: locally defined models must not pile up
            _OUTPUTS.clear()
        cached = _OUTPUTS[output_type] = _build_output(label, output_type)
    schema, adapter = cached
    return copy.deepcopy(schema), adapter


def _mentions_content(output_type: Any, depth: int = 0) -> bool:
    """Whether a return type is or holds a content class (``Image``, ``list[Image | str]``)."""
    from typing import get_args

    # A return type can name a content class only once its module is imported: until then
    # the check imports nothing (base64, mimetypes) for the tools that return plain values.
    content = sys.modules.get("toolpacks.core._content")
    if content is None:
        return False
    CONTENT_TYPES = content.CONTENT_TYPES

    if isinstance(output_type, type) and output_type in CONTENT_TYPES:
        return True
    return depth < 4 and any(_mentions_content(a, depth + 1) for a in get_args(output_type))


_OUTPUTS: dict[Any, tuple[dict[str, Any], TypeAdapter[Any]]] = {}
"""Output schemas and validators by return type: most tools return str, int, dict or a few
shared models, and building a TypeAdapter costs a fraction of a millisecond each time."""


def _build_output(label: str, output_type: Any) -> tuple[dict[str, Any], TypeAdapter[Any]]:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        return drop_titles(adapter.json_schema(mode="serialization")), adapter
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool function {label!r}: its return type {output_type!r} has no JSON Schema "
            f"({reason(exc)}); return a JSON-compatible type or annotate `-> Any`"
        ) from exc
