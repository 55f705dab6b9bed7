"""The gate compiled into a validator: every check of a call's arguments, done by pydantic-core.

The gate's checks (``_jsonargs``' caps, ``_kinds``' booleans and numbers, ``_nested_extra``'s
unknown fields) walk the arguments in Python, which for nested arguments costs several times
what pydantic's own validation does. For a tool whose parameters are made only of plain JSON
types (text, numbers, booleans, ``None``, literals and enums, lists, tuples, dicts with text
keys, models and typed dicts, without validators that run before pydantic's), the same
decisions can be made by the schema: ``compile_gate`` makes, from the arguments' core schema, a
second validator that gives the same keyword arguments as the tool's own but also refuses

* a boolean where a number is expected, and a number or text where a boolean is (strict
  ``int``, ``float`` and ``bool``; literals and enums of numbers take numbers only);
* non-finite numbers (``allow_inf_nan=False``) and integers of more than ``max_int_digits``
  digits (``lt``/``gt`` bounds, also on floats, so a huge integer sent for one is refused);
* text that is not valid Unicode: a length bound on every text makes pydantic-core read it
  as UTF-8, which a lone surrogate cannot be;
* unknown fields of every object, nested models included;
* anything larger than ``max_bytes`` or deeper than ``max_depth``: each text and each list or
  dict gets a length bound, chosen so that the largest value the schema then admits is within
  the caps (computed when the gate is made).

It is stricter than the gate, never looser: ``"3"`` for an integer, a list longer than its
bound or an unknown field of a model that ignores them are refused by it, and the call then
takes the Python checks, which accept what they accepted before and word every error. So the
compiled gate only ever says "yes, and here are the arguments" or "ask the walk".

Nested models are validated by the validator pydantic built for their class, whatever schema
encloses them, so while the compiled validator is built each model class is marked as not
complete, and pydantic-core builds the model's validator from the schema given here. The mark
is put back at once; the classes are otherwise untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import SchemaValidator

from toolpacks.core._jsonargs import ArgumentLimits

__all__ = ["CompiledGate", "compile_gate"]

_BOUNDS = ((1000, 256), (1000, 64), (256, 64), (256, 16), (100, 16), (100, 4))
"""The (text, items) length bounds tried in turn, largest first, until the schema fits."""


_FLOAT_TEXT = 24
"""The longest JSON text of a finite float (``-2.2250738585072014e-308``)."""


class _Open(Exception):
    """Part of the schema cannot be bounded: the tool keeps the Python checks."""


class _Compiler:
    """One attempt at a compiled schema, with given text and item bounds."""

    def __init__(self, limits: ArgumentLimits, text: int, items: int) -> None:
        self.limits = limits
        self.text = text
        self.items = items
        self.classes: set[type] = set()
        self.defs: dict[str, Any] = {}
        self.made: dict[str, tuple[dict[str, Any], int, int]] = {}
        self.busy: set[str] = set()

    # Each method returns (schema, size, depth): the new schema, the largest size (as
    # ``_jsonargs`` estimates it) and depth of a value it admits.

    def node(self, schema: Any) -> tuple[dict[str, Any], int, int]:
        if not isinstance(schema, dict):
            raise _Open
        kind = schema.get("type")
        method = _METHODS.get(kind)  # type: ignore[arg-type]
        if method is None:
            raise _Open
        return method(self, schema)

    def inner(self, schema: dict[str, Any], key: str = "schema") -> tuple[dict[str, Any], int, int]:
        made, size, depth = self.node(schema[key])
        return {**schema, key: made}, size, depth

    def text_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        bound = min(schema.get("max_length") or self.text, self.text)
        return {**schema, "max_length": bound}, 4 * bound, 0

    def int_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        top = 10**self.limits.max_int_digits
        made = {**schema, "strict": True}
        made["lt"] = min(schema.get("lt", top), top)
        made["gt"] = max(schema.get("gt", -top), -top)
        return made, self.limits.max_int_digits + 1, 0  # its JSON text: digits and a sign

    def float_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        top = float(10**self.limits.max_int_digits)  # an integer past it rounds to >= top
        made = {**schema, "strict": True, "allow_inf_nan": False}
        made["lt"] = min(schema.get("lt", top), top)
        made["gt"] = max(schema.get("gt", -top), -top)
        return made, _FLOAT_TEXT, 0

    def bool_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        return {**schema, "strict": True}, 5, 0

    def none_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        return schema, 4, 0

    def choices_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        """A literal or an enum: its values' kinds checked first, when a number is one."""
        if schema["type"] == "enum":
            if schema.get("missing") is not None:
                raise _Open
            values = [getattr(member, "value", member) for member in schema["members"]]
        else:
            values = list(schema["expected"])
        kinds = {type(v) for v in values}
        if not kinds <= {str, int, float, bool, type(None)}:
            raise _Open
        size = max((4 * len(v) for v in values if type(v) is str), default=0)
        if not kinds & {int, float, bool}:
            return schema, size, 0  # text only: nothing but the same text matches
        first: list[dict[str, Any]] = [
            made
            for kind, made in (
                (str, {"type": "str", "strict": True}),
                (int, self.int_node({"type": "int"})[0]),
                (float, self.float_node({"type": "float"})[0]),
                (bool, {"type": "bool", "strict": True}),
                (type(None), {"type": "none"}),
            )
            if kind in kinds
        ]
        check = first[0] if len(first) == 1 else {"type": "union", "choices": first}
        chain = {"type": "chain", "steps": [check, {k: v for k, v in schema.items() if k != "ref"}]}
        if "ref" in schema:  # a definition keeps its name
            chain["ref"] = schema["ref"]
        return chain, size, 0

    def list_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        if "items_schema" not in schema:
            raise _Open
        made, size, depth = self.inner(schema, "items_schema")
        bound = min(schema.get("max_length") or self.items, self.items)
        made["max_length"] = bound
        return made, 1 + bound * (2 + size), depth + 1

    def tuple_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        items = schema.get("items_schema") or []
        variadic = schema.get("variadic_item_index")
        made_items, sizes, depths = [], [], [0]
        for item in items:
            made, size, depth = self.node(item)
            made_items.append(made)
            sizes.append(size)
            depths.append(depth)
        count = len(items)
        if variadic is not None:
            count = min(schema.get("max_length") or self.items, self.items)
        made_tuple = {**schema, "items_schema": made_items, "max_length": count}
        return made_tuple, 1 + count * (2 + max(sizes, default=0)), max(depths) + 1

    def dict_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        if "keys_schema" not in schema or "values_schema" not in schema:
            raise _Open
        keys, key_size, _ = self.node(schema["keys_schema"])
        if keys.get("type") != "str":
            raise _Open  # a key of another kind is converted from text pydantic has not bounded
        values, size, depth = self.node(schema["values_schema"])
        bound = min(schema.get("max_length") or self.items, self.items)
        made = {**schema, "keys_schema": keys, "values_schema": values, "max_length": bound}
        return made, 1 + bound * (2 + key_size + size), depth + 1

    def fields_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        """A typed dict's or a model's fields: each checked, unknown ones refused."""
        fields: dict[str, Any] = {}
        size, depth = 1 + 2 * len(schema["fields"]), 0
        for name, field in schema["fields"].items():
            if field.get("validation_alias") is not None:
                raise _Open
            made, field_size, field_depth = self.inner(field)
            fields[name] = made
            size += len(name.encode("utf-8", "surrogatepass")) + field_size
            depth = max(depth, field_depth)
        made_fields = {**schema, "fields": fields, "extra_behavior": "forbid"}
        made_fields.pop("extras_schema", None)
        config = schema.get("config")
        if config is not None:
            made_fields["config"] = {**config, "extra_fields_behavior": "forbid"}
        return made_fields, size, depth + 1

    def model_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        if schema.get("custom_init") or not isinstance(schema.get("cls"), type):
            raise _Open
        self.classes.add(schema["cls"])
        made, size, depth = self.inner(schema)
        if not schema.get("root_model"):
            made["config"] = {**(schema.get("config") or {}), "extra_fields_behavior": "forbid"}
        return made, size, depth

    def union_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        choices, size, depth = [], 0, 0
        for choice in schema["choices"]:
            labelled = isinstance(choice, tuple)
            made, choice_size, choice_depth = self.node(choice[0] if labelled else choice)
            choices.append((made, choice[1]) if labelled else made)
            size, depth = max(size, choice_size), max(depth, choice_depth)
        return {**schema, "choices": choices}, size, depth

    def tagged_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        if callable(schema.get("discriminator")):
            raise _Open
        choices, size, depth = {}, 0, 0
        for tag, choice in schema["choices"].items():
            made, choice_size, choice_depth = self.node(choice)
            choices[tag] = made
            size, depth = max(size, choice_size), max(depth, choice_depth)
        return {**schema, "choices": choices}, size, depth

    def either_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        """``lax-or-strict`` and ``json-or-python``: both sides checked."""
        first, second = ("lax_schema", "strict_schema")
        if schema["type"] == "json-or-python":
            first, second = ("json_schema", "python_schema")
        made_first, size_a, depth_a = self.node(schema[first])
        made_second, size_b, depth_b = self.node(schema[second])
        made = {**schema, first: made_first, second: made_second}
        return made, max(size_a, size_b), max(depth_a, depth_b)

    def definitions_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        for definition in schema["definitions"]:
            self.defs[definition["ref"]] = definition
        made, size, depth = self.inner(schema)
        made["definitions"] = [self.made[ref][0] for ref in self.defs if ref in self.made]
        return made, size, depth

    def ref_node(self, schema: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        ref = schema["schema_ref"]
        if ref not in self.made:
            if ref in self.busy or ref not in self.defs:
                raise _Open  # a recursive type: its depth has no bound
            self.busy.add(ref)
            self.made[ref] = self.node(self.defs[ref])
            self.busy.discard(ref)
        _, size, depth = self.made[ref]
        return schema, size, depth


_Method = Callable[[_Compiler, dict[str, Any]], tuple[dict[str, Any], int, int]]
_METHODS: dict[str, _Method] = {
    "str": _Compiler.text_node,
    "int": _Compiler.int_node,
    "float": _Compiler.float_node,
    "bool": _Compiler.bool_node,
    "none": _Compiler.none_node,
    "literal": _Compiler.choices_node,
    "enum": _Compiler.choices_node,
    "list": _Compiler.list_node,
    "set": _Compiler.list_node,
    "frozenset": _Compiler.list_node,
    "tuple": _Compiler.tuple_node,
    "dict": _Compiler.dict_node,
    "typed-dict": _Compiler.fields_node,
    "model-fields": _Compiler.fields_node,
    "model": _Compiler.model_node,
    "union": _Compiler.union_node,
    "tagged-union": _Compiler.tagged_node,
    "lax-or-strict": _Compiler.either_node,
    "json-or-python": _Compiler.either_node,
    "definitions": _Compiler.definitions_node,
    "definition-ref": _Compiler.ref_node,
    # These see the value as sent (an ``after`` validator runs on what pydantic made of it).
    "nullable": _Compiler.inner,
    "default": _Compiler.inner,
    "function-after": _Compiler.inner,
    "custom-error": _Compiler.inner,
}


class CompiledGate:
    """A validator holding the gate's checks, and the largest value it admits."""

    __slots__ = ("depth", "digits", "size", "validate")

    def __init__(
        self, validate: Callable[[Any], dict[str, Any]], size: int, depth: int, digits: int
    ) -> None:
        self.validate = validate
        """Validates an arguments dict into keyword arguments; raises ``ValueError`` (a
        ``ValidationError``) for anything the gate or the tool's validator might refuse."""
        self.size = size
        self.depth = depth
        self.digits = digits

    def fits(self, limits: ArgumentLimits) -> bool:
        """Whether every value the validator admits is within ``limits``."""
        return (
            self.size <= limits.max_bytes
            and self.depth <= limits.max_depth
            and self.digits == limits.max_int_digits
        )


def compile_gate(core: Any, limits: ArgumentLimits) -> CompiledGate | None:
    """A validator of ``core`` holding the gate's checks under ``limits``; or None.

    None when part of the schema admits values it cannot bound (``Any``, a validator that
    runs before pydantic's, a recursive model, a type not listed here), or when even the
    smallest length bounds would admit values beyond ``limits``.
    """
    if not isinstance(core, dict) or core.get("type") not in ("typed-dict", "definitions"):
        return None
    if limits.max_int_digits > 300:  # floats cannot hold the bound
        return None
    for text, items in _BOUNDS:
        compiler = _Compiler(limits, text, items)
        try:
            schema, size, depth = compiler.node(core)
        except (_Open, KeyError, TypeError):
            return None
        if size <= limits.max_bytes and depth <= limits.max_depth:
            break
    else:
        return None
    try:
        validator = _build(schema, compiler.classes)
    except Exception:  # a schema pydantic-core does not take as rewritten: keep the walk
        return None
    return CompiledGate(validator.validate_python, size, depth, limits.max_int_digits)


def _build(schema: dict[str, Any], classes: set[type]) -> SchemaValidator:
    """The validator of ``schema``, its models built from it rather than taken as built."""
    marked = [cls for cls in classes if cls.__dict__.get("__pydantic_complete__") is True]
    try:
        for cls in marked:
            type.__setattr__(cls, "__pydantic_complete__", False)
        return SchemaValidator(schema, schema.get("config"))
    finally:
        for cls in marked:
            type.__setattr__(cls, "__pydantic_complete__", True)
