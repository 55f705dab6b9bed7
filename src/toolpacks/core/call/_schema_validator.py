"""Validating arguments against a JSON Schema given as data (hand-built, file and MCP tools).

Typed functions are validated by pydantic from their signature. Tools whose only description
is a JSON Schema (a TOOL.md front matter, a remote MCP tool, a hand-built ``Tool`` with
``input_schema=``) are validated here: a pydantic ``TypedDict`` is built from the schema's
top-level properties (types, enums, required, defaults), so coercion and error messages match
those of typed tools. Then the whole schema is checked with ``jsonschema`` (constraints such as
``minimum``, ``pattern`` and ``maxLength``, nested ``required`` and ``additionalProperties``):
imported on the first call validated, its validator built once per tool. Its errors become
``ArgumentError`` entries worded like pydantic's (a path and a reason), secret values redacted.
A schema ``jsonschema`` cannot use (invalid, or referring outside itself) keeps the
top-level checks only, with a warning.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Literal, NotRequired, Required

from pydantic import ConfigDict, TypeAdapter
from typing_extensions import TypedDict

__all__ = ["schema_validator"]

# Typed as Any: the functional form is called with a dict built at run time.
_TypedDict: Any = TypedDict

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
    "null": None,
}


def _python_type(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return Any
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str | int | bool) for v in enum):
        return Literal[tuple(enum)]
    kind = prop.get("type")
    if isinstance(kind, list):
        types = [_TYPES[k] for k in kind if k in _TYPES]
        if not types:
            return Any
        out = types[0]
        for extra in types[1:]:
            out = out | extra if out is not None and extra is not None else (out or extra) | None
        return out
    if kind == "array" and isinstance(prop.get("items"), dict):
        return list[_python_type(prop["items"])]  # type: ignore[misc]
    return _TYPES.get(kind, Any) if isinstance(kind, str) else Any


def schema_validator(
    schema: dict[str, Any],
    extra_args: Literal["reject", "ignore"] = "reject",
    strict: bool = False,
) -> Callable[[Any], dict[str, Any]]:
    """A function validating an arguments dict against ``schema``; it fills in defaults.

    Raises ``pydantic.ValidationError`` for invalid arguments, like typed tools. ``strict``
    refuses coercion (``"3"`` for an integer); the types here are all JSON types.
    """
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for name, prop in properties.items():
        annotation = _python_type(prop)
        fields[name] = Required[annotation] if name in required else NotRequired[annotation]
        if isinstance(prop, dict) and "default" in prop:
            defaults[name] = prop["default"]
    open_object = schema.get("additionalProperties") not in (False, None) or not properties
    extra: Literal["allow", "forbid", "ignore"]
    if open_object and schema.get("additionalProperties") is not False:
        extra = "allow"
    else:
        extra = "forbid" if extra_args == "reject" else "ignore"
    typed = _TypedDict("SchemaArguments", fields, total=False)
    typed.__pydantic_config__ = ConfigDict(extra=extra, strict=strict)
    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(typed)
    checks: list[Callable[[dict[str, Any]], None] | None] = []  # built on the first call

    def validate(arguments: Any) -> dict[str, Any]:
        values = adapter.validate_python(arguments)
        if not checks:
            from toolpacks.core.call._schema_check import whole_schema_check

            checks.append(whole_schema_check(schema))
        check = checks[0]
        if check is not None:
            check(values)
        for key, value in defaults.items():
            if key not in values:
                # A list or dict default must not be shared between calls (a handler that
                # appends to it would change the next call's default).
                values[key] = copy.deepcopy(value) if isinstance(value, list | dict) else value
        return values

    return validate
