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

Install the framework with ``pip install 'toolpacks[langchain]'``; it is imported when
``as_tools`` is first called.
"""

from __future__ import annotations

import contextvars
import functools
from typing import TYPE_CHECKING, Any, Literal

from toolpacks.integrations._common import framework_missing, model_value

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from toolpacks.core._result import ToolResult
    from toolpacks.host._toolset import Toolset

__all__ = ["as_tools"]

_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolpacks_langchain_call_id", default=None
)
"""The provider's tool-call id of the call being run (langchain passes it to ``run``)."""


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
    for definition in toolset.definitions("neutral"):
        made = cls(
            name=definition["name"],
            description=definition["description"],
            args_schema=definition["input_schema"],
            toolset=toolset,
        )
        tools.append(made)
    return tools


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
            try:
                return super().run(tool_input, *args, **kwargs)
            finally:
                _call_id.reset(token)

        async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            """Run the tool (langchain's ``ainvoke`` calls this), keeping the call id."""
            token = _call_id.set(kwargs.get("tool_call_id"))
            try:
                return await super().arun(tool_input, *args, **kwargs)
            finally:
                _call_id.reset(token)

        def _run(self, **arguments: Any) -> tuple[str, Any]:
            result = self.toolset.call_sync(self.name, arguments, call_id=_call_id.get())
            return self._output(result)

        async def _arun(self, **arguments: Any) -> tuple[str, Any]:
            result = await self.toolset.call(self.name, arguments, call_id=_call_id.get())
            return self._output(result)

        def _output(self, result: ToolResult) -> tuple[str, Any]:
            if result.is_error:
                raise ToolException(result.content)
            return result.content, model_value(result, self.toolset, self.name)

    return ToolpacksTool
