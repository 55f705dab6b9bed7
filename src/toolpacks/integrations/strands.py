"""A toolset as Strands Agents tools: ``as_tools(toolset)``.

Each tool of the toolset becomes a strands ``AgentTool`` named as the model sees it, whose
``tool_spec`` carries the toolset's JSON Schema (and output schema, and behaviour hints as
MCP-style ``annotations``), so an ``Agent(tools=as_tools(toolset))`` offers it to its model
unchanged. Every call goes through ``Toolset.call``, so the gate, permissions, approvals,
hooks, timeouts and pinning apply:

- the strands ``toolUseId`` becomes the toolpacks call id, and the agent's
  ``invocation_state`` is the ``ToolContext.invocation_state`` a tool receives;
- the result is a strands ``ToolResult`` shaped as Bedrock's ``toolResult`` (strands' own
  model): ``status`` ``"success"`` or ``"error"``; a structured value (a JSON object) as a
  ``{"json": ...}`` content block, anything else, and every error, as ``{"text": ...}`` with
  the text toolpacks renders. Bad arguments, a denied call or a failing tool are error
  results whose text tells the model what to fix; nothing is raised into the agent loop.

Approvals use the toolset's approval handler (strands' interrupts are not used).

strands-agents pins ``mcp<2.2``, while ``toolpacks[mcp]`` needs ``mcp>=2.3``: install
``toolpacks[strands]`` without the ``mcp`` extra (MCP servers as packs then need another
environment). strands is imported when ``as_tools`` is first called.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any

from toolpacks.integrations._common import framework_missing

if TYPE_CHECKING:
    from toolpacks.host._toolset import Toolset

__all__ = ["TOOL_TYPE", "as_tools"]

TOOL_TYPE = "toolpacks"
"""The ``tool_type`` of every tool ``as_tools`` makes."""

_HINTS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


def as_tools(toolset: Toolset) -> list[Any]:
    """The toolset's tools as strands ``AgentTool`` objects, sorted by name.

    Args:
        toolset: The toolset (``Host.toolset(...)`` or ``Toolset([...])``).

    Returns:
        One ``strands.types.tools.AgentTool`` per tool, for ``Agent(tools=[...])``.

    Raises:
        ImportError: strands-agents is not installed (``pip install 'toolpacks[strands]'``).
    """
    cls = _tool_class()
    return [cls(toolset, definition) for definition in toolset.definitions("neutral", defer=False)]


def tool_spec(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A strands ``ToolSpec`` from a neutral definition (``Toolset.definitions("neutral")``).

    ``name``, ``description``, ``inputSchema`` (``{"json": schema}``), and when known
    ``outputSchema`` and the behaviour hints as ``annotations`` (``readOnlyHint``, ...).
    """
    spec: dict[str, Any] = {
        "name": definition["name"],
        "description": definition["description"],
        "inputSchema": {"json": definition["input_schema"]},
    }
    if definition.get("output_schema") is not None:
        spec["outputSchema"] = {"json": definition["output_schema"]}
    hints = definition.get("hints") or {}
    annotations = {_HINTS[k]: v for k, v in hints.items() if k in _HINTS and v is not None}
    if annotations:
        spec["annotations"] = annotations
    return spec


@functools.cache
def _tool_class() -> Any:
    """The ``AgentTool`` subclass, defined on first use so strands loads only then."""
    try:
        from strands.types.tools import AgentTool  # type: ignore[import-not-found]
    except ImportError as exc:
        raise framework_missing("strands-agents", "strands", exc) from exc
    from toolpacks.core._context import ToolContext
    from toolpacks.export import render_result

    class ToolpacksAgentTool(AgentTool):  # type: ignore[misc]  # strands is untyped here
        """A tool of a toolpacks ``Toolset``, called through ``Toolset.call``."""

        def __init__(self, toolset: Toolset, definition: Mapping[str, Any]) -> None:
            super().__init__()
            self._toolset = toolset
            self._name: str = definition["name"]
            self._spec = tool_spec(definition)

        @property
        def tool_name(self) -> str:
            """The name the model sees."""
            return self._name

        @property
        def tool_spec(self) -> dict[str, Any]:
            """Name, description, input schema (and output schema, hints)."""
            return self._spec

        @property
        def tool_type(self) -> str:
            """``"toolpacks"``."""
            return TOOL_TYPE

        async def stream(
            self, tool_use: Mapping[str, Any], invocation_state: dict[str, Any], **kwargs: Any
        ) -> AsyncGenerator[Any, None]:
            """Run the call through ``Toolset.call``; yield the strands ``ToolResult``."""
            call_id = str(tool_use.get("toolUseId") or "")
            context = ToolContext(call_id=call_id, invocation_state=invocation_state)
            result = await self._toolset.call(self._name, tool_use.get("input"), context)
            block = render_result(result, "bedrock")["toolResult"]
            yield {"toolUseId": call_id, "status": block["status"], "content": block["content"]}

    return ToolpacksAgentTool
