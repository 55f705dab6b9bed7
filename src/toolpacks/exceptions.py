"""Every error toolpacks raises, under one base class.

The hierarchy::

    ToolpacksError
    ├── ToolDefinitionError      (ValueError)   a tool is defined wrongly; raised at decoration
    ├── ToolConflictError        (ValueError)   two tools claim one name
    ├── ToolNotFoundError        (LookupError)  no tool has that name
    ├── WrongRunMethodError      (TypeError)    ``stream()`` of a non-generator tool
    ├── ToolError                               raised on purpose by a tool; its message reaches
    │                                           the model unchanged
    ├── ConfigError              (ValueError)   a configuration file or mapping is invalid
    ├── PackError                               a pack failed to load or register
    ├── ExportError              (ValueError)   a tool cannot be exported to a format
    └── ToolPermissionError      (PermissionError)
        └── UntrustedConfigError               an implicitly found configuration is not trusted

Leaves also subclass the built-in exception they mean, so existing ``except ValueError`` or
``except LookupError`` clauses keep working.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ExportError",
    "PackError",
    "ToolConflictError",
    "ToolDefinitionError",
    "ToolError",
    "ToolNotFoundError",
    "ToolPermissionError",
    "ToolpacksError",
    "UntrustedConfigError",
    "WrongRunMethodError",
]


class ToolpacksError(Exception):
    """Base class of every exception raised by toolpacks."""


class ToolDefinitionError(ToolpacksError, ValueError):
    """A tool is defined wrongly: raised when it is decorated or built, never at call time.

    The message names the function, the parameter at fault and how to fix it.
    """


class ToolConflictError(ToolpacksError, ValueError):
    """Two tools claim the same name in a registry or toolset."""


class ToolNotFoundError(ToolpacksError, LookupError):
    """No tool has the requested name."""

    def __init__(self, message: str, *, name: str = "", available: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.name = name
        """The name that was asked for."""
        self.available = available
        """The names that do exist, sorted."""


class WrongRunMethodError(ToolpacksError, TypeError):
    """A tool was run with a method that does not fit it (``stream()`` of a non-generator)."""


class ToolError(ToolpacksError):
    """Raised on purpose inside a tool to report a failure to the model.

    Unlike any other exception, its message is passed to the model unchanged, even when
    error details are masked.
    """


class ConfigError(ToolpacksError, ValueError):
    """A configuration file or mapping is invalid; the message names the source and the key."""


class PackError(ToolpacksError):
    """A tool pack failed to import, register its tools, or start."""


class ExportError(ToolpacksError, ValueError):
    """A tool cannot be exported to the requested provider format."""


class ToolPermissionError(ToolpacksError, PermissionError):
    """An agent may not see or call a tool."""


class UntrustedConfigError(ToolPermissionError):
    """An implicitly found configuration asked to run code before it was trusted."""
