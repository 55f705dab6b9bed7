"""toolpacks: a plugin-based tool registry for AI agents.

Importing the package is cheap: each public name is imported from its module on first use,
so ``toolpacks list`` and ``toolpacks --version`` never import pydantic or any pack.
"""

from __future__ import annotations

import importlib

from toolpacks._version import __version__

# Not `from typing import TYPE_CHECKING`: importing typing costs `toolpacks list` ~10 ms.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from toolpacks._approval import ApprovalRequest
    from toolpacks._context import ToolContext
    from toolpacks._export import ExportWarning, ToolCall, parse_tool_calls, render_result
    from toolpacks._host import Host, PackInfo
    from toolpacks._invoke import CallOptions, InvalidArgumentsError
    from toolpacks._jsonargs import ArgumentLimits
    from toolpacks._registry import Registry
    from toolpacks._result import ArgumentError, ToolErrorInfo, ToolResult
    from toolpacks._tool import Tool, ToolHints, ToolMetadata, tool
    from toolpacks._toolbox import Toolbox
    from toolpacks._toolset import Toolset
    from toolpacks.exceptions import (
        ConfigError,
        ExportError,
        PackError,
        ToolConflictError,
        ToolDefinitionError,
        ToolError,
        ToolNotFoundError,
        ToolpacksError,
        ToolPermissionError,
        UntrustedConfigError,
        WrongRunMethodError,
    )
    from toolpacks.hookspecs import hookimpl, hookspec, tagged

__all__ = [
    "ApprovalRequest",
    "ArgumentError",
    "ArgumentLimits",
    "CallOptions",
    "ConfigError",
    "ExportError",
    "ExportWarning",
    "Host",
    "InvalidArgumentsError",
    "PackError",
    "PackInfo",
    "Registry",
    "Tool",
    "ToolCall",
    "ToolConflictError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolErrorInfo",
    "ToolHints",
    "ToolMetadata",
    "ToolNotFoundError",
    "ToolPermissionError",
    "ToolResult",
    "Toolbox",
    "ToolpacksError",
    "Toolset",
    "UntrustedConfigError",
    "WrongRunMethodError",
    "__version__",
    "hookimpl",
    "hookspec",
    "parse_tool_calls",
    "render_result",
    "tagged",
    "tool",
]

_LOCATIONS = {
    "ApprovalRequest": "toolpacks._approval",
    "ExportWarning": "toolpacks._export",
    "ToolCall": "toolpacks._export",
    "parse_tool_calls": "toolpacks._export",
    "render_result": "toolpacks._export",
    "ArgumentError": "toolpacks._result",
    "ArgumentLimits": "toolpacks._jsonargs",
    "CallOptions": "toolpacks._invoke",
    "ConfigError": "toolpacks.exceptions",
    "ExportError": "toolpacks.exceptions",
    "Host": "toolpacks._host",
    "InvalidArgumentsError": "toolpacks._invoke",
    "PackError": "toolpacks.exceptions",
    "PackInfo": "toolpacks._host",
    "Registry": "toolpacks._registry",
    "Tool": "toolpacks._tool",
    "ToolConflictError": "toolpacks.exceptions",
    "ToolContext": "toolpacks._context",
    "ToolDefinitionError": "toolpacks.exceptions",
    "ToolError": "toolpacks.exceptions",
    "ToolErrorInfo": "toolpacks._result",
    "ToolHints": "toolpacks._tool",
    "ToolMetadata": "toolpacks._tool",
    "ToolNotFoundError": "toolpacks.exceptions",
    "ToolPermissionError": "toolpacks.exceptions",
    "ToolResult": "toolpacks._result",
    "Toolbox": "toolpacks._toolbox",
    "ToolpacksError": "toolpacks.exceptions",
    "Toolset": "toolpacks._toolset",
    "UntrustedConfigError": "toolpacks.exceptions",
    "WrongRunMethodError": "toolpacks.exceptions",
    "hookimpl": "toolpacks.hookspecs",
    "hookspec": "toolpacks.hookspecs",
    "tagged": "toolpacks.hookspecs",
    "tool": "toolpacks._tool",
}


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolpacks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
