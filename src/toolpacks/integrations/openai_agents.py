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
- approvals, in a toolset with no approval handler, are the SDK's: a tool that requires
  approval, or any tool when the toolset has ``authorize`` hooks, gets an async
  ``needs_approval`` that asks toolpacks, per call, whether it will ask (the tool requires
  approval, or a hook answers "ask"; the hooks are asked here, once per call). The run then
  stops with an interruption for ``RunState.approve()``/``reject()``: an approved call runs
  once, without being asked about again; a rejected one never runs. A handler set on the
  toolset decides instead, and the SDK asks nothing.

Requires the ``openai-agents`` extra: ``pip install 'toolpacks[openai-agents]'``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from toolpacks.host._toolset import Toolset
from toolpacks.integrations._common import (
    Verdicts,
    call,
    framework_missing,
    may_ask,
    principal_context,
    probe,
)

try:
    from agents import FunctionTool, RunContextWrapper
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - tested in a subprocess without the framework
    raise framework_missing("openai-agents", "openai-agents", exc) from exc

__all__ = ["as_tools"]

Invoke = Callable[[ToolContext[Any], str], Awaitable[str]]
NeedsApproval = Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]]


def _invoker(toolset: Toolset, name: str, verdicts: Verdicts | None) -> Invoke:
    async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> str:
        call_id = ctx.tool_call_id
        context = principal_context(ctx.context, call_id)  # the run's context: its principal
        verdict = verdicts.pop(call_id) if verdicts is not None else None
        if verdict is None:  # no pause was asked for (or it was, in another process)
            approved = verdicts is not None and ctx.is_tool_approved(name, call_id) is True
            outcome = await call(
                toolset, name, arguments, call_id=call_id, approved=approved, context=context
            )
        else:  # the SDK invokes a call it paused for only once its user approved it
            outcome = await call(
                toolset,
                name,
                arguments,
                call_id=call_id,
                approved=True,
                answer=verdict.answer,
                context=context,
            )
        return outcome.result.content

    on_invoke_tool.__qualname__ = on_invoke_tool.__name__ = f"toolpacks_{name}"
    return on_invoke_tool


def _needs_approval(toolset: Toolset, name: str, verdicts: Verdicts) -> NeedsApproval:
    async def needs_approval(
        ctx: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str
    ) -> bool:
        verdict = await probe(toolset, name, arguments, call_id=call_id)
        if verdict is None:  # the call fails before any approval: it runs to say so
            return False
        verdicts.put(call_id, verdict)
        return verdict.ask

    needs_approval.__qualname__ = needs_approval.__name__ = f"toolpacks_{name}_needs_approval"
    return needs_approval


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
    definitions = toolset.definitions("openai-responses", strict=strict, defer=False)
    no_handler = toolset.approver.handler is None
    tools: list[FunctionTool] = []
    for entry, spec in zip(toolset.entries(), definitions, strict=True):
        name = entry.exposed
        # Without a handler, the SDK asks its user whenever toolpacks would ask.
        verdicts = Verdicts() if no_handler and may_ask(toolset, name) else None
        tools.append(
            FunctionTool(
                name=spec["name"],
                description=spec.get("description", ""),
                params_json_schema=spec["parameters"],
                on_invoke_tool=_invoker(toolset, name, verdicts),
                strict_json_schema=bool(spec["strict"]),
                needs_approval=False
                if verdicts is None
                else _needs_approval(toolset, name, verdicts),
            )
        )
    from toolpacks.integrations._search import search_toolset

    searching = search_toolset(toolset)  # deferred tools: a search_tools tool finds them
    return tools if searching is None else [*tools, *as_tools(searching, strict=strict)]
