"""A toolpacks ``Toolset`` as openai-agents tools: ``Agent(tools=as_tools(ts))``.

Each tool is a ``FunctionTool`` whose ``on_invoke_tool(ctx, json_text)`` calls
``Toolset.call`` with the model's arguments text as sent and the provider's call id
(``ctx.tool_call_id``) as the call id, so the gate, permissions, approvals, hooks, timeouts
and pinning apply and hooks see the id the model used. Following the SDK's conventions for
function tools:

- the model gets the result's text: toolpacks' own error message when the call failed (not
  the SDK's generic "An error occurred while running the tool"), and a structured value as
  compact JSON text;
- schemas are toolpacks' OpenAI strict export (``strict=True`` by default, as the SDK's
  ``function_tool``); a tool that cannot be strict is handled as the export handles it
  (``strict=True`` raises ``ExportError`` naming it; ``strict="best_effort"`` exports it
  non-strict with a warning);
- a tool that requires approval, in a toolset with no approval handler, gets
  ``needs_approval=True``: the run stops for ``RunState.approve()``/``reject()``, and an
  approved call runs. A handler set on the toolset decides instead.

Requires the ``openai-agents`` extra: ``pip install 'toolpacks[openai-agents]'``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from toolpacks.host._toolset import Toolset
from toolpacks.integrations._common import call, framework_missing

try:
    from agents import FunctionTool
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - tested in a subprocess without the framework
    raise framework_missing("openai-agents", "openai-agents", exc) from exc

__all__ = ["as_tools"]

Invoke = Callable[[ToolContext[Any], str], Awaitable[str]]


def _invoker(toolset: Toolset, name: str, approved: bool) -> Invoke:
    async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> str:
        outcome = await call(toolset, name, arguments, call_id=ctx.tool_call_id, approved=approved)
        return outcome.result.content

    on_invoke_tool.__qualname__ = on_invoke_tool.__name__ = f"toolpacks_{name}"
    return on_invoke_tool


def as_tools(
    toolset: Toolset, *, strict: bool | Literal["best_effort"] = True
) -> list[FunctionTool]:
    """The tools of ``toolset`` as openai-agents ``FunctionTool``s, in the toolset's order.

    Args:
        toolset: A toolpacks toolset (``Host().toolset("agent")``, ``Toolset([...])``).
        strict: ``True`` (strict schemas; a tool that cannot be strict is an
            ``ExportError``), ``False`` (schemas as they are) or ``"best_effort"`` (strict
            where possible).

    Returns:
        One ``FunctionTool`` per tool, for ``Agent(tools=[...])``.

    Raises:
        TypeError: ``toolset`` is not a toolpacks ``Toolset``.
        ExportError: ``strict`` is not one of the three values, or (with ``True``) a tool
            cannot be strict; the message names the tool and the reason.

    Example:
        >>> from toolpacks import Toolset, tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> [(t.name, t.strict_json_schema) for t in as_tools(Toolset([add]))]
        [('add', True)]
    """
    if not isinstance(toolset, Toolset):
        raise TypeError(
            f"as_tools() takes a toolpacks Toolset, got {type(toolset).__name__}; "
            "build one with Host().toolset(...) or Toolset([...])"
        )
    definitions = toolset.definitions("openai-responses", strict=strict)
    no_handler = toolset.approver.handler is None
    tools: list[FunctionTool] = []
    for entry, spec in zip(toolset.entries(), definitions, strict=True):
        # The SDK asks its user before it invokes such a tool, so an invocation is approved.
        sdk_approves = no_handler and entry.require_approval
        tools.append(
            FunctionTool(
                name=spec["name"],
                description=spec.get("description", ""),
                params_json_schema=spec["parameters"],
                on_invoke_tool=_invoker(toolset, entry.exposed, approved=sdk_approves),
                strict_json_schema=bool(spec["strict"]),
                needs_approval=sdk_approves,
            )
        )
    return tools
