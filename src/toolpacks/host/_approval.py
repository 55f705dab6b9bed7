"""Approval: calls to tools that need it wait for an application's answer."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Answer", "ApprovalHandler", "ApprovalRequest", "Approver"]

logger = logging.getLogger("toolpacks")

Answer = bool | Literal["once", "always", "deny"]
"""An approval handler's answer: ``True``/``"once"`` runs this call, ``"always"`` runs it and
every later call of the same tool (the same exposed name) in this toolset, ``False``/``"deny"``
refuses it."""

ApprovalHandler = Callable[["ApprovalRequest"], Answer | Awaitable[Answer]]
"""A sync or async callable deciding an :class:`ApprovalRequest`."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A call waiting for approval."""

    tool: str
    """The name the model called."""
    qualified_name: str
    """The tool's qualified name (``pack.tool``)."""
    arguments: Mapping[str, Any]
    """The validated arguments as JSON values (secret values masked)."""
    agent_id: str | None
    """The agent making the call."""
    call_id: str
    """The call's id."""
    reason: str = "the tool requires approval"
    """Why approval is asked (``require_approval`` or an ``authorize`` hook)."""


@dataclass(slots=True)
class Approver:
    """Asks the handler and remembers "always" answers (per toolset), each for one tool."""

    handler: ApprovalHandler | None
    """The application's handler; None denies every request."""
    always: set[str] = field(default_factory=set)
    """The tools approved for good: exposed names in a toolset (qualified names otherwise)."""

    async def ask(self, request: ApprovalRequest, tool: str | None = None) -> bool:
        """Whether the call may run; a handler that raises denies it (and is logged).

        Args:
            request: The call waiting for approval.
            tool: The tool an "always" answer covers: a toolset passes the exposed name, so
                one tool exposed under two names is approved per name, and a tool is the
                same whether called by exposed or qualified name. Defaults to the request's
                qualified name.
        """
        key = request.qualified_name if tool is None else tool
        if key in self.always:
            return True
        if self.handler is None:
            return False
        try:
            answer = self.handler(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:
            logger.exception(
                "approval handler failed for %s (call %s); the call is denied",
                request.qualified_name,
                request.call_id,
            )
            return False
        if answer == "always":
            self.always.add(key)
            return True
        return answer is True or answer == "once"
