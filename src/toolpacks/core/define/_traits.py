"""What a tool declares besides its schema: behaviour hints, its lock, its kind, its name.

Small values and checks used when a tool is defined (``ToolDefinition``) and by the layers
that read definitions (file tools, remote MCP tools, exports).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolpacks.exceptions import ToolDefinitionError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "NAME_PATTERN",
    "Kind",
    "MissingDocstringWarning",
    "ToolHints",
    "ToolLock",
    "check_name",
    "is_typed",
    "kind_of",
    "user_stacklevel",
]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")

Kind = Literal["function", "coroutine", "generator", "async_generator"]


class MissingDocstringWarning(UserWarning):
    """A tool was defined from a function without a docstring."""


@dataclass(frozen=True, slots=True)
class ToolHints:
    """Behaviour hints a tool declares (exported as MCP tool annotations).

    ``None`` means "not stated"; clients then assume the protocol's defaults.
    """

    read_only: bool | None = None
    """The tool does not modify its environment."""
    destructive: bool | None = None
    """The tool may perform destructive updates."""
    idempotent: bool | None = None
    """Calling it again with the same arguments has no further effect."""
    open_world: bool | None = None
    """It interacts with an open world of external entities (the web, other services)."""


class ToolLock:
    """Serializes the runs of one tool (``lock=True``), per event loop."""

    __slots__ = ("_locks",)

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> asyncio.Lock:
        """The lock for the running event loop."""
        import asyncio  # imported at the first call of a locked tool, not with toolpacks

        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock


def kind_of(fn: Callable[..., Any]) -> Kind:
    # Functions, methods and partials are inspected themselves (``inspect`` unwraps
    # partials); other callables by their ``__call__``.
    target: Any = fn
    if not (inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, functools.partial)):
        target = type(fn).__call__
    if inspect.isasyncgenfunction(target):
        return "async_generator"
    if inspect.isgeneratorfunction(target):
        return "generator"
    if inspect.iscoroutinefunction(target):
        return "coroutine"
    return "function"


def check_name(name: object, label: str) -> str:
    if not isinstance(name, str):
        raise ToolDefinitionError(f"tool {label!r}: name must be a str, got {type(name).__name__}")
    if not NAME_PATTERN.match(name):
        raise ToolDefinitionError(
            f"tool {label!r}: name {name!r} is not a valid tool name; use 1-64 letters, digits, "
            "'_' or '-' (not starting with '-')"
        )
    return name


# The toolpacks package (this file is toolpacks/core/define/_traits.py): frames inside it are
# not the user's.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def user_stacklevel() -> int:
    """The ``warnings`` stacklevel of the nearest frame outside toolpacks: the definition."""
    frame = sys._getframe(2)  # the frame calling warnings.warn is level 1
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def is_typed(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return sig.return_annotation is not inspect.Signature.empty and all(
        p.annotation is not inspect.Parameter.empty or p.name in ("self", "cls")
        for p in sig.parameters.values()
    )
