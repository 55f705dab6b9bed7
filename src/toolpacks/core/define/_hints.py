"""Resolving a tool function's type hints, string annotations of local types included."""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

from toolpacks.exceptions import ToolDefinitionError

__all__ = ["fn_label", "reason", "type_hints", "unwrap_partial"]


def unwrap_partial(fn: Any) -> Any:
    """The function under any ``functools.partial`` layers (it has the name and docstring)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def reason(exc: BaseException) -> str:
    """The first line of a (pydantic) error message: the reason without the advice."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    # pydantic's advice (allow arbitrary types) does not apply to tool parameters.
    return line.split(". Set `arbitrary_types_allowed", 1)[0]


def fn_label(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolve a callable's annotations (string annotations included), or explain why not."""
    target = unwrap_partial(fn)
    if not (inspect.isfunction(target) or inspect.ismethod(target)) and callable(target):
        target = type(target).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError as exc:
        # String annotations (``from __future__ import annotations``) naming types local to
        # the function that defines the tool: resolve them in that function's frame.
        localns = _defining_locals(target)
        if localns:
            try:
                return typing.get_type_hints(target, localns=localns, include_extras=True)
            except Exception:
                pass
        error: Exception = exc
    except Exception as exc:
        error = exc
    raise ToolDefinitionError(
        f"tool function {fn_label(fn)!r}: cannot resolve its type hints ({error}); "
        "define the types it names at module level or import them"
    ) from error


def _defining_locals(target: Any) -> dict[str, Any]:
    """The local names of the still-running frames enclosing ``target``'s definition."""
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None:
        return {}
    frame: types.FrameType | None = sys._getframe(1)
    depth = 0
    while frame is not None and depth < 64:
        if code in frame.f_code.co_consts:
            merged: dict[str, Any] = {}
            outer: types.FrameType | None = frame
            while outer is not None:
                for key, value in outer.f_locals.items():
                    merged.setdefault(key, value)
                outer = outer.f_back
                if outer is not None and outer.f_code.co_name == "<module>":
                    break
            return merged
        frame = frame.f_back
        depth += 1
    return {}
