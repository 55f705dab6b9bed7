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

    from toolpacks.core._channel import CallHandlers, ChannelError, Elicitation, Sample
    from toolpacks.core._content import Audio, EmbeddedResource, Image, ResourceLink
    from toolpacks.core._context import ToolContext
    from toolpacks.core._jsonargs import ArgumentLimits
    from toolpacks.core._principal import Principal
    from toolpacks.core._registry import Registry
    from toolpacks.core._result import ArgumentError, ToolErrorInfo, ToolResult
    from toolpacks.core._tool import Tool, tool
    from toolpacks.core._toolbox import Toolbox
    from toolpacks.core.call._generators import InvalidArgumentsError
    from toolpacks.core.call._options import CallOptions
    from toolpacks.core.define._definition import ToolMetadata
    from toolpacks.core.define._traits import ToolHints
    from toolpacks.core.prompts._prompt import Prompt, PromptArgument, PromptMessage, prompt
    from toolpacks.core.prompts._resource import Resource, resource
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
    from toolpacks.export import ExportWarning, ToolCall, parse_tool_calls, render_result
    from toolpacks.hookspecs import hookimpl, hookspec, tagged
    from toolpacks.host._approval import ApprovalRequest
    from toolpacks.host._host import Host, PackInfo
    from toolpacks.host._toolset import Toolset
    from toolpacks.host.search._index import SearchHit

__all__ = [
    "ApprovalRequest",
    "ArgumentError",
    "ArgumentLimits",
    "Audio",
    "CallHandlers",
    "CallOptions",
    "ChannelError",
    "ConfigError",
    "Elicitation",
    "EmbeddedResource",
    "ExportError",
    "ExportWarning",
    "Host",
    "Image",
    "InvalidArgumentsError",
    "PackError",
    "PackInfo",
    "Principal",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Registry",
    "Resource",
    "ResourceLink",
    "Sample",
    "SearchHit",
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
    "prompt",
    "render_result",
    "resource",
    "tagged",
    "tool",
]

_LOCATIONS = {
    "ApprovalRequest": "toolpacks.host._approval",
    "ExportWarning": "toolpacks.export",
    "ToolCall": "toolpacks.export",
    "parse_tool_calls": "toolpacks.export",
    "render_result": "toolpacks.export",
    "ArgumentError": "toolpacks.core._result",
    "ArgumentLimits": "toolpacks.core._jsonargs",
    "CallHandlers": "toolpacks.core._channel",
    "ChannelError": "toolpacks.core._channel",
    "Elicitation": "toolpacks.core._channel",
    "Sample": "toolpacks.core._channel",
    "Audio": "toolpacks.core._content",
    "EmbeddedResource": "toolpacks.core._content",
    "Image": "toolpacks.core._content",
    "ResourceLink": "toolpacks.core._content",
    "CallOptions": "toolpacks.core.call._options",
    "ConfigError": "toolpacks.exceptions",
    "ExportError": "toolpacks.exceptions",
    "Host": "toolpacks.host._host",
    "InvalidArgumentsError": "toolpacks.core.call._generators",
    "PackError": "toolpacks.exceptions",
    "PackInfo": "toolpacks.host._host",
    "Principal": "toolpacks.core._principal",
    "Prompt": "toolpacks.core.prompts._prompt",
    "PromptArgument": "toolpacks.core.prompts._prompt",
    "PromptMessage": "toolpacks.core.prompts._prompt",
    "prompt": "toolpacks.core.prompts._prompt",
    "Resource": "toolpacks.core.prompts._resource",
    "resource": "toolpacks.core.prompts._resource",
    "Registry": "toolpacks.core._registry",
    "SearchHit": "toolpacks.host.search._index",
    "Tool": "toolpacks.core._tool",
    "ToolConflictError": "toolpacks.exceptions",
    "ToolContext": "toolpacks.core._context",
    "ToolDefinitionError": "toolpacks.exceptions",
    "ToolError": "toolpacks.exceptions",
    "ToolErrorInfo": "toolpacks.core._result",
    "ToolHints": "toolpacks.core.define._traits",
    "ToolMetadata": "toolpacks.core.define._definition",
    "ToolNotFoundError": "toolpacks.exceptions",
    "ToolPermissionError": "toolpacks.exceptions",
    "ToolResult": "toolpacks.core._result",
    "Toolbox": "toolpacks.core._toolbox",
    "ToolpacksError": "toolpacks.exceptions",
    "Toolset": "toolpacks.host._toolset",
    "UntrustedConfigError": "toolpacks.exceptions",
    "WrongRunMethodError": "toolpacks.exceptions",
    "hookimpl": "toolpacks.hookspecs",
    "hookspec": "toolpacks.hookspecs",
    "tagged": "toolpacks.hookspecs",
    "tool": "toolpacks.core._tool",
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
