"""A toolset as langchain-core tools: ``as_tools(toolset)``.

Each tool of the toolset becomes a langchain-core ``BaseTool`` named as the model sees it,
with the toolset's JSON Schema as its ``args_schema`` (langchain-core takes a JSON Schema
``dict``, so no pydantic model is rebuilt and nothing is lost). Every call goes through
``Toolset.call`` (``Toolset.call_sync`` for the synchronous ``invoke``), so the gate,
permissions, approvals, hooks, timeouts and pinning apply; langchain-core itself does not
validate arguments against a ``dict`` schema, toolpacks does.

- ``tool.invoke(...)`` works from plain code, from a worker thread and from synchronous code
  running inside an event loop (the call runs on toolpacks' private loop thread, never
  ``asyncio.run``); ``await tool.ainvoke(...)`` runs on the caller's loop.
- Invoked with a model's ``ToolCall`` (``{"type": "tool_call", "id": ..., "args": ...}``), a
  tool returns a ``ToolMessage``: on success its ``content`` is the text toolpacks renders and
  its ``artifact`` the tool's structured value (``response_format="content_and_artifact"``);
  on failure (bad arguments, a denied call, the tool raised) ``status="error"`` and the
  ``content`` is toolpacks' error text, which tells the model what to fix. The provider's
  call id becomes the toolpacks call id.
- Invoked with a plain ``dict`` of arguments, a tool returns that text (the error text on
  failure, as langchain-core's ``handle_tool_error=True`` does).

Approvals: with no approval handler on the toolset, a call toolpacks would ask about is
denied, unless the agent reviews it with LangChain's human-in-the-loop middleware configured
by :func:`interrupt_on`: ``HumanInTheLoopMiddleware(interrupt_on=interrupt_on(toolset))``
pauses exactly the calls toolpacks would ask about (the tool requires approval, or an
``authorize`` hook answers "ask"; the hooks are asked once per call), and a call the person
approved runs once, approved for toolpacks too. A rejected call never runs.

Install the framework with ``pip install 'toolpacks[langchain]'``; it is imported when
``as_tools`` is first called (the middleware comes with ``langchain``).
"""

from __future__ import annotations

import contextvars
import functools
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from toolpacks.integrations._common import (
    Outcome,
    Verdict,
    Verdicts,
    call,
    framework_missing,
    may_ask,
    model_value,
    principal_context,
    probe,
)

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from toolpacks.core._result import ToolResult
    from toolpacks.host._toolset import Toolset

__all__ = ["as_tools", "interrupt_on"]


class _Reviewed:
    """The verdicts of calls put to the middleware, with the arguments they were made on."""

    def __init__(self) -> None:
        self.verdicts = Verdicts()
        self.arguments: dict[str, Any] = {}

    def put(self, call_id: str, verdict: Verdict, arguments: Any) -> None:
        self.verdicts.put(call_id, verdict)
        self.arguments[call_id] = arguments
        if len(self.arguments) > 2 * 4096:  # keep the arguments of kept verdicts only
            self.arguments = {k: v for k, v in self.arguments.items() if self.verdicts.get(k)}

    def pop(self, call_id: str) -> tuple[Verdict, Any] | None:
        verdict = self.verdicts.pop(call_id)
        arguments = self.arguments.pop(call_id, None)
        return None if verdict is None else (verdict, arguments)


_reviewed: weakref.WeakKeyDictionary[Toolset, _Reviewed] = weakref.WeakKeyDictionary()
"""Per toolset: the calls the middleware reviews, as :func:`interrupt_on` decided them."""

_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolpacks_langchain_call_id", default=None
)
"""The provider's tool-call id of the call being run (langchain passes it to ``run``)."""
_configurable: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "toolpacks_langchain_configurable", default=None
)
"""The ``config["configurable"]`` of the tool run in progress (its ``principal``, if any)."""


def as_tools(toolset: Toolset) -> list[BaseTool]:
    """The toolset's tools as langchain-core tools, sorted by name.

    Args:
        toolset: The toolset (``Host.toolset(...)`` or ``Toolset([...])``).

    Returns:
        One ``BaseTool`` per tool, named as the model sees it; ``invoke`` and ``ainvoke``
        both work, inside and outside a running event loop.

    Raises:
        ImportError: langchain-core is not installed (``pip install 'toolpacks[langchain]'``).

    Example:
        >>> from toolpacks import Toolset, tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> [lc_add] = as_tools(Toolset([add]))
        >>> lc_add.invoke({"a": 1, "b": 2})
        '3'
    """
    cls = _tool_class()
    tools: list[BaseTool] = []
    for definition in toolset.definitions("neutral", defer=False):
        made = cls(
            name=definition["name"],
            description=definition["description"],
            args_schema=definition["input_schema"],
            toolset=toolset,
        )
        tools.append(made)
    from toolpacks.integrations._search import search_toolset

    searching = search_toolset(toolset)  # deferred tools: a search_tools tool finds them
    return tools if searching is None else [*tools, *as_tools(searching)]


def interrupt_on(
    toolset: Toolset,
    *,
    allowed_decisions: Iterable[str] = ("approve", "reject"),
) -> dict[str, Any]:
    """The ``interrupt_on`` of LangChain's ``HumanInTheLoopMiddleware`` for ``toolset``.

    One entry per tool a call of which toolpacks may ask about (it requires approval, or the
    toolset has ``authorize`` hooks), whose ``when`` predicate asks toolpacks about each call:
    the run pauses exactly when toolpacks would ask for approval (not for a call a hook
    allows or denies, nor for invalid arguments, which the tool then reports). A call the
    person approves runs once and toolpacks does not ask about it again; a rejected call
    never runs; an edited call runs approved, after the ``authorize`` hooks have seen its new
    arguments (a hook that denies them still denies it).

    A toolset with an approval handler gets no entry: its handler decides, in the call.

    Args:
        toolset: The toolset whose tools (from :func:`as_tools`) the agent uses.
        allowed_decisions: The decisions the reviewer may make (``"approve"``,
            ``"reject"``, ``"edit"``, ``"respond"``).

    Returns:
        ``{tool name: InterruptOnConfig}`` for
        ``HumanInTheLoopMiddleware(interrupt_on=...)``.

    Example:
        >>> from toolpacks import Toolset, tool
        >>> @tool(require_approval=True)
        ... def delete(path: str) -> str:
        ...     '''Delete a file.'''
        ...     return path
        >>> list(interrupt_on(Toolset([delete])))
        ['delete']
    """
    if toolset.approver.handler is not None:
        return {}
    reviewed = _reviewed.setdefault(toolset, _Reviewed())
    decisions = list(allowed_decisions)
    return {
        name: {"allowed_decisions": decisions, "when": _when(toolset, name, reviewed)}
        for name in toolset.names()
        if may_ask(toolset, name)
    }


def _when(toolset: Toolset, name: str, reviewed: _Reviewed) -> Callable[[Any], bool]:
    """The ``when`` predicate of one tool: whether toolpacks asks about this call."""
    from toolpacks.core.call._sync import run_sync

    def when(request: Any) -> bool:
        tool_call = request.tool_call
        call_id = tool_call.get("id")
        if not call_id:
            return False  # no id to match an approval with: the call itself is refused
        arguments = tool_call.get("args") or {}
        known = reviewed.verdicts.get(call_id)  # asked again on resume: the same answer
        if known is not None and reviewed.arguments.get(call_id) != arguments:
            # The same id with other arguments is another call (a verdict of a rejected
            # call stays behind, since it never reaches the tool): decided anew.
            reviewed.pop(call_id)
            known = None
        if known is None:
            known = run_sync(probe(toolset, name, arguments, call_id=call_id))
            if known is None:
                return False
            reviewed.put(call_id, known, arguments)
        return known.ask

    return when


def _reviewed_call(
    toolset: Toolset, name: str, arguments: Mapping[str, Any], call_id: str | None
) -> Coroutine[Any, Any, Outcome] | None:
    """The ``call`` of a call the middleware reviewed (None when it did not review it)."""
    reviewed = _reviewed.get(toolset)
    found = reviewed.pop(call_id) if reviewed is not None and call_id else None
    if found is None:
        return None
    verdict, sent = found
    # Reaching the tool, a call the middleware paused for was approved (rejected ones end
    # in the middleware). An edited call's hooks are asked again, about the new arguments.
    if sent != arguments:
        return call(toolset, name, arguments, call_id=call_id, approved=verdict.ask)
    return call(
        toolset, name, arguments, call_id=call_id, approved=verdict.ask, answer=verdict.answer
    )


@functools.cache
def _tool_class() -> type[BaseTool]:
    """The ``BaseTool`` subclass, defined on first use so langchain loads only then."""
    try:
        from langchain_core.tools import BaseTool, ToolException
    except ImportError as exc:
        raise framework_missing("langchain-core", "langchain", exc) from exc
    from pydantic import Field

    class ToolpacksTool(BaseTool):
        """A tool of a toolpacks ``Toolset``, called through ``Toolset.call``."""

        response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
        handle_tool_error: Any = True
        toolset: Any = Field(default=None, exclude=True, repr=False)
        """The ``Toolset`` whose tool this is."""

        def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            """Run the tool (langchain's ``invoke`` calls this), keeping the call id."""
            token = _call_id.set(kwargs.get("tool_call_id"))
            held = _configurable.set((kwargs.get("config") or {}).get("configurable"))
            try:
                return super().run(tool_input, *args, **kwargs)
            finally:
                _call_id.reset(token)
                _configurable.reset(held)

        async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            """Run the tool (langchain's ``ainvoke`` calls this), keeping the call id."""
            token = _call_id.set(kwargs.get("tool_call_id"))
            held = _configurable.set((kwargs.get("config") or {}).get("configurable"))
            try:
                return await super().arun(tool_input, *args, **kwargs)
            finally:
                _call_id.reset(token)
                _configurable.reset(held)

        def _run(self, **arguments: Any) -> tuple[str, Any]:
            call_id = _call_id.get()
            reviewed = _reviewed_call(self.toolset, self.name, arguments, call_id)
            if reviewed is not None:
                from toolpacks.core.call._sync import run_sync

                return self._output(run_sync(reviewed).result)
            context = principal_context(_configurable.get())  # configurable["principal"]
            result = self.toolset.call_sync(self.name, arguments, context, call_id=call_id)
            return self._output(result)

        async def _arun(self, **arguments: Any) -> tuple[str, Any]:
            call_id = _call_id.get()
            reviewed = _reviewed_call(self.toolset, self.name, arguments, call_id)
            if reviewed is not None:
                return self._output((await reviewed).result)
            context = principal_context(_configurable.get())  # configurable["principal"]
            result = await self.toolset.call(self.name, arguments, context, call_id=call_id)
            return self._output(result)

        def _output(self, result: ToolResult) -> tuple[str, Any]:
            if result.is_error:
                raise ToolException(result.content)
            return result.content, model_value(result, self.toolset, self.name)

    return ToolpacksTool
