"""Checking the arguments a model sends, whether they arrive as JSON text or as parsed values.

Every call's arguments pass the same caps before anything else sees them: size, nesting depth
and integer length, no non-finite numbers and no text that is not valid Unicode. JSON text is
also refused when it holds what JSON allows but no tool expects: duplicate keys (which would
otherwise be resolved last-wins) and ``NaN``/``Infinity`` literals. Parsed values (a dict from
Python code, from an MCP server or a framework adapter) get the same checks by a walk over the
value; duplicate keys can only be seen in text, so a road that receives text checks it there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import from_json

_jiter: Callable[..., Any] | None
try:  # jiter (pydantic-core's JSON parser, as a package) finds duplicate keys as it parses
    from jiter import from_json as _jiter
except ImportError:  # pragma: no cover - installed with most model SDKs, not with pydantic
    _jiter = None

__all__ = [
    "ArgumentLimits",
    "ArgumentsParseError",
    "check_arguments",
    "count_keys",
    "parse_arguments",
    "quick_parse",
]


QUICK_TEXT = 1000
"""Strings up to this length are checked inline by the short path (longer: the full walk)."""
QUICK_KEY = 100
"""Keys up to this length are checked inline by the short path."""


@dataclass(frozen=True, slots=True)
class ArgumentLimits:
    """Caps applied to every call's arguments, as text or as parsed values."""

    max_bytes: int = 1024 * 1024
    """The largest arguments accepted, in UTF-8 bytes of their JSON text (default 1 MiB).

    For parsed values the size is estimated from their strings, numbers and items."""
    max_depth: int = 64
    """The deepest nesting of arrays and objects accepted (default 64)."""
    max_int_digits: int = 100
    """The most digits an integer may have (default 100)."""
    _bound: int = field(init=False, repr=False, compare=False)
    _quick_items: int = field(init=False, repr=False, compare=False)
    _int_range: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bound", 10**self.max_int_digits)
        object.__setattr__(self, "_int_range", (-self._bound, self._bound))
        # A dict of at most this many items, each a short key and a short string or a
        # scalar, is within max_bytes without being measured (the short path's check).
        object.__setattr__(self, "_quick_items", self.max_bytes // (QUICK_TEXT + QUICK_KEY + 8))


DEFAULT_LIMITS = ArgumentLimits()


class ArgumentsParseError(ValueError):
    """The arguments are not acceptable; the message says why, in words for the model."""

    def __init__(self, message: str, argument: str = "") -> None:
        super().__init__(message)
        self.argument = argument
        """The path of the offending value (``"items.3"``), or empty for the whole."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEY_END = re.compile(r'"\s*:')


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


def _path(parts: tuple[Any, ...]) -> str:
    text = ".".join(str(p) for p in parts)
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode()


def _too_big(limits: ArgumentLimits) -> ArgumentsParseError:
    return ArgumentsParseError(f"arguments are larger than the limit of {limits.max_bytes} bytes")


def _bad_string(value: str, where: tuple[Any, ...], what: str = "text") -> ArgumentsParseError:
    return ArgumentsParseError(
        f"{what} is not valid Unicode (it holds a lone surrogate); send valid UTF-8 text",
        _path(where),
    )


def _bad_number(value: Any, where: tuple[Any, ...], limits: ArgumentLimits) -> ArgumentsParseError:
    if type(value) is float:
        return ArgumentsParseError(
            f"{value} is not a finite number; send a finite number", _path(where)
        )
    size = abs(value)
    if size.bit_length() < 10_000:
        count = f"{len(str(size))}"
    else:  # str() of a huge integer is slow (and refused past 4,300 digits): estimate
        count = f"about {int(size.bit_length() * 0.30103) + 1}"
    return ArgumentsParseError(
        f"integer with {count} digits is too long (limit {limits.max_int_digits})",
        _path(where),
    )


def check_arguments(value: Any, limits: ArgumentLimits = DEFAULT_LIMITS) -> int:
    """Check a parsed arguments value against ``limits``; return how many object keys it holds.

    Walks the whole value: strings (keys included) must be valid Unicode, integers within
    ``max_int_digits``, floats finite, nesting within ``max_depth``, and the estimated JSON
    size within ``max_bytes``. Values of other Python types (a model instance passed by
    Python code) count as one item and are left to validation.

    The walk only detects; when it finds a problem, a second look finds where it is, so a
    valid value pays nothing for paths.

    Raises:
        ArgumentsParseError: The first problem found, with the path to it.
    """
    if type(value) is not dict and type(value) is not list and type(value) is not tuple:
        return 0
    problem = _scan(value, limits)
    if isinstance(problem, int):
        return problem
    raise _explain(value, limits, problem)


_CONTAINERS = (dict, list, tuple)


def _scan(value: Any, limits: ArgumentLimits) -> int | str:
    """The number of keys in ``value``, or the kind of the first problem found.

    Breadth-first, one nesting level at a time, so depth is counted per level, not per item.
    """
    low, high = limits._int_range
    budget = limits.max_bytes
    keys = 0
    size = 0
    level = [value]
    depth = 1
    while level:
        if depth > limits.max_depth:
            return "depth"
        below: list[Any] = []
        for container in level:
            size += 1 + 2 * len(container)
            if type(container) is dict:
                keys += len(container)
                try:
                    names = "".join(container)
                except TypeError:  # a key that is not a string (Python callers): validation's
                    names = "".join(k for k in container if type(k) is str)
                size += len(names)
                if not names.isascii():
                    extra = _extra_bytes(names)
                    if extra < 0:
                        return "surrogate"
                    size += extra
                items: Any = container.values()
            else:
                items = container
            for item in items:
                kind = type(item)
                if kind is str:
                    size += len(item)
                    if size > budget:
                        return "size"
                    if not item.isascii():
                        extra = _extra_bytes(item)
                        if extra < 0:
                            return "surrogate"
                        size += extra
                        if size > budget:
                            return "size"
                elif kind is int:
                    if not low < item < high:
                        return "integer"
                    size += len(str(item))  # numbers count as their JSON text
                elif kind is float:
                    if item - item != 0.0:  # inf - inf and nan - nan are nan
                        return "float"
                    size += len(repr(item))
                elif kind is dict or kind is list or kind is tuple:
                    below.append(item)
                elif kind is bool or item is None:
                    size += 4 if item is not False else 5  # true, null, false
        if size > budget:
            return "size"
        level = below
        depth += 1
    return keys


def _extra_bytes(text: str) -> int:
    """The UTF-8 bytes of non-ASCII ``text`` beyond one a character; -1 for a lone surrogate.

    The size cap is in bytes: 700,000 "é" are 1.4 MB. Encoding finds a lone surrogate too,
    several times faster than searching for one.
    """
    try:
        return len(text.encode("utf-8")) - len(text)
    except UnicodeEncodeError:
        return -1


def _explain(value: Any, limits: ArgumentLimits, problem: str) -> ArgumentsParseError:
    """The error for ``problem``, with the path to the first value that has it."""
    if problem == "size":
        return _too_big(limits)
    if problem == "depth":
        return ArgumentsParseError(f"arguments are nested more than {limits.max_depth} levels deep")
    low, high = limits._int_range
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        container, where = stack.pop()
        pairs = container.items() if type(container) is dict else enumerate(container)
        for key, item in pairs:
            path = (*where, key)
            if problem == "surrogate":
                if type(key) is str and _SURROGATE.search(key):
                    return _bad_string(key, where, "a key")
                if type(item) is str and _SURROGATE.search(item):
                    return _bad_string(item, path)
            elif (problem == "integer" and type(item) is int and not low < item < high) or (
                problem == "float" and type(item) is float and item - item != 0.0
            ):
                return _bad_number(item, path, limits)
            if type(item) in _CONTAINERS:
                stack.append((item, path))
    return ArgumentsParseError("arguments could not be checked")  # pragma: no cover


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
        raise ArgumentsParseError(f"number {text[:40]} is out of range; send a finite number")
    return value


_MISS = object()


def _parse_fast(text: str, limits: ArgumentLimits) -> Any:
    """Parse with a JSON parser in Rust and check the value; ``_MISS`` when in doubt.

    Anything doubtful (a parse error, a possible duplicate key, a value the checks refuse) goes
    to the careful parser, which words the error message.
    """
    try:
        if _jiter is not None:
            value = _jiter(text.encode(), allow_inf_nan=False, catch_duplicate_keys=True)
        else:
            value = from_json(text, allow_inf_nan=False)
    except (ValueError, TypeError):  # a str holding a lone surrogate: either
        return _MISS
    try:
        keys = check_arguments(value, limits)
    except ArgumentsParseError:
        return _MISS
    if _jiter is None and keys and keys != text.count(":") and keys != len(_KEY_END.findall(text)):
        return _MISS
    return value


def quick_parse(text: str, limits: ArgumentLimits = DEFAULT_LIMITS) -> dict[str, Any] | None:
    """The arguments object in ``text`` when it passes every check at once; else None.

    The short path of a call. Checks the text: its length bounds the size; bracket counts
    bound the depth; ``NaN``/``Infinity`` literals and invalid Unicode are refused by the
    parser, and so are duplicate keys (jiter's ``catch_duplicate_keys``; without jiter, the
    number of keys kept must equal the number of key endings, ``"`` then ``:``). The values'
    own checks (integer length, finite numbers) are the caller's, as for a dict. Anything
    doubtful returns None, so that ``parse_arguments`` can word the error.
    """
    if len(text) > limits.max_bytes // 4:
        return None
    objects = text.count("{")
    if objects + text.count("[") > limits.max_depth:
        return None
    if _jiter is not None:
        try:
            value = _jiter(text.encode(), allow_inf_nan=False, catch_duplicate_keys=True)
        except ValueError:  # UnicodeEncodeError too: a str holding a lone surrogate
            return None
        return value if type(value) is dict else None
    try:
        value = from_json(text, allow_inf_nan=False)
    except (ValueError, TypeError):  # TypeError: a str holding a lone surrogate
        return None
    if type(value) is not dict:
        return None
    keys = len(value) if objects == 1 else count_keys(value)
    if keys != text.count(":") and keys != len(_KEY_END.findall(text)):
        return None
    return value


def count_keys(value: Any) -> int:
    """How many keys all the objects in a parsed JSON ``value`` hold together."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            count += len(item)
            stack.extend(v for v in item.values() if type(v) is dict or type(v) is list)
        elif type(item) is list:
            stack.extend(v for v in item if type(v) is dict or type(v) is list)
    return count


def parse_arguments(text: str | bytes, limits: ArgumentLimits = DEFAULT_LIMITS) -> Any:
    """Parse a JSON arguments text under ``limits``.

    Args:
        text: The JSON text (str or UTF-8 bytes).
        limits: The caps to apply.

    Returns:
        The parsed value (a tool's arguments are expected to be an object; the caller checks).

    Raises:
        ArgumentsParseError: The text is too large, too deep, malformed, not valid Unicode, or
            holds a duplicate key, a non-finite number or an over-long integer.
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
        raise _too_big(limits)
    _check_depth(text, limits.max_depth)
    fast = _parse_fast(text, limits)
    if fast is not _MISS:
        return fast
    max_digits = limits.max_int_digits

    def _int(literal: str) -> int:
        digits = len(literal.lstrip("-"))
        if digits > max_digits:
            raise ArgumentsParseError(
                f"integer with {digits} digits is too long (limit {max_digits})"
            )
        return int(literal)

    try:
        value = json.loads(
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
    check_arguments(value, limits)
    return value
