"""Small JSON Schema helpers shared by the schema transforms (never mutate their input)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from toolpacks.core.define._jsonschema import allows_null, has_type
from toolpacks.exceptions import ExportError

__all__ = [
    "add_note",
    "allows_null",
    "copy_schema",
    "has_type",
    "json_text",
    "merge_single_all_of",
    "resolve_ref",
]


def copy_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``schema`` as a plain ``dict``, so transforms never touch the tool's.

    Walks the JSON structure itself rather than calling ``copy.deepcopy`` (several times
    faster, which a listing of 10^4 tools feels): dicts, lists and tuples are copied, JSON
    scalars shared (they are immutable), anything else deep-copied as before.
    """
    return {key: _copy(value) for key, value in schema.items()}


_SHARED = frozenset({str, int, float, bool, type(None)})


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is dict:
        return {key: _copy(item) for key, item in value.items()}
    if kind is list:
        return [_copy(item) for item in value]
    if kind is tuple:
        return tuple(_copy(item) for item in value)
    if isinstance(value, Mapping):
        return {key: _copy(item) for key, item in value.items()}
    return copy.deepcopy(value)


def resolve_ref(root: Mapping[str, Any], ref: object, where: str) -> dict[str, Any]:
    """Resolve a local ``$ref`` (``#/$defs/Name``, ``#/definitions/Name``, any ``#/`` pointer).

    Args:
        root: The schema the pointer starts from.
        ref: The ``$ref`` value.
        where: What is being exported (tool and format), for the error message.

    Returns:
        A deep copy of the referenced schema.

    Raises:
        ExportError: The reference is not local or points nowhere.
    """
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        raise ExportError(f"{where}: only local '$ref's ('#/...') can be exported, got {ref!r}")
    node: Any = root
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ExportError(f"{where}: '$ref' {ref!r} points to nothing in the schema")
    if not isinstance(node, Mapping):
        raise ExportError(f"{where}: '$ref' {ref!r} does not point to a schema object")
    return copy_schema(node)


def merge_single_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """Replace ``allOf: [X]`` (one member) by X merged with the node's other keys, which win."""
    members = node.get("allOf")
    if not (isinstance(members, list) and len(members) == 1 and isinstance(members[0], dict)):
        return node
    rest = {k: v for k, v in node.items() if k != "allOf"}
    return {**members[0], **rest}


def add_note(node: dict[str, Any], note: str) -> None:
    """Append ``note`` to the node's description (or make it the description)."""
    existing = node.get("description")
    if isinstance(existing, str) and existing.strip():
        node["description"] = f"{existing.rstrip()} ({note})"
    else:
        node["description"] = f"{note[:1].upper()}{note[1:]}."


def json_text(value: Any) -> str:
    """Compact JSON text of a schema value (``str()`` when it is not JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return str(value)
