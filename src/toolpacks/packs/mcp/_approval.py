"""A remote tool asking for approval mid-call: MCP elicitation answered by the host's handler.

``ElicitRouter`` ties each request to the call it belongs to; ``answer_elicitation`` answers it.

An MCP server that wants a yes before it goes on sends an elicitation request during the call
(``elicitation/create`` on 2025 protocol revisions, an ``InputRequiredResult`` on 2026-07-28
ones). toolpacks answers the requests that are yes/no questions — a form whose required
fields are all booleans (or that has none) — by asking the host's approval handler, with the
call's tool, arguments, agent and call id and the server's message as the reason. Approved:
the form is accepted with ``true`` for each required boolean. Denied, no handler, or a form
that asks for anything else (text, numbers, a URL to open): declined, and the server decides
what a declined question means for its call.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolpacks.core._context import ToolContext

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "AskApproval",
    "CallTag",
    "Elicit",
    "ElicitRouter",
    "answer_elicitation",
    "yes_content",
]

logger = logging.getLogger("toolpacks.mcp")


class AskApproval(Protocol):
    """The host's side: builds an approval request from these fields and asks its handler."""

    def __call__(
        self,
        *,
        tool: str,
        qualified_name: str,
        arguments: Mapping[str, Any],
        agent_id: str | None,
        call_id: str,
        reason: str,
    ) -> Awaitable[bool]:
        """Whether the handler approved (False when there is none, or it failed)."""


@dataclass(frozen=True, slots=True)
class CallTag:
    """The call an elicitation request belongs to."""

    server: str
    """The pack name of the MCP server."""
    tool: str
    """The tool's name."""
    qualified_name: str
    """``pack.tool``."""
    arguments: Mapping[str, Any]
    """The arguments the call was made with."""
    context: ToolContext | None
    """The call's context (agent and call id)."""


def yes_content(params: mcp_types.ElicitRequestParams) -> dict[str, Any] | None:
    """The form content that says yes, or None when the request is not a yes/no question."""
    if getattr(params, "mode", "form") != "form":
        return None
    schema = getattr(params, "requested_schema", None) or {}
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return None
    content: dict[str, Any] = {}
    for name in required:
        prop = properties.get(name)
        if not isinstance(prop, Mapping) or prop.get("type") != "boolean":
            return None
        content[str(name)] = True
    return content


async def answer_elicitation(
    ask: AskApproval | None, params: mcp_types.ElicitRequestParams, tag: CallTag
) -> mcp_types.ElicitResult:
    """Answer a server's request for input during the call ``tag`` (see the module doc)."""
    import mcp_types

    content = yes_content(params)
    if content is None:
        logger.warning(
            "MCP server %r asked for input during %s that is not a yes/no question (%s); "
            "toolpacks answers only approvals, so it is declined",
            tag.server,
            tag.qualified_name,
            getattr(params, "mode", "form"),
        )
        return mcp_types.ElicitResult(action="decline")
    if ask is None:
        return mcp_types.ElicitResult(action="decline")
    context = tag.context or ToolContext()
    approved = await ask(
        tool=tag.tool,
        qualified_name=tag.qualified_name,
        arguments=dict(tag.arguments),
        agent_id=context.agent_id,
        call_id=context.call_id,
        reason=f"the MCP server '{tag.server}' asks during the call: {params.message}",
    )
    if approved:
        return mcp_types.ElicitResult(action="accept", content=content)
    return mcp_types.ElicitResult(action="decline")


Elicit = Callable[
    ["mcp_types.ElicitRequestParams", Any], Coroutine[Any, Any, "mcp_types.ElicitResult"]
]
"""Answers a server's elicitation request made during the call tagged with the second value."""


@dataclass(slots=True)
class _InFlight:
    """A call being made: whom to ask if the server requests input during it."""

    tag: Any
    """What the caller passed to ``call_tool``."""
    loop: asyncio.AbstractEventLoop
    """The caller's event loop (where the answer is worked out)."""


_current: contextvars.ContextVar[_InFlight | None] = contextvars.ContextVar(
    "toolpacks_mcp_call", default=None
)


class ElicitRouter:
    """Ties a server's request for input to the call it belongs to, and answers it there.

    On 2026-07-28 connections the request is part of the call (the client retries the call
    with the answer), so the call is known. On older ones the request arrives on its own: it
    belongs to the one call in flight; with several in flight (or none) it is declined, since
    the answer could go to the wrong call. The answer is worked out on the caller's event
    loop, where the application's approval handler expects to run.

    Args:
        name: The server, for messages.
        elicit: Works out the answer (None: every request is declined).
    """

    def __init__(self, name: str, elicit: Elicit | None) -> None:
        self.name = name
        self.elicit = elicit
        self._calls: dict[int, _InFlight] = {}

    @contextlib.contextmanager
    def calling(self, tag: Any, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
        """Mark a call in flight (run in the task that makes it)."""
        record = _InFlight(tag, loop)
        self._calls[id(record)] = record
        token = _current.set(record)
        try:
            yield
        finally:
            _current.reset(token)
            self._calls.pop(id(record), None)

    async def __call__(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """The client's elicitation callback."""
        import mcp_types

        record = _current.get()
        if record is None and len(self._calls) == 1:
            record = next(iter(self._calls.values()))
        if self.elicit is None or record is None:
            logger.warning(
                "MCP server %r asked for input that cannot be tied to one call; it is declined",
                self.name,
            )
            return mcp_types.ElicitResult(action="decline")
        try:
            answer = asyncio.run_coroutine_threadsafe(self.elicit(params, record.tag), record.loop)
            return await asyncio.wrap_future(answer)
        except Exception:
            logger.exception("MCP server %r: answering its request for input failed", self.name)
            return mcp_types.ElicitResult(action="decline")
