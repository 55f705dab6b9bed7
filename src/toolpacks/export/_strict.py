"""OpenAI strict mode: rewrite an input schema into the Structured Outputs subset, or say why not.

Strict mode (``"strict": true``) requires every property to be listed in ``required``,
``additionalProperties: false`` on every object, and only a documented subset of JSON
Schema. The rewrite keeps the meaning:

- an optional property becomes required and nullable (``type: [T, "null"]``, or
  ``anyOf: [T, {"type": "null"}]`` for enums, references and unions); the model sends
  ``null`` for "not given" (see ``drop_strict_nulls``);
- ``default`` is not supported: it is removed and noted in the description
  (``(default: 5)``); a ``null`` default needs no note;
- ``$ref`` with sibling keywords is inlined (a bare ``$ref`` stays), ``allOf`` with one member
  is merged, and ``$defs`` are rewritten the same way, recursively;
- ``$schema``, ``$id`` and ``$comment`` carry no meaning for the model and are dropped.

What cannot be expressed without losing meaning is reported, and the caller exports the tool
non-strict: open objects (``additionalProperties`` true or a schema, or an object without
declared properties), values of any type, a root that is not an object, string formats
outside the documented list, and every keyword outside the documented subset (``oneOf``,
``allOf`` with several members, ``not``, ``if``/``then``/``else``, ``minLength``,
``uniqueItems``, ``prefixItems``, ``examples``…).
"""

from __future__ import annotations

from typing import Any

from toolpacks.export._refs import (
    add_note,
    allows_null,
    copy_schema,
    has_type,
    json_text,
    merge_single_all_of,
    resolve_ref,
)

__all__ = ["STRICT_FORMATS", "STRICT_KEYWORDS", "to_strict"]

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats documented as supported in strict mode."""

STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "definitions", "description", "title", "default",
        "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "minItems", "maxItems",
    }
)  # fmt: skip
"""Keywords strict mode accepts (``default`` is rewritten into the description)."""

_MEANINGLESS = ("$schema", "$id", "$comment")
_TYPED = ("type", "anyOf", "$ref", "enum", "const")


class _Strict:
    """One rewrite: the root (for ``$ref``) and the reasons it cannot be strict."""

    def __init__(self, root: dict[str, Any], where: str) -> None:
        self.root = root
        self.where = where
        self.reasons: list[str] = []
        self.inlining: list[str] = []

    def node(self, schema: Any, path: str, *, is_root: bool = False) -> Any:
        if not isinstance(schema, dict):
            self.reasons.append(f"a boolean schema {_at(path)}")
            return schema
        node = merge_single_all_of(dict(schema))
        for key in _MEANINGLESS:
            node.pop(key, None)
        ref = node.get("$ref")
        if ref is not None and len(node) > 1:
            return self.inline(node, ref, path, is_root=is_root)
        if "default" in node:
            default = node.pop("default")
            if default is not None:
                add_note(node, f"default: {json_text(default)}")
        for key in node:
            if key not in STRICT_KEYWORDS:
                self.reasons.append(f"unsupported keyword '{key}' {_at(path)}")
        fmt = node.get("format")
        if fmt is not None and fmt not in STRICT_FORMATS:
            self.reasons.append(f"unsupported format {fmt!r} {_at(path)}")
        if not any(k in node for k in _TYPED):
            self.reasons.append(f"a value of any type (no 'type') {_at(path)}")
        if is_root and (not has_type(node, "object") or "anyOf" in node):
            self.reasons.append("the root is not a plain object")
        if has_type(node, "object") or "properties" in node:
            self.object(node, path, is_root=is_root)
        if "items" in node:
            node["items"] = self.node(node["items"], f"{path}[]" if path else "[]")
        elif has_type(node, "array"):
            self.reasons.append(f"an array of any items {_at(path)}")
        if isinstance(node.get("anyOf"), list):
            node["anyOf"] = [
                self.node(m, _join(path, f"anyOf[{i}]")) for i, m in enumerate(node["anyOf"])
            ]
        for defs in ("$defs", "definitions"):
            if isinstance(node.get(defs), dict):
                node[defs] = {k: self.node(v, f"{defs}.{k}") for k, v in node[defs].items()}
        return node

    def inline(self, node: dict[str, Any], ref: Any, path: str, *, is_root: bool) -> Any:
        if ref in self.inlining:  # a $ref-with-siblings cycle: keep the bare reference
            return {"$ref": ref}
        target = resolve_ref(self.root, ref, self.where)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        self.inlining.append(ref)
        try:
            return self.node({**target, **siblings}, path, is_root=is_root)
        finally:
            self.inlining.pop()

    def object(self, node: dict[str, Any], path: str, *, is_root: bool) -> None:
        extra = node.get("additionalProperties")
        if extra is True or isinstance(extra, dict):
            self.reasons.append(f"an open object (additionalProperties) {_at(path)}")
        elif "properties" not in node and extra is None and not is_root:
            self.reasons.append(f"an object without declared properties {_at(path)}")
        properties = node.get("properties") or {}
        required = set(node.get("required") or ())
        rewritten: dict[str, Any] = {}
        for name, sub in properties.items():
            new = self.node(sub, _join(path, name))
            rewritten[name] = new if name in required else _nullable(new)
        node["properties"] = rewritten
        node["required"] = list(rewritten)
        node["additionalProperties"] = False


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


def _at(path: str) -> str:
    return f"at {path!r}" if path else "at the root"


def _nullable(node: Any) -> Any:
    """``node`` accepting ``null`` too (unchanged when it already does)."""
    if not isinstance(node, dict) or allows_null(node):
        return node
    if isinstance(node.get("anyOf"), list):
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    kind = node.get("type")
    plain = "enum" not in node and "const" not in node and "$ref" not in node
    if plain and isinstance(kind, str):
        return {**node, "type": [kind, "null"]}
    if plain and isinstance(kind, list):
        return {**node, "type": [*kind, "null"]}
    outer: dict[str, Any] = {}
    inner = dict(node)
    for key in ("description", "title"):
        if key in inner and "$ref" not in inner:
            outer[key] = inner.pop(key)
    return {"anyOf": [inner, {"type": "null"}], **outer}


def to_strict(schema: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """Rewrite ``schema`` for OpenAI strict mode.

    Args:
        schema: The tool's input schema (not modified).
        where: What is being exported (tool and format), for error messages.

    Returns:
        The rewritten copy, and the reasons it cannot be strict without losing meaning
        (empty when it can).
    """
    rewrite = _Strict(copy_schema(schema), where)
    result = rewrite.node(rewrite.root, "", is_root=True)
    return result, list(dict.fromkeys(rewrite.reasons))
