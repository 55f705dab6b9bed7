"""Small JSON Schema utilities: walking sub-schemas, removing pydantic's noise, reading types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["allows_null", "drop_titles", "has_type", "walk_schemas"]

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_VALUES = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def walk_schemas(schema: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    """Call ``visit`` on ``schema`` and every sub-schema in it (depth first, parents first).

    Property names in ``properties`` and ``$defs`` are never mistaken for keywords.
    """
    if not isinstance(schema, dict):
        return
    visit(schema)
    for key in _SCHEMA_MAPS:
        mapping = schema.get(key)
        if isinstance(mapping, dict):
            for sub in mapping.values():
                walk_schemas(sub, visit)
    for key in _SCHEMA_VALUES:
        sub = schema.get(key)
        if isinstance(sub, dict):
            walk_schemas(sub, visit)
    for key in _SCHEMA_LISTS:
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                walk_schemas(sub, visit)


def drop_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """Remove the ``title`` keyword from a schema and all its sub-schemas, in place.

    Pydantic titles every model and field ("Query" for ``query``); they cost tokens and tell
    a model nothing the name does not.
    """

    def visit(node: dict[str, Any]) -> None:
        if isinstance(node.get("title"), str):
            del node["title"]

    walk_schemas(schema, visit)
    return schema


def has_type(node: Mapping[str, Any], name: str) -> bool:
    """Whether the node's ``type`` is ``name`` or a list containing it."""
    t = node.get("type")
    return t == name or (isinstance(t, list) and name in t)


def allows_null(node: object) -> bool:
    """Whether the schema visibly accepts ``null`` (type, ``anyOf`` member or ``const``)."""
    if not isinstance(node, Mapping):
        return node is True
    if has_type(node, "null") or ("const" in node and node["const"] is None):
        return True
    members = node.get("anyOf")
    return isinstance(members, list) and any(allows_null(m) for m in members)
