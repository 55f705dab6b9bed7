"""Strict mode: rewrite an input schema into a provider's strict subset, or say why not.

Strict mode (``"strict": true``) makes the provider guarantee that the model's arguments
match the schema, which it can do only for a subset of JSON Schema. Two dialects:

- ``OPENAI`` (Chat Completions and Responses): every property listed in ``required``,
  ``additionalProperties: false`` on every object, and only the documented subset of
  keywords and string formats;
- ``ANTHROPIC`` (Anthropic Messages and Bedrock Converse, whose strict tool use has the same
  limits): ``additionalProperties: false`` on every object, ``required`` as declared, no
  recursive schemas; the value constraints it cannot enforce (``minimum``, ``maxLength``,
  ``maxItems``, string formats outside its list…) are moved into the description, as the
  Anthropic SDK's ``transform_schema`` does. They still hold: toolpacks validates every call
  against the tool's own schema before the tool runs.

The rewrite keeps the meaning:

- (OpenAI) an optional property becomes required and nullable (``type: [T, "null"]``, or
  ``anyOf: [T, {"type": "null"}]`` for enums, references and unions); the model sends
  ``null`` for "not given" (the core's ``drop_strict_nulls`` undoes it before validation);
- ``default`` is not supported: it is removed and noted in the description
  (``(default: 5)``); a ``null`` default needs no note;
- ``$ref`` with sibling keywords is inlined (a bare ``$ref`` stays), ``allOf`` with one member
  is merged, and ``$defs`` are rewritten the same way, recursively; (Anthropic) ``oneOf``
  becomes ``anyOf``;
- ``$schema``, ``$id`` and ``$comment`` carry no meaning for the model and are dropped.

What cannot be expressed without losing meaning is reported as reasons: open objects
(``additionalProperties`` true or a schema, or an object without declared properties),
values of any type, a root that is not an object, enum or const values that are not
strings, numbers, booleans or null, and keywords outside the dialect (for OpenAI also
``minLength``, ``uniqueItems`` and string formats outside its list; for both ``not``,
``if``/``then``/``else``, ``prefixItems``, ``allOf`` with several members…). ``apply_strict``
then raises ``ExportError``, or in best-effort mode exports the tool non-strict with an
``ExportWarning``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolpacks.exceptions import ExportError
from toolpacks.export._base import warn
from toolpacks.export._formats import StrictMode
from toolpacks.export._refs import (
    add_note,
    allows_null,
    copy_schema,
    has_type,
    json_text,
    merge_single_all_of,
    resolve_ref,
)

__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "STRICT_FORMATS",
    "STRICT_KEYWORDS",
    "NotStrictError",
    "StrictDialect",
    "apply_strict",
    "recursive_refs",
    "to_strict",
]

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats OpenAI documents as supported in strict mode."""

STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "definitions", "description", "title", "default",
        "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "minItems", "maxItems",
    }
)  # fmt: skip
"""Keywords OpenAI's strict mode accepts (``default`` is rewritten into the description)."""


@dataclass(frozen=True, slots=True)
class StrictDialect:
    """What one provider's strict mode accepts."""

    keywords: frozenset[str]
    """Keywords kept as they are (``default`` is always moved into the description)."""
    formats: frozenset[str]
    """String formats the provider enforces."""
    noted: frozenset[str]
    """Value constraints moved into the description instead of refused."""
    all_required: bool
    """Every property must be required (optional ones become nullable)."""
    recursion: bool
    """Recursive ``$ref``s are accepted."""
    one_of_as_any_of: bool
    """``oneOf`` is rewritten as ``anyOf`` (the model sends one member either way)."""
    notes_formats: bool
    """String formats outside ``formats`` are moved into the description (else refused)."""
    max_min_items: int | None
    """The largest ``minItems`` enforced (a larger one is moved into the description)."""


_ANTHROPIC_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "definitions", "description", "title", "default",
        "pattern", "format", "minItems",
    }
)  # fmt: skip
_ANTHROPIC_NOTED = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    }
)  # fmt: skip

OPENAI = StrictDialect(
    keywords=STRICT_KEYWORDS,
    formats=STRICT_FORMATS,
    noted=frozenset(),
    all_required=True,
    recursion=True,
    one_of_as_any_of=False,
    notes_formats=False,
    max_min_items=None,
)
"""OpenAI Structured Outputs, for function tools with ``strict: true``."""

ANTHROPIC = StrictDialect(
    keywords=_ANTHROPIC_KEYWORDS,
    formats=STRICT_FORMATS | {"uri"},
    noted=_ANTHROPIC_NOTED,
    all_required=False,
    recursion=False,
    one_of_as_any_of=True,
    notes_formats=True,
    max_min_items=1,
)
"""Anthropic strict tool use (``strict: true``), also used by Bedrock Converse."""


class NotStrictError(ExportError):
    """``strict=True`` and a tool's schema cannot be made strict (``definitions`` collects them)."""


_MEANINGLESS = ("$schema", "$id", "$comment")
_TYPED = ("type", "anyOf", "$ref", "enum", "const")
_PRIMITIVE = (str, int, float, bool, type(None))


class _Strict:
    """One rewrite: the root (for ``$ref``) and the reasons it cannot be strict."""

    def __init__(self, root: dict[str, Any], where: str, dialect: StrictDialect) -> None:
        self.root = root
        self.where = where
        self.dialect = dialect
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
        self.constraints(node, path)
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

    def constraints(self, node: dict[str, Any], path: str) -> None:
        """Check the node's keywords against the dialect; move noted ones into the description."""
        dialect = self.dialect
        if dialect.one_of_as_any_of and "oneOf" in node and "anyOf" not in node:
            node["anyOf"] = node.pop("oneOf")
            node.pop("discriminator", None)  # an annotation: the members' consts decide
        notes: list[str] = []
        fmt = node.get("format")
        if fmt is not None and fmt not in dialect.formats:
            if dialect.notes_formats:
                notes.append(f"format {json_text(node.pop('format'))}")
            else:
                self.reasons.append(f"unsupported format {fmt!r} {_at(path)}")
        limit = dialect.max_min_items
        min_items = node.get("minItems")
        if limit is not None and isinstance(min_items, int) and min_items > limit:
            notes.append(f"minItems {node.pop('minItems')}")
        for key in list(node):
            if key in dialect.noted:
                notes.append(f"{key} {json_text(node.pop(key))}")
            elif key not in dialect.keywords:
                self.reasons.append(f"unsupported keyword '{key}' {_at(path)}")
        if notes:
            add_note(node, f"constraints: {', '.join(notes)}")
        values = node.get("enum", []) if isinstance(node.get("enum"), list) else []
        if "const" in node:
            values = [*values, node["const"]]
        if any(not isinstance(v, _PRIMITIVE) for v in values):
            self.reasons.append(f"an enum or const value that is not a primitive {_at(path)}")
        if not any(k in node for k in _TYPED):
            self.reasons.append(f"a value of any type (no 'type') {_at(path)}")

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
        required = node.get("required") or []
        rewritten: dict[str, Any] = {}
        for name, sub in properties.items():
            new = self.node(sub, _join(path, name))
            keep = name in required or not self.dialect.all_required
            rewritten[name] = new if keep else _nullable(new)
        node["properties"] = rewritten
        if self.dialect.all_required:
            node["required"] = list(rewritten)
        elif "required" in node:
            node["required"] = [r for r in required if r in rewritten]
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


def _refs_in(node: Any) -> set[str]:
    """Every ``$ref`` string anywhere in ``node``."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def recursive_refs(root: dict[str, Any], where: str) -> list[str]:
    """The ``$ref``s of ``root`` that lead back to themselves, sorted."""
    edges = {ref: _refs_in(resolve_ref(root, ref, where)) for ref in _refs_in(root)}
    recursive: list[str] = []
    for start in sorted(edges):
        seen: set[str] = set()
        todo = list(edges[start])
        while todo:
            ref = todo.pop()
            if ref == start:
                recursive.append(start)
                break
            if ref not in seen:
                seen.add(ref)
                todo.extend(edges.get(ref, ()))
    return recursive


def to_strict(
    schema: dict[str, Any], where: str, dialect: StrictDialect = OPENAI
) -> tuple[dict[str, Any], list[str]]:
    """Rewrite ``schema`` for a provider's strict mode.

    Args:
        schema: The tool's input schema (not modified).
        where: What is being exported (tool and format), for error messages.
        dialect: The provider's strict subset (``OPENAI`` or ``ANTHROPIC``).

    Returns:
        The rewritten copy, and the reasons it cannot be strict without losing meaning
        (empty when it can).
    """
    rewrite = _Strict(copy_schema(schema), where, dialect)
    result = rewrite.node(rewrite.root, "", is_root=True)
    if not dialect.recursion:
        for ref in recursive_refs(rewrite.root, where):
            rewrite.reasons.append(f"a recursive reference {ref!r}")
    return result, list(dict.fromkeys(rewrite.reasons))


def apply_strict(
    schema: dict[str, Any], where: str, strict: StrictMode, dialect: StrictDialect
) -> tuple[dict[str, Any], bool]:
    """The parameters to export and whether they are strict, for a checked ``strict`` option.

    Args:
        schema: The tool's input schema (a copy; returned as is when not strict).
        where: What is being exported (tool and format), for messages.
        strict: ``False``, ``True`` or ``"best_effort"`` (see ``check_strict``).
        dialect: The provider's strict subset.

    Raises:
        ExportError: ``strict=True`` and the schema cannot be strict without losing meaning;
            the message names the tool, the format and every reason.
    """
    if strict is False:
        return schema, False
    rewritten, reasons = to_strict(schema, where, dialect)
    if not reasons:
        return rewritten, True
    because = f"strict mode cannot express {'; '.join(reasons)} without changing its meaning"
    if strict is True:
        raise NotStrictError(
            f"cannot export {where} with strict=True: {because}. Change the tool's input "
            "schema, or pass strict='best_effort' to export such tools non-strict."
        )
    warn(f"{where} is exported with strict=false: {because}")
    return schema, False
