"""Undo what OpenAI strict mode does to optional arguments before they are validated.

In strict mode every property is required, so an optional parameter is made nullable and the
model sends ``null`` to mean "not given". For a parameter whose own schema does not accept
``null`` (``limit: int = 10``), that ``null`` would fail validation; ``drop_strict_nulls``
removes such keys so the default applies. A ``null`` for a required parameter, or for one
whose schema accepts ``null``, is kept: it means what it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolpacks.core.define._jsonschema import allows_null

__all__ = ["drop_strict_nulls"]

_MAX_REF_HOPS = 32


def _deref(node: Any, root: Mapping[str, Any]) -> Any:
    """``node`` with a chain of local ``$ref``s followed (``{}`` when it leads nowhere)."""
    for _ in range(_MAX_REF_HOPS):
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return node
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        node = target
    return {}


def _schema(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` dereferenced, with a one-member ``allOf`` and ``anyOf [X, null]`` read as X."""
    for _ in range(_MAX_REF_HOPS):
        node = _deref(node, root)
        if not isinstance(node, Mapping):
            return {}
        members = node.get("allOf", node.get("anyOf"))
        if isinstance(members, list):
            real = [m for m in members if not (isinstance(m, Mapping) and m.get("type") == "null")]
            if len(real) == 1:
                node = real[0]
                continue
        return node
    return {}


def _clean(value: Any, node: Any, root: Mapping[str, Any]) -> Any:
    schema = _schema(node, root)
    properties = schema.get("properties")
    if isinstance(value, Mapping) and isinstance(properties, Mapping):
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key)
            if sub is None:
                out[key] = item
            elif item is None and key not in required and not _nullable(sub, root):
                continue
            else:
                out[key] = _clean(item, sub, root)
        return out
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [_clean(item, items, root) for item in value]
    return value


def _nullable(node: Any, root: Mapping[str, Any]) -> bool:
    return allows_null(_deref(node, root))


def drop_strict_nulls(
    arguments: Mapping[str, Any], input_schema: Mapping[str, Any]
) -> dict[str, Any]:
    """Remove ``null`` values of optional, non-nullable properties, at any depth.

    Safe to apply to any call: such a ``null`` could never pass validation, and leaving the
    key out lets its default apply.

    Args:
        arguments: The parsed arguments of a call (not modified).
        input_schema: The tool's original input schema (not the strict rewrite).

    Returns:
        A new dict without those keys.
    """
    cleaned = _clean(arguments, input_schema, input_schema)
    return dict(cleaned) if isinstance(cleaned, Mapping) else dict(arguments)
