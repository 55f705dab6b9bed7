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

Approvals: the toolset's approval handler decides, when it has one. Without one, a call
toolpacks would ask about is refused, unless the agent has :func:`approval_hooks`: then the
run stops with a strands interrupt exactly for the calls toolpacks would ask about (the tool
requires approval, or an ``authorize`` hook answers "ask"; the hooks are asked once per call),
a call the person approves runs once and toolpacks does not ask about it again, and a
rejected call, like a call a hook denies, is cancelled: it never runs.

strands-agents pins ``mcp<2.2``, while ``toolpacks[mcp]`` needs ``mcp>=2.3``: install
``toolpacks[strands]`` without the ``mcp`` extra (MCP servers as packs then need another
environment). strands is imported when ``as_tools`` is first called.
"""

from __future__ import annotations

import copy
import functools
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from toolpacks.integrations._common import Verdict, call, framework_missing, may_ask, probe

if TYPE_CHECKING:
    from toolpacks.host._toolset import Toolset

__all__ = ["APPROVAL_INTERRUPT", "TOOL_TYPE", "ApprovalHooks", "approval_hooks", "as_tools"]

APPROVAL_INTERRUPT = "toolpacks-approval"
"""The name of the strands interrupt :func:`approval_hooks` raises for a call to approve."""

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
        One ``strands.types.tools.AgentTool`` per tool, for ``Agent(tools=[...])``. strands
        sends every tool it is given, so deferred tools are among them (callable by name),
        and a toolset with deferred tools adds ``search_tools``, whose result carries the
        found tools' definitions.

    Raises:
        ImportError: strands-agents is not installed (``pip install 'toolpacks[strands]'``).
    """
    cls = _tool_class()
    made = [cls(toolset, definition) for definition in toolset.definitions("neutral", defer=False)]
    from toolpacks.integrations._search import search_toolset

    searching = search_toolset(toolset)  # deferred tools: a search_tools tool finds them
    return made if searching is None else [*made, *as_tools(searching)]


def approval_hooks(toolset: Toolset) -> ApprovalHooks:
    """Strands hooks that put the calls toolpacks would ask about to a person.

    ``Agent(tools=as_tools(toolset), hooks=[approval_hooks(toolset)])``: before each call of
    one of the toolset's tools, toolpacks is asked what it will decide (the ``authorize``
    hooks are asked here, once per call; no tool code runs):

    - a call a hook denies is cancelled (``cancel_tool``) with toolpacks' refusal text;
    - a call toolpacks would ask about (the tool requires approval, or a hook answers "ask")
      stops the run: ``result.stop_reason == "interrupt"``, with one interrupt named
      :data:`APPROVAL_INTERRUPT` per call, whose ``reason`` is ``{"tool", "call_id",
      "arguments", "reason"}``;
    - resuming the agent with ``{"interruptResponse": {"interruptId": ..., "response": r}}``
      runs the call once, approved for toolpacks, when ``r`` is ``True`` or ``"approve"``;
      any other response rejects it: it is cancelled with toolpacks' "not approved" text and
      never runs.

    A toolset with an approval handler is left to its handler: these hooks do nothing.

    Args:
        toolset: The toolset whose tools (from :func:`as_tools`) the agent uses.

    Returns:
        A strands ``HookProvider`` for ``Agent(hooks=[...])``.
    """
    return ApprovalHooks(toolset)


class _Review(NamedTuple):
    """What :func:`approval_hooks` decided about one call, for the tool to act on."""

    verdict: Verdict
    arguments: Any
    """The arguments reviewed: a call made with other arguments is not this one."""
    approved: bool


class _Reviews:
    """The reviews of one toolset's calls by call id, until each call runs (bounded)."""

    def __init__(self, limit: int = 4096) -> None:
        self._reviews: OrderedDict[str, _Review] = OrderedDict()
        self._limit = limit

    def put(self, call_id: str, review: _Review) -> None:
        self._reviews[call_id] = review
        self._reviews.move_to_end(call_id)
        while len(self._reviews) > self._limit:
            self._reviews.popitem(last=False)

    def get(self, call_id: str) -> _Review | None:
        return self._reviews.get(call_id)

    def pop(self, call_id: str) -> _Review | None:
        return self._reviews.pop(call_id, None)


_reviews: weakref.WeakKeyDictionary[Toolset, _Reviews] = weakref.WeakKeyDictionary()
"""Per toolset: the calls :func:`approval_hooks` reviewed and the tools have not run yet."""


class ApprovalHooks:
    """The strands ``HookProvider`` :func:`approval_hooks` returns (one toolset's calls)."""

    def __init__(self, toolset: Toolset) -> None:
        self.toolset = toolset

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        """Review each call before it runs (strands' ``BeforeToolCallEvent``)."""
        from strands.hooks import BeforeToolCallEvent  # type: ignore[import-not-found]

        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)

    async def before_tool_call(self, event: Any) -> None:
        """Cancel a denied call, interrupt for one to approve, mark an approved one."""
        toolset = self.toolset
        tool = event.selected_tool
        ours = getattr(tool, "tool_type", None) == TOOL_TYPE and tool.toolset is toolset
        if not ours or toolset.approver.handler is not None:
            return  # another tool, or the toolset's handler decides in the call
        name: str = tool.tool_name
        call_id = str(event.tool_use.get("toolUseId") or "")
        arguments = event.tool_use.get("input")
        if not call_id or not may_ask(toolset, name):
            return  # the call decides alone (a call needing approval is refused)
        reviews = _reviews.setdefault(toolset, _Reviews())
        review = reviews.get(call_id)
        if review is None or review.arguments != arguments:  # asked again on resume: kept
            verdict = await probe(toolset, name, arguments, call_id=call_id)
            if verdict is None:
                return  # fails before any approval: the call runs to say so
            review = _Review(verdict, copy.deepcopy(arguments), approved=False)
            reviews.put(call_id, review)
        verdict = review.verdict
        if verdict.ask:
            reviews.put(call_id, review._replace(approved=False))  # approved by this answer only
            reason = "an authorize hook asked for approval" if verdict.answer == "ask" else None
            response = event.interrupt(  # raises, to stop the run, until a person answers
                APPROVAL_INTERRUPT,
                reason={
                    "tool": name,
                    "call_id": call_id,
                    "arguments": arguments,
                    "reason": reason or "the tool requires approval",
                },
            )
            if response is True or (type(response) is str and response == "approve"):
                reviews.put(call_id, review._replace(approved=True))
                return
        elif verdict.answer in (None, "allow"):
            return  # runs now; the tool gives the hooks' answer to toolpacks
        # Denied by a hook, or rejected by the person: toolpacks refuses it (no tool code
        # runs), and strands cancels it with toolpacks' text.
        reviews.pop(call_id)
        refused = await call(toolset, name, arguments, call_id=call_id, answer=verdict.answer)
        event.cancel_tool = refused.result.content


def _take_review(toolset: Toolset, call_id: str, arguments: Any) -> _Review | None:
    """The review of the call about to run, forgotten now; None if there is none for it."""
    reviews = _reviews.get(toolset)
    review = reviews.pop(call_id) if reviews is not None and call_id else None
    if review is None or review.arguments != arguments:
        return None  # changed after review (by another hook): it is reviewed in the call
    return review


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
        def toolset(self) -> Toolset:
            """The toolset whose tool this is."""
            return self._toolset

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
            arguments = tool_use.get("input")
            context = ToolContext(call_id=call_id, invocation_state=invocation_state)
            review = _take_review(self._toolset, call_id, arguments)
            if review is None:
                result = await self._toolset.call(self._name, arguments, context)
            else:  # reviewed by approval_hooks: its answers stand, hooks are not asked again
                outcome = await call(
                    self._toolset,
                    self._name,
                    arguments,
                    call_id=call_id,
                    approved=review.approved,
                    answer=review.verdict.answer,
                    context=context,
                )
                result = outcome.result
            block = render_result(result, "bedrock")["toolResult"]
            yield {"toolUseId": call_id, "status": block["status"], "content": block["content"]}

    return ToolpacksAgentTool
