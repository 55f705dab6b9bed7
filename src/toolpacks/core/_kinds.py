"""Booleans and numbers where a tool's schema expects them, at any depth.

Pydantic's lax mode is what models need (``"3"`` for an integer, an ISO date as text), but it
also takes ``true`` for ``1``, ``1`` and ``"true"`` for a boolean, and ``"nan"`` or ``"1e999"``
for a float. Before validation, the arguments are checked against the tool's JSON Schema,
compiled once per tool into a small tree of checks that visits only the places where the
schema expects a number or a boolean (object properties, additional properties, array items
and ``$ref``s, recursively). The same checks serve typed tools, file tools, remote MCP tools
and hand-built schemas, whatever road the call came by.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KindError", "compile_kind_checks", "flat_kinds"]

Check = Callable[[Any], None]

MAX_NUMERIC_TEXT = 100
"""The longest text accepted where a number is expected, a leading sign not counted: like
``ArgumentLimits.max_int_digits``, an integer of 100 digits is accepted, one of 101 is not."""


class KindError(ValueError):
    """A value of the wrong kind where a number or boolean is expected (internal)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[Any] = []
        """The path to the value, innermost first (reversed by ``where``)."""

    @property
    def where(self) -> str:
        """The path as a dotted string (``"items.3"``)."""
        return ".".join(str(part) for part in reversed(self.path))


def _number(value: Any) -> None:
    if value is True or value is False:
        raise KindError(f"expected a number, got boolean {value!r}")
    if type(value) is str:
        if len(value) > MAX_NUMERIC_TEXT:
            length = len(value) - (value[0] in "+-")
            if length > MAX_NUMERIC_TEXT:
                raise KindError(
                    f"a number sent as text of {length} characters (sign aside) is too long "
                    f"(limit {MAX_NUMERIC_TEXT})"
                )
        try:
            parsed = float(value)
        except ValueError:
            return  # not a number at all: validation says so
        if not math.isfinite(parsed):
            raise KindError(f"{value!r} is not a finite number; send a finite number")


def _boolean(value: Any) -> None:
    if value is True or value is False or value is None:
        return
    kind = type(value)
    if kind is int or kind is float:
        raise KindError(f"expected true or false, got number {value!r}")
    if kind is str:
        raise KindError(f"expected true or false, got string {value[:40]!r}")


_KINDS = {"integer": "number", "number": "number", "boolean": "boolean"}


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        defs = root.get("$defs")
        if not isinstance(defs, Mapping):
            defs = root.get("definitions")
        self.defs: Mapping[str, Any] = defs if isinstance(defs, Mapping) else {}
        self.cells: dict[str, list[Check | None]] = {}

    def kind(self, schema: Any, depth: int = 0) -> str | None:
        """``"number"``/``"boolean"`` when every non-null form ``schema`` allows is one."""
        if not isinstance(schema, Mapping) or depth > 8:
            return None
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            return self.kind(target, depth + 1) if target is not None else None
        declared = schema.get("type")
        if isinstance(declared, str):
            return _KINDS.get(declared)
        if isinstance(declared, list):
            kinds = {_KINDS.get(k) for k in declared if k != "null"}
            return kinds.pop() if len(kinds) == 1 else None
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list) and options:
            kinds = {
                self.kind(o, depth + 1)
                for o in options
                if not (isinstance(o, Mapping) and o.get("type") == "null")
            }
            return kinds.pop() if len(kinds) == 1 else None
        return None

    def resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or "/" not in ref:
            return None
        return self.defs.get(ref.rsplit("/", 1)[-1])

    def node(self, schema: Any) -> Check | None:
        if not isinstance(schema, Mapping):
            return None
        kind = self.kind(schema)
        if kind == "number":
            return _number
        if kind == "boolean":
            return _boolean
        if "$ref" in schema:
            return self.ref(schema["$ref"])
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self.node(all_of[0])
        union = self.union(schema)
        if union is not None:
            return union
        checks = [c for c in (self.object(schema), self.array(schema)) if c is not None]
        if len(checks) == 2:
            first, second = checks

            def both(value: Any) -> None:
                first(value)
                second(value)

            return both
        return checks[0] if checks else None

    def branches(self, schema: Any, depth: int = 0) -> list[tuple[str, Any]]:
        """The forms a union allows, as ``(JSON type or "any", schema)`` pairs, flattened."""
        if not isinstance(schema, Mapping) or depth > 8:
            return [("any", None)]
        if "$ref" in schema:
            return self.branches(self.resolve(schema["$ref"]), depth + 1)
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list) and options:
            return [b for o in options for b in self.branches(o, depth + 1)]
        declared = schema.get("type")
        if isinstance(declared, str):
            return [(declared, schema)]
        if isinstance(declared, list) and declared:
            return [(str(t), {**schema, "type": t}) for t in declared]
        return [("any", schema)]

    def union(self, schema: Mapping[str, Any]) -> Check | None:
        """The check of a union of different kinds (``int | list[int]``, ``float | str``).

        A value is refused when no branch could take it as it is: a boolean where no branch
        is boolean; a number where only booleans are; text that would become a non-finite
        number where numbers but no text are allowed. Lists and objects get the checks of
        the one array (or object) branch.
        """
        declared = schema.get("type")
        if not (schema.get("anyOf") or schema.get("oneOf") or isinstance(declared, list)):
            return None
        forms = self.branches(schema)
        kinds = {kind for kind, _ in forms}
        if "any" in kinds:
            return None
        numbers = bool(kinds & {"integer", "number"})
        booleans = "boolean" in kinds
        texts = "string" in kinds
        arrays = [self.array(s) for k, s in forms if k == "array"]
        objects = [self.object(s) for k, s in forms if k == "object"]
        array_check = arrays[0] if len(arrays) == 1 else None
        object_check = objects[0] if len(objects) == 1 else None
        expected = " or ".join(sorted(kinds - {"null"}))

        def check_union(value: Any) -> None:
            if value is True or value is False:
                if not booleans:
                    raise KindError(f"expected {expected}, got boolean {value!r}")
                return
            kind = type(value)
            if kind is int or kind is float:
                if booleans and not numbers:
                    raise KindError(f"expected {expected}, got number {value!r}")
            elif kind is str:
                if numbers and not texts:
                    _number(value)
                elif booleans and not texts:
                    raise KindError(f"expected {expected}, got string {value[:40]!r}")
            elif kind is list or kind is tuple:
                if array_check is not None:
                    array_check(value)
            elif kind is dict and object_check is not None:
                object_check(value)

        return check_union

    def ref(self, ref: Any) -> Check | None:
        if not isinstance(ref, str):
            return None
        cell = self.cells.get(ref)
        if cell is None:
            target = self.resolve(ref)
            if target is None:
                return None
            cell = self.cells[ref] = [None]
            cell[0] = self.node(target)
            if cell[0] is None:
                return None
        elif cell[0] is not None:
            return cell[0]

        def follow(value: Any) -> None:  # a recursive model: resolved once compiled
            check = cell[0]
            if check is not None:
                check(value)

        return follow

    def object(self, schema: Mapping[str, Any]) -> Check | None:
        properties = schema.get("properties")
        props: tuple[tuple[str, Check], ...] = ()
        if isinstance(properties, Mapping):
            props = tuple(
                (name, check)
                for name, sub in properties.items()
                if (check := self.node(sub)) is not None
            )
        extra = schema.get("additionalProperties")
        rest = self.node(extra) if isinstance(extra, Mapping) else None
        if not props and rest is None:
            return None
        named = frozenset(name for name, _ in props)

        def check_object(value: Any) -> None:
            if type(value) is not dict:
                return
            for name, check in props:
                if name in value:
                    try:
                        check(value[name])
                    except KindError as exc:
                        exc.path.append(name)
                        raise
            if rest is not None:
                for name, item in value.items():
                    if name not in named:
                        try:
                            rest(item)
                        except KindError as exc:
                            exc.path.append(name)
                            raise

        return check_object

    def array(self, schema: Mapping[str, Any]) -> Check | None:
        items = schema.get("items")
        each = self.node(items) if isinstance(items, Mapping) else None
        prefix = schema.get("prefixItems")
        firsts: tuple[Check | None, ...] = ()
        if isinstance(prefix, list):
            firsts = tuple(self.node(p) for p in prefix)
        if each is None and not any(firsts):
            return None

        def check_array(value: Any) -> None:
            if type(value) is not list and type(value) is not tuple:
                return
            for index, item in enumerate(value):
                check = firsts[index] if index < len(firsts) else each
                if check is not None:
                    try:
                        check(item)
                    except KindError as exc:
                        exc.path.append(index)
                        raise

        return check_array


def compile_kind_checks(schema: Mapping[str, Any]) -> Check | None:
    """The check of a tool's arguments against its input ``schema``; None if none is needed.

    The check raises ``KindError`` (with the path) for a boolean where a number is expected,
    a number or text where a boolean is expected, and text that would become a non-finite
    or absurdly long number.
    """
    compiler = _Compiler(schema)
    return compiler.object(schema)


def flat_kinds(schema: Mapping[str, Any]) -> dict[str, bool] | None:
    """The checks of ``schema`` as ``{parameter: is_number}`` when all are top-level.

    The short path of a call inlines these (a tool of scalar parameters, the common case):
    ``True`` for a number parameter, ``False`` for a boolean one. None when some check is
    nested (``compile_kind_checks`` does those).
    """
    compiler = _Compiler(schema)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and compiler.node(extra) is not None:
        return None
    kinds: dict[str, bool] = {}
    for name, sub in properties.items():
        check = compiler.node(sub)
        if check is None:
            continue
        if check is not _number and check is not _boolean:
            return None
        kinds[name] = check is _number
    return kinds
