"""Gemini: rewrite a JSON Schema into the OpenAPI-3.0 subset of Gemini's ``Schema`` object.

Gemini function declarations take a ``Schema`` with a fixed set of fields (``type``,
``format``, ``title``, ``description``, ``nullable``, ``enum``, ``properties``, ``required``,
``items``, ``anyOf``, ``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern``,
``minimum``/``maximum``, ``minProperties``/``maxProperties``, ``example``, ``default``,
``propertyOrdering``, ``additionalProperties``) and no references. The rewrite:

- inlines every ``$ref`` (``$defs`` disappear); a recursive reference is cut where it
  recurs, replaced by its type and description, and reported;
- turns ``null`` in a type list or an ``anyOf`` member into ``nullable: true``;
- turns ``oneOf`` into ``anyOf``, a one-member ``allOf`` into its member, a string ``const``
  into a one-value ``enum`` (with ``format: enum``, as Gemini documents string enums);
- keeps ``format`` only where Gemini documents it (``float``/``double``,
  ``int32``/``int64``, ``enum``/``date-time``);
- keeps ``additionalProperties`` true or a schema (rewritten the same way), so a
  ``dict[str, int]`` parameter keeps its value type; an empty schema becomes ``true``;
- removes everything else and reports it; ``additionalProperties: false``, ``$schema``,
  ``$id`` and ``$comment`` are dropped without a report (they add nothing for the model).
  Enum values that are not strings are moved into the description (``allowed values: …``).
"""

from __future__ import annotations

from typing import Any

from toolpacks.export._refs import (
    add_note,
    copy_schema,
    json_text,
    merge_single_all_of,
    resolve_ref,
)

__all__ = ["GEMINI_KEYWORDS", "GeminiSchema", "to_gemini"]

GEMINI_KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
        "maximum", "additionalProperties",
    }
)  # fmt: skip
"""The fields of Gemini's ``Schema`` object."""

_FORMATS = {
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
    "string": frozenset({"enum", "date-time"}),
}
_SILENT = frozenset({"$schema", "$id", "$comment", "$defs", "definitions"})


class GeminiSchema:
    """One rewrite: the root (for ``$ref``), what was removed, and which references were cut."""

    def __init__(self, root: dict[str, Any], where: str) -> None:
        self.root = root
        self.where = where
        self.removed: list[str] = []
        self.cut: list[str] = []
        self.result: dict[str, Any] = {}
        """The rewritten schema (set by ``to_gemini``)."""

    def drop(self, what: str) -> None:
        if what not in self.removed:
            self.removed.append(what)

    def convert(self, schema: Any, stack: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(schema, dict):
            if schema is not True:
                self.drop("false schema")
            return {}
        node = merge_single_all_of(dict(schema))
        ref = node.pop("$ref", None)
        if ref is not None:
            return self.reference(node, ref, stack)
        if "oneOf" in node:
            node.setdefault("anyOf", node.pop("oneOf"))
            node.pop("discriminator", None)
            self.drop("oneOf (replaced by anyOf)")
        if "const" in node:
            const = node.pop("const")
            if isinstance(const, str):
                node.setdefault("enum", [const])
            else:
                add_note(node, f"always {json_text(const)}")
                self.drop("const")
        out: dict[str, Any] = {}
        # anyOf last: a single remaining member merges in under the node's own keywords.
        for key in sorted(node, key=lambda k: k == "anyOf"):
            value = node[key]
            if key == "type":
                self.type(out, value)
            elif key == "anyOf" and isinstance(value, list):
                self.any_of(out, value, stack)
            elif key == "enum" and isinstance(value, list):
                self.enum(out, value, node)
            elif key == "properties" and isinstance(value, dict):
                out["properties"] = {k: self.convert(v, stack) for k, v in value.items()}
            elif key == "items":
                out["items"] = self.convert(value, stack)
            elif key == "additionalProperties":
                self.additional(out, value, stack)
            elif key in GEMINI_KEYWORDS and key not in out:
                out[key] = value
            elif key not in _SILENT and key not in GEMINI_KEYWORDS:
                self.drop(key)
        return self.tidy(out)

    def reference(self, node: dict[str, Any], ref: Any, stack: tuple[str, ...]) -> dict[str, Any]:
        target = resolve_ref(self.root, ref, self.where)
        if ref in stack:
            if ref not in self.cut:
                self.cut.append(ref)
            kept: dict[str, Any] = {
                k: target[k] for k in ("type", "title", "description") if k in target
            }
            merged: dict[str, Any] = {**kept, **node}
            label = target.get("title") or str(ref).rsplit("/", 1)[-1]
            add_note(merged, f"recursive: the same structure as the enclosing {label}")
            return self.convert(merged, stack)
        inlined: dict[str, Any] = {**target, **node}
        return self.convert(inlined, (*stack, str(ref)))

    def additional(self, out: dict[str, Any], value: Any, stack: tuple[str, ...]) -> None:
        """``additionalProperties``: ``true`` or the value schema kept, ``false`` dropped."""
        if value is False:
            return
        if isinstance(value, dict):
            converted = self.convert(value, stack)
            out["additionalProperties"] = converted if converted else True
        elif value is True:
            out["additionalProperties"] = True
        else:
            self.drop("additionalProperties")

    def type(self, out: dict[str, Any], value: Any) -> None:
        kinds = value if isinstance(value, list) else [value]
        real = [k for k in kinds if k != "null"]
        if len(real) < len(kinds):
            out["nullable"] = True
        if len(real) == 1:
            out["type"] = real[0]
        elif not real:
            out["type"] = "null"
        else:
            out.setdefault("anyOf", [{"type": k} for k in real])

    def any_of(self, out: dict[str, Any], members: list[Any], stack: tuple[str, ...]) -> None:
        real = [self.convert(m, stack) for m in members if not _is_null(m)]
        if len(real) < len(members):
            out["nullable"] = True
        if len(real) == 1:
            for key, value in real[0].items():
                out.setdefault(key, value)
        elif real:
            out["anyOf"] = real

    def enum(self, out: dict[str, Any], values: list[Any], node: dict[str, Any]) -> None:
        if None in values:
            out["nullable"] = True
            values = [v for v in values if v is not None]
        if all(isinstance(v, str) for v in values):
            out["enum"] = values
            if node.get("type", "string") == "string" and "format" not in node:
                out["format"] = "enum"
        else:
            self.drop("enum (values that are not strings)")
            out["_note"] = f"allowed values: {', '.join(json_text(v) for v in values)}"

    def tidy(self, out: dict[str, Any]) -> dict[str, Any]:
        note = out.pop("_note", None)
        if note is not None:
            add_note(out, note)
        fmt = out.get("format")
        if fmt is not None and fmt not in _FORMATS.get(str(out.get("type", "string")), ()):
            del out["format"]
            self.drop("format")
        if out.get("properties") == {}:  # Gemini rejects an empty properties map
            del out["properties"]
        if "properties" in out and out.get("type", "object") != "object":
            del out["properties"]  # Gemini allows properties on objects only
            self.drop("properties (on a value that is not an object)")
        elif "properties" in out:
            out["type"] = "object"
        if "required" in out:
            names = out.get("properties") or {}
            out["required"] = [r for r in out["required"] if r in names]
            if not out["required"]:
                del out["required"]
        return out


def _is_null(schema: Any) -> bool:
    """Whether ``schema`` accepts only ``null`` (``{"type": "null"}``, maybe described)."""
    return isinstance(schema, dict) and schema.get("type") in ("null", ["null"])


def to_gemini(schema: dict[str, Any], where: str) -> GeminiSchema:
    """Rewrite ``schema`` (not modified) for Gemini; read ``.result``, ``.removed``, ``.cut``.

    Args:
        schema: A JSON Schema.
        where: What is being exported (tool and format), for error messages.
    """
    rewrite = GeminiSchema(copy_schema(schema), where)
    rewrite.result = rewrite.convert(rewrite.root)
    return rewrite
