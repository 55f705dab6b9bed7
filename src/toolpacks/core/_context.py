"""The context injected into tools that ask for it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool knows about the call it is serving.

    A tool receives it by declaring a parameter annotated ``ToolContext`` (any name); that
    parameter never appears in the tool's input schema. Applications pass one to
    ``Tool.invoke`` or ``Toolset.call`` to say who is calling; toolpacks fills in the rest.
    """

    call_id: str = ""
    """The id of this call (the provider's tool-call id when there is one)."""
    agent_id: str | None = None
    """The agent whose toolset is making the call, if any."""
    caller_identity: str | None = None
    """Who the agent acts for (a user or service id), as the application reports it."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form data from the application, read-only by convention."""
    invocation_state: dict[str, Any] = field(default_factory=dict)
    """Mutable state shared by the calls of one agent invocation (the application's dict)."""
    tool_name: str | None = None
    """The name of the tool being run (filled in by toolpacks)."""
    cancel_event: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set when the call is cancelled or timed out; sync tools should poll it.

    Every call gets a fresh event, so a context the application reuses for several calls is
    never left cancelled by one of them."""

    @property
    def execution_id(self) -> str:
        """The call id, under the name some frameworks use."""
        return self.call_id

    @property
    def cancelled(self) -> bool:
        """Whether the call has been cancelled (or has timed out)."""
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        """Signal cancellation to the tool (idempotent)."""
        self.cancel_event.set()
