"""Parsing the arguments a model sends as JSON text, defensively.

Models send arguments as JSON strings. Before anything else sees them they are capped in size
and nesting depth, and the parser refuses what JSON allows but no tool expects: duplicate
keys (which would otherwise be resolved last-wins), ``NaN``/``Infinity``, floats that overflow
to infinity, and absurdly long integers.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

__all__ = ["ArgumentLimits", "ArgumentsParseError", "parse_arguments"]


@dataclass(frozen=True, slots=True)
class ArgumentLimits:
    """Caps applied to JSON arguments before they are parsed."""

    max_bytes: int = 1024 * 1024
    """The largest JSON text accepted, in UTF-8 bytes (default 1 MiB)."""
    max_depth: int = 64
    """The deepest nesting of arrays and objects accepted (default 64)."""
    max_int_digits: int = 100
    """The most digits an integer literal may have (default 100)."""


DEFAULT_LIMITS = ArgumentLimits()


class ArgumentsParseError(ValueError):
    """The arguments text is not acceptable JSON; the message says why, for the model."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _check_depth(text: str, max_depth: int) -> None:
    if text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                raise ArgumentsParseError(f"arguments are nested more than {max_depth} levels deep")
        else:
            depth -= 1


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ArgumentsParseError(f"duplicate key {key!r} in arguments; send each key once")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise ArgumentsParseError(f"{name} is not a valid JSON number; send a finite number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ArgumentsParseError(f"number {text[:40]} is out of range")
    return value


_MISS = object()
_KEY_END = re.compile(r'"\s*:')


def _parse_fast(text: str, max_digits: int) -> Any:
    """Parse with pydantic-core's JSON parser when that is provably equivalent; else _MISS.

    Every object key in the text ends with a quote, optional whitespace and a colon, so the
    number of such matches is at least the number of key occurrences, which is at least the
    number of distinct keys parsed; equality proves there was no duplicate key (a string
    holding the pattern only adds matches). Values are then checked for non-finite floats
    and over-long integers. Anything doubtful goes to the careful parser, which also words
    the error message.
    """
    try:
        value = from_json(text, allow_inf_nan=False)
    except ValueError:
        return _MISS
    bound = 10**max_digits
    keys = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            keys += len(item)
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not -bound < item < bound:
                return _MISS
        elif kind is float and not math.isfinite(item):
            return _MISS
    if keys != len(_KEY_END.findall(text)):
        return _MISS
    return value


def parse_arguments(text: str | bytes, limits: ArgumentLimits = DEFAULT_LIMITS) -> Any:
    """Parse a JSON arguments text under ``limits``.

    Args:
        text: The JSON text (str or UTF-8 bytes).
        limits: The caps to apply.

    Returns:
        The parsed value (a tool's arguments are expected to be an object; the caller checks).

    Raises:
        ArgumentsParseError: The text is too large, too deep, malformed, or holds a duplicate
            key, a non-finite number or an over-long integer.
    """
    if isinstance(text, bytes | bytearray):
        if len(text) > limits.max_bytes:
            raise ArgumentsParseError(
                f"arguments are {len(text)} bytes; the limit is {limits.max_bytes}"
            )
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArgumentsParseError(f"arguments are not valid UTF-8: {exc.reason}") from None
    elif len(text) > limits.max_bytes // 4 and len(text.encode("utf-8", "surrogatepass")) > (
        limits.max_bytes
    ):
        raise ArgumentsParseError(
            f"arguments are larger than the limit of {limits.max_bytes} bytes"
        )
    _check_depth(text, limits.max_depth)
    max_digits = limits.max_int_digits
    fast = _parse_fast(text, max_digits)
    if fast is not _MISS:
        return fast

    def _int(literal: str) -> int:
        digits = len(literal.lstrip("-"))
        if digits > max_digits:
            raise ArgumentsParseError(
                f"integer with {digits} digits is too long (limit {max_digits})"
            )
        return int(literal)

    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
        )
    except ArgumentsParseError:
        raise
    except json.JSONDecodeError as exc:
        raise ArgumentsParseError(
            f"arguments are not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (RecursionError, ValueError) as exc:
        raise ArgumentsParseError(f"arguments could not be parsed: {exc}") from None
