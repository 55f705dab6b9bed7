"""One extra-field rule all the way down: a tool's ``extra_args`` governs its nested objects.

pydantic gives every model its own rule for unknown fields, ``ignore`` unless the model says
otherwise; so a tool that refuses an unknown top-level argument would silently drop an unknown
field one level down. ``close_nested`` gives every nested model (and pydantic dataclass) that
states no rule of its own the tool's rule, in a copy of the arguments' core schema: the model
classes themselves are untouched. A model that sets ``model_config = ConfigDict(extra=...)``
keeps its own rule, and its schema says so.

``fields_at`` finds the fields an object at an error's path takes, for the gate's message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "close_nested",
    "fields_at",
    "has_nested_closed",
    "nested_checker",
    "unknown_fields",
    "without_unknown_fields",
]

_CLASS_NODES = frozenset({"model", "dataclass"})


def close_nested(core: Any, extra: str) -> Any:
    """``core`` with every model and dataclass that states no ``extra`` rule given ``extra``.

    Copy on write: nodes on the way to a changed one are copied, the rest shared, so the
    schema pydantic caches on a model class is never modified.
    """
    if isinstance(core, dict):
        out: dict[str, Any] | None = None
        for key, value in core.items():
            new = close_nested(value, extra)
            if new is not value:
                if out is None:
                    out = dict(core)
                out[key] = new
        node = core if out is None else out
        if node.get("type") in _CLASS_NODES:
            config = node.get("config") or {}
            if "extra_fields_behavior" not in config:
                node = node if out is not None else dict(node)
                node["config"] = {**config, "extra_fields_behavior": extra}
        return node
    if isinstance(core, list):
        items = [close_nested(value, extra) for value in core]
        return core if all(a is b for a, b in zip(items, core, strict=True)) else items
    return core


def fields_at(schema: Any, path: Sequence[str | int]) -> list[str] | None:
    """The property names of the object at ``path`` in a JSON Schema (None if not found).

    Follows ``properties``, ``items`` (for list indices), local ``$ref`` and the branches of
    ``anyOf``/``oneOf``/``allOf``; enough for the schemas toolpacks generates.
    """
    defs = (schema.get("$defs") or {}) if isinstance(schema, dict) else {}
    nodes = [schema]
    for part in path:
        found = []
        for node in _expand(nodes, defs):
            if isinstance(part, int):
                items = node.get("items")
                if isinstance(items, dict):
                    found.append(items)
            else:
                prop = (node.get("properties") or {}).get(part)
                if isinstance(prop, dict):
                    found.append(prop)
        if not found:
            return None
        nodes = found
    for node in _expand(nodes, defs):
        properties = node.get("properties")
        if isinstance(properties, dict):
            return sorted(properties)
    return None


def _expand(nodes: list[Any], defs: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """``nodes`` with references resolved and combinator branches spread out."""
    out: list[dict[str, Any]] = []
    for node in nodes:
        if not isinstance(node, dict) or depth > 8:
            continue
        out.append(node)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out.extend(_expand([defs.get(ref[len("#/$defs/") :])], defs, depth + 1))
        for key in ("anyOf", "oneOf", "allOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                out.extend(_expand(branches, defs, depth + 1))
    return out


def _objects(schema: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas (with ``properties``) a value at ``schema`` may have to match."""
    return [n for n in _expand([schema], defs) if isinstance(n.get("properties"), dict)]


def has_nested_closed(schema: Any) -> bool:
    """Whether an object below the top level of ``schema`` is closed to unknown fields."""

    def closed(node: Any, top: bool) -> bool:
        if isinstance(node, dict):
            if not top and node.get("additionalProperties") is False:
                return True
            return any(closed(v, False) for k, v in node.items() if k != "additionalProperties")
        if isinstance(node, list):
            return any(closed(v, False) for v in node)
        return False

    return closed(schema, True)


def unknown_fields(schema: Any, arguments: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    """The nested fields of ``arguments`` a closed object of ``schema`` does not declare.

    Each is its path and value. Top-level arguments are not looked at (the validator does).
    Under a union, a field one branch declares is let through, and a branch left open
    (``additionalProperties`` not ``false``) leaves the object open.
    """
    defs = (schema.get("$defs") or {}) if isinstance(schema, dict) else {}
    found: list[tuple[tuple[str | int, ...], Any]] = []
    if isinstance(arguments, dict):
        for branch in _objects(schema, defs):
            for key, value in arguments.items():
                prop = branch["properties"].get(key)
                if prop is not None:
                    _walk(prop, value, (key,), defs, found)
            break
    return list({path: (path, value) for path, value in found}.values())


def nested_checker(schema: dict[str, Any]) -> Callable[[Any], None] | None:
    """A check raising ``ValidationError`` for unknown nested fields; None when none can be.

    pydantic validates a nested model with the validator built for its class, whatever the
    enclosing schema says, so the closed objects of the tool's schema are checked here.
    """
    if not has_nested_closed(schema):
        return None
    from pydantic_core import InitErrorDetails, ValidationError

    def check(arguments: Any) -> None:
        unknown = unknown_fields(schema, arguments)
        if unknown:
            details = [
                InitErrorDetails(type="extra_forbidden", loc=path, input=value)
                for path, value in unknown
            ]
            raise ValidationError.from_exception_data("arguments", details)

    return check


def _walk(
    schema: Any,
    value: Any,
    path: tuple[str | int, ...],
    defs: dict[str, Any],
    found: list[tuple[tuple[str | int, ...], Any]],
) -> None:
    if len(path) > 64:
        return
    nodes = _expand([schema], defs)
    if isinstance(value, dict):
        branches = [n for n in nodes if isinstance(n.get("properties"), dict)]
        maps = [
            n["additionalProperties"]
            for n in nodes
            if isinstance(n.get("additionalProperties"), dict)
        ]
        closed = bool(branches) and all(b.get("additionalProperties") is False for b in branches)
        for key, item in value.items():
            props = [b["properties"][key] for b in branches if key in b["properties"]]
            if not props and closed and not maps:
                found.append(((*path, key), item))
            for prop in props or maps:
                _walk(prop, item, (*path, key), defs, found)
    elif isinstance(value, list):
        for n in nodes:
            items = n.get("items")
            prefix = n.get("prefixItems")
            for index, item in enumerate(value):
                if isinstance(prefix, list) and index < len(prefix):
                    _walk(prefix[index], item, (*path, index), defs, found)
                elif isinstance(items, dict):
                    _walk(items, item, (*path, index), defs, found)


def without_unknown_fields(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the nested fields ``unknown_fields`` finds (copied where changed).

    For a host that ignores undeclared arguments (``[settings] extra_args = "ignore"``) of
    tools that would refuse them: ignored at every depth, as the tool's own rule would be.
    """
    unknown = unknown_fields(schema, arguments)
    if not unknown:
        return arguments
    out = dict(arguments)
    for path, _ in unknown:
        node: Any = out
        for part in path[:-1]:
            child = node[part]
            child = dict(child) if isinstance(child, dict) else list(child)
            node[part] = child
            node = child
        node.pop(path[-1], None)
    return out
