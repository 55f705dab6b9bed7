"""Importing a file tool's ``handler.py`` and adapting its ``handle`` to a tool function.

A handler is imported from its file under a private module name derived from its path; its
directory is never put on ``sys.path``. The source is compiled afresh at every load (no
``__pycache__`` is read or written), so a handler edited within the same second as the last
load is still picked up by ``Host.reload()``.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from toolpacks.core._context import ToolContext
from toolpacks.filetools._frontmatter import CONTEXT_PARAM

__all__ = [
    "MODULE_PREFIX",
    "AsyncFileHandler",
    "FileHandler",
    "HandlerError",
    "forget_modules",
    "load_handler",
    "module_name",
]

MODULE_PREFIX = "toolpacks_filetool_"
"""The prefix of the ``sys.modules`` names handlers are imported under."""

# What ``Tool`` sees: a ToolContext parameter (injected by annotation) and untyped keyword
# arguments, so it validates the arguments against the TOOL.md schema, like other
# schema-only tools.
_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter(CONTEXT_PARAM, inspect.Parameter.KEYWORD_ONLY, annotation=ToolContext),
        inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD),
    ]
)


class HandlerError(ValueError):
    """``handler.py`` cannot be used; the message says why (without the path)."""


class FileHandler:
    """The function behind a file tool: calls ``handle(arguments, context)``.

    A sync ``handle`` is called by toolpacks in a worker thread, like any sync tool.
    """

    __signature__ = _SIGNATURE

    def __init__(
        self, handle: Callable[..., Any], path: Path, defaults: Mapping[str, Any], name: str
    ) -> None:
        self.handle = handle
        """The handler's ``handle``."""
        self.path = path
        """The ``handler.py`` it came from."""
        self.__name__ = name
        self.__qualname__ = f"filetool:{name}"
        self.__module__ = getattr(handle, "__module__", __name__)
        # Mutable defaults are copied per call, so a handler that changes one cannot change
        # the default of the next call.
        self._mutable_defaults = {
            key: value for key, value in defaults.items() if isinstance(value, list | dict)
        }

    def _arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for key, default in self._mutable_defaults.items():
            if arguments.get(key) is default:
                arguments[key] = copy.deepcopy(default)
        return arguments

    def __call__(self, toolpacks_context: ToolContext, **arguments: Any) -> Any:
        """Call ``handle`` with all the arguments in one dict, and the context."""
        return self.handle(self._arguments(arguments), toolpacks_context)

    def __repr__(self) -> str:
        return f"<file tool handler {str(self.path)!r}>"


class AsyncFileHandler(FileHandler):
    """The function behind a file tool whose ``handle`` is a coroutine function."""

    async def __call__(self, toolpacks_context: ToolContext, **arguments: Any) -> Any:
        """Await ``handle`` with all the arguments in one dict, and the context."""
        return await self.handle(self._arguments(arguments), toolpacks_context)


def module_name(handler: Path) -> str:
    """The private module name of a handler: the prefix and a hash of its real path."""
    digest = hashlib.sha256(str(handler.resolve()).encode("utf-8")).hexdigest()[:16]
    return f"{MODULE_PREFIX}{digest}"


def forget_modules(root: Path) -> None:
    """Drop the handler modules imported from under ``root`` from ``sys.modules``.

    Called before a directory is loaded again, so a removed tool's module does not linger.
    Tools built earlier keep working: they hold their own module's ``handle``.
    """
    for name, module in list(sys.modules.items()):
        if not name.startswith(MODULE_PREFIX):
            continue
        origin = getattr(module, "__file__", None)
        if origin and Path(origin).resolve().is_relative_to(root):
            sys.modules.pop(name, None)


def load_handler(handler: Path, source: bytes | None = None) -> tuple[Callable[..., Any], bool]:
    """Import ``handler`` afresh and return its ``handle`` and whether it is async.

    ``source``, when given, is the file's content already read (and checked) by the caller;
    it is what runs, whatever the file holds by now.

    Raises:
        HandlerError: The file is missing, unreadable or broken, raises while imported, or
            has no usable ``handle``.
    """
    try:
        source = handler.read_bytes() if source is None else source
    except FileNotFoundError:
        raise HandlerError(
            "missing: a tool directory needs a handler.py defining "
            "`def handle(arguments: dict, context: ToolContext)`"
        ) from None
    except OSError as exc:
        raise HandlerError(f"cannot be read ({exc.strerror or exc})") from None
    try:
        code = compile(source, str(handler), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise HandlerError(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # null bytes in the source
        raise HandlerError(f"cannot be compiled ({exc})") from None
    name = module_name(handler)
    spec = importlib.util.spec_from_file_location(name, handler)
    if spec is None:  # pragma: no cover - only for paths without a usable suffix
        raise HandlerError("cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise HandlerError(f"raised {type(exc).__qualname__} while being imported: {exc}") from None
    return _handle_of(module.__dict__)


def _handle_of(namespace: Mapping[str, Any]) -> tuple[Callable[..., Any], bool]:
    if "handle" not in namespace:
        raise HandlerError(
            "defines no `handle`; add `def handle(arguments: dict, context: ToolContext)` "
            "(or `async def handle(...)`)"
        )
    handle = namespace["handle"]
    if not callable(handle) or inspect.isclass(handle):
        raise HandlerError(
            f"`handle` is {type(handle).__name__ if not inspect.isclass(handle) else 'a class'}, "
            "not a function; define `def handle(arguments: dict, context: ToolContext)`"
        )
    target = handle if inspect.isroutine(handle) else type(handle).__call__
    if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
        raise HandlerError(
            "`handle` is a generator; file tools return one value (use `return`, not `yield`)"
        )
    try:
        inspect.signature(handle).bind(None, None)
    except TypeError:
        raise HandlerError(
            f"`handle{inspect.signature(handle)}` cannot be called as handle(arguments, "
            "context); give it exactly those two parameters"
        ) from None
    except ValueError:  # no signature to check (some builtins)
        pass
    return handle, inspect.iscoroutinefunction(handle) or inspect.iscoroutinefunction(target)
