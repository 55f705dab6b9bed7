"""Checking a schema-only tool's arguments against its whole JSON Schema with ``jsonschema``.

``_schema_validator`` types the top-level arguments with pydantic; this module checks what
that leaves out: constraints (``minimum``, ``pattern``, ``maxLength``...) and nested structure
(``required``, ``additionalProperties``, item schemas) at any depth. ``jsonschema`` is
imported when the first such check is built, never with toolpacks.

Each error becomes an ``ArgumentError`` whose path is the dotted path to the value and whose
reason is worded like pydantic's, with the value shown as the gate shows it, or
``(value redacted)`` under a ``writeOnly`` or ``format: password`` schema.

``pattern`` and ``patternProperties`` run on RE2 (``core/_linear_re.py``), never on Python's
backtracking ``re``: an argument cannot stall a worker. A schema whose pattern RE2 cannot run
(a lookaround, a backreference) has every call refused, naming the pattern.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from toolpacks.core._linear_re import compile_linear
from toolpacks.core._result import ArgumentError

__all__ = ["SchemaArgumentsError", "whole_schema_check"]

logger = logging.getLogger("toolpacks")


class SchemaArgumentsError(ValueError):
    """Arguments that break a constraint of a schema-only tool's schema (``details``)."""

    def __init__(self, details: list[ArgumentError]) -> None:
        super().__init__("; ".join(f"{d.argument}: {d.message}" for d in details))
        self.details = details

_MAX_ERRORS = 20

_REASONS: dict[str, str] = {
    "minimum": "Input should be greater than or equal to {v}",
    "maximum": "Input should be less than or equal to {v}",
    "exclusiveMinimum": "Input should be greater than {v}",
    "exclusiveMaximum": "Input should be less than {v}",
    "multipleOf": "Input should be a multiple of {v}",
    "minLength": "String should have at least {v} characters",
    "maxLength": "String should have at most {v} characters",
    "pattern": "String should match pattern '{v}'",
    "minItems": "List should have at least {v} items",
    "maxItems": "List should have at most {v} items",
    "uniqueItems": "List items should be unique",
    "minProperties": "Object should have at least {v} fields",
    "maxProperties": "Object should have at most {v} fields",
    "const": "Input should be {v!r}",
    "enum": "Input should be one of {v!r}",
    "type": "Input should be a valid {v}",
}


def whole_schema_check(schema: dict[str, Any]) -> Callable[[dict[str, Any]], None] | None:
    """A function raising ``SchemaArgumentsError`` for arguments ``schema`` refuses.

    None when ``schema`` cannot be used (invalid, or a reference it cannot resolve): the
    top-level checks then stand alone, and a warning says why.
    """
    import jsonschema  # type: ignore[import-untyped,unused-ignore]  # no stubs installed

    try:
        cls: Any = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)  # SchemaError for a schema that is not one
    except Exception as exc:
        logger.warning("a tool's input schema cannot be checked in full: %s", _first_line(exc))
        return None
    unusable = _unusable_patterns(schema)
    if unusable:
        return _refuse_all(unusable)
    validator = _linear(cls, jsonschema)(schema)

    def check(values: dict[str, Any]) -> None:
        try:
            errors = sorted(validator.iter_errors(values), key=lambda e: list(map(str, e.path)))
        except Exception as exc:  # an unresolvable $ref found while validating
            logger.warning("a tool's input schema cannot be checked in full: %s", _first_line(exc))
            return
        if errors:
            details: list[ArgumentError] = []
            for error in errors[:_MAX_ERRORS]:
                details.extend(_details(error, schema))
            raise SchemaArgumentsError(details)

    return check


def _patterns(node: Any) -> list[str]:
    """Every ``pattern`` and ``patternProperties`` key in a schema, at any depth."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            found.append(node["pattern"])
        if isinstance(node.get("patternProperties"), dict):
            found.extend(k for k in node["patternProperties"] if isinstance(k, str))
        for value in node.values():
            found.extend(_patterns(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_patterns(item))
    return found


def _unusable_patterns(schema: dict[str, Any]) -> list[ArgumentError]:
    details = []
    for pattern in dict.fromkeys(_patterns(schema)):
        try:
            compile_linear(pattern)
        except ValueError as exc:
            details.append(
                ArgumentError(
                    "(schema)",
                    f"this tool's input schema has pattern {pattern!r}, which cannot be "
                    f"checked safely: {exc}; the tool's author must change the pattern",
                )
            )
    return details


def _refuse_all(details: list[ArgumentError]) -> Callable[[dict[str, Any]], None]:
    logger.warning("a tool's input schema cannot be checked: %s", details[0].message)

    def check(values: dict[str, Any]) -> None:
        raise SchemaArgumentsError(details)

    return check


def _search(pattern: str, text: str) -> bool:
    return compile_linear(pattern).search(text) is not None


def _linear(cls: Any, jsonschema: Any) -> Any:
    """``cls`` with the keywords that match patterns run on RE2 instead of ``re``."""
    error = jsonschema.ValidationError

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and not _search(patrn, instance):
            yield error(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "object"):
            for patrn, subschema in patterns.items():
                for key, value in instance.items():
                    if _search(patrn, key):
                        yield from validator.descend(
                            value, subschema, path=key, schema_path=patrn
                        )

    def additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        extras = _extras(instance, schema)
        if validator.is_type(allowed, "object"):
            for key in extras:
                yield from validator.descend(instance[key], allowed, path=key)
        elif not allowed and extras:
            shown = ", ".join(repr(k) for k in sorted(extras))
            yield error(f"Additional properties are not allowed ({shown} unexpected)")

    keywords = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional,
    }
    return jsonschema.validators.extend(cls, keywords)


def _extras(instance: dict[str, Any], schema: Any) -> list[str]:
    declared = schema.get("properties") or {}
    patterns = [p for p in schema.get("patternProperties") or {} if isinstance(p, str)]
    return [
        k for k in instance if k not in declared and not any(_search(p, k) for p in patterns)
    ]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _secret(node: Any) -> bool:
    return isinstance(node, dict) and (
        node.get("writeOnly") is True or node.get("format") == "password"
    )


def _is_secret(error: Any, schema: dict[str, Any]) -> bool:
    """Whether the value is a secret: its schema, or the top-level argument's, says so."""
    if _secret(error.schema):
        return True
    path = list(error.path)
    properties = schema.get("properties")
    return bool(path) and isinstance(properties, dict) and _secret(properties.get(path[0]))


def _shown(value: Any, secret: bool) -> str:
    if secret:
        return "(value redacted)"
    text = repr(value)
    return f"(got {text if len(text) <= 60 else text[:57] + '...'})"


def _details(error: Any, schema: dict[str, Any]) -> list[ArgumentError]:
    path = [str(p) for p in error.path]
    kind = error.validator
    value = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, dict):
        missing = [k for k in value if k not in instance]
        reason = "missing required field" if path else "missing required argument"
        return [ArgumentError(".".join([*path, k]), reason) for k in missing]
    if kind == "additionalProperties" and isinstance(instance, dict):
        declared = error.schema.get("properties") or {}
        extras = _extras(instance, error.schema)
        takes = ", ".join(sorted(declared)) or "no fields"
        return [
            ArgumentError(".".join([*path, k]), f"unexpected field; this object takes: {takes}")
            for k in extras
        ]
    template = _REASONS.get(kind)
    if template is not None:
        if kind == "type" and isinstance(value, list):
            value = " or ".join(value)
        reason = template.format(v=value)
    else:
        reason = f"does not satisfy the schema's {kind!r}"
    secret = _is_secret(error, schema)
    return [ArgumentError(".".join(path), f"{reason} {_shown(instance, secret)}")]
